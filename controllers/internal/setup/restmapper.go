package setup

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// NewMapper is the manager's RESTMapper: controller-runtime's dynamic
// mapper, which discovers a group when first asked for it, behind
// rememberedMappings.
func NewMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &rememberedMappings{RESTMapper: m, found: map[mappingKey]*meta.RESTMapping{}}, nil
}

// rememberedMappings keeps the mappings its RESTMapper found. The cache of
// a controller that watches some namespaces (--watch-namespaces) asks
// whether a kind is namespaced on every read, and the dynamic mapper
// answers each time by asking every group's mapper, building an error for
// each that does not know the kind: at a thousand Workspaces that was a
// seventh of what the workspace-controller allocated. A served kind keeps
// its mapping (a resource's scope cannot change), so a found mapping is
// kept; a kind not found is asked again, so one installed later is found.
type rememberedMappings struct {
	meta.RESTMapper
	mu    sync.RWMutex
	found map[mappingKey]*meta.RESTMapping
}

type mappingKey struct {
	kind     schema.GroupKind
	versions string
}

// RESTMapping is the remembered mapping of gk in versions, else the
// RESTMapper's, remembered when found.
func (m *rememberedMappings) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey{kind: gk, versions: strings.Join(versions, ",")}
	m.mu.RLock()
	mapping, ok := m.found[key]
	m.mu.RUnlock()
	if ok {
		return mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.found[key] = mapping
	m.mu.Unlock()
	return mapping, nil
}
