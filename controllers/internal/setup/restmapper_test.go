package setup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// countingMapper counts the mappings it is asked for.
type countingMapper struct {
	*meta.DefaultRESTMapper
	asked int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}

// TestRememberedMappingsAskOncePerFoundKind: a found mapping is answered
// from memory; a kind not found is asked again, so it is found once
// served.
func TestRememberedMappingsAskOncePerFoundKind(t *testing.T) {
	workspaces := schema.GroupVersionKind{Group: "magos.dev", Version: "v1alpha1", Kind: "Workspace"}
	repos := schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
	inner := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper(nil)}
	inner.Add(workspaces, meta.RESTScopeNamespace)
	m := &rememberedMappings{RESTMapper: inner, found: map[mappingKey]*meta.RESTMapping{}}

	for range 3 {
		mapping, err := m.RESTMapping(workspaces.GroupKind(), workspaces.Version)
		require.NoError(t, err)
		assert.Equal(t, meta.RESTScopeNameNamespace, mapping.Scope.Name())
	}
	assert.Equal(t, 1, inner.asked, "a found mapping is remembered")

	_, err := m.RESTMapping(repos.GroupKind(), repos.Version)
	assert.True(t, meta.IsNoMatchError(err))
	inner.Add(repos, meta.RESTScopeNamespace)
	_, err = m.RESTMapping(repos.GroupKind(), repos.Version)
	require.NoError(t, err, "a kind installed later is found")
	assert.Equal(t, 3, inner.asked)

	namespaced, err := apiutil.IsGVKNamespaced(workspaces, m)
	require.NoError(t, err)
	assert.True(t, namespaced)
	assert.Equal(t, 3, inner.asked, "the cache's question is answered from memory")
}
