package variableset

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// referenceIndex indexes VariableSets by "<kind>/<name>" of every object
// they reference, so an event on a Secret or ConfigMap enqueues only the
// VariableSets (of its namespace) that use it.
const referenceIndex = ".spec.references"

func indexKey(kind, name string) string { return kind + "/" + name }

// indexReferences is the referenceIndex function.
func indexReferences(o client.Object) []string {
	vs, ok := o.(*magosv1.VariableSet)
	if !ok {
		return nil
	}
	refs := referencedObjects(&vs.Spec)
	keys := make([]string, 0, len(refs))
	for _, ref := range refs {
		keys = append(keys, indexKey(ref.Kind, ref.Name))
	}
	return keys
}

// metadataObject is an empty metadata-only object of kind (Secret or ConfigMap).
func metadataObject(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return m
}

// metadataCache is the controller's own cache of Secret and ConfigMap
// metadata. It is separate from the manager's cache so that it can drop,
// before anything is stored, what the controller does not need: annotations
// (kubectl's last-applied-configuration annotation of a Secret holds the
// Secret's data), labels, owner references and managed fields. It keeps
// name, namespace, UID and resourceVersion. GetCache makes the manager wait
// for it to sync before the controllers start.
type metadataCache struct{ cache.Cache }

// GetCache returns the cache.
func (c metadataCache) GetCache() cache.Cache { return c.Cache }

// newMetadataCache builds the metadata cache, restricted to namespaces
// unless there are none (then it lists cluster-wide). Reading a type it does not watch fails instead of
// starting a new informer, so it can never grow a cache of Secret contents.
func newMetadataCache(mgr ctrl.Manager, namespaces map[string]cache.Config) (metadataCache, error) {
	opts := cache.Options{
		HTTPClient:                  mgr.GetHTTPClient(),
		Scheme:                      mgr.GetScheme(),
		Mapper:                      mgr.GetRESTMapper(),
		DefaultTransform:            stripMetadata,
		ReaderFailOnMissingInformer: true,
		DefaultNamespaces:           namespaces,
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return metadataCache{}, fmt.Errorf("creating the Secret and ConfigMap metadata cache: %w", err)
	}
	return metadataCache{c}, nil
}

// stripMetadata keeps only the identity and resourceVersion of an object's
// metadata.
func stripMetadata(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.Annotations = nil
		m.Labels = nil
		m.ManagedFields = nil
		m.OwnerReferences = nil
		m.Finalizers = nil
	}
	return obj, nil
}

// keyMemo remembers the key names of referenced objects by resourceVersion,
// so a Secret shared by many VariableSets, or a VariableSet whose spec
// changes, is read from the apiserver once per version; concurrent lookups
// of the same object share one read. It holds key names only, never values;
// entries go when the object is deleted. Every entry is exact for its
// resourceVersion, so a stale one only costs a read.
type keyMemo struct {
	mu       sync.Mutex
	entries  map[memoKey]observedObject
	inflight map[memoKey]*keyRead
}

type memoKey struct {
	Namespace, Kind, Name string
}

// keyRead is a read in flight; done is closed when o and err are set.
type keyRead struct {
	resourceVersion string
	done            chan struct{}
	o               observedObject
	err             error
}

func newKeyMemo() *keyMemo {
	return &keyMemo{entries: map[memoKey]observedObject{}, inflight: map[memoKey]*keyRead{}}
}

// load returns the key names of object k at resourceVersion rv: from the
// memo, from a read of rv already in flight, or by calling read (whose
// result may be newer than rv). It reports whether read was called.
func (m *keyMemo) load(k memoKey, rv string, read func() (observedObject, error)) (observedObject, bool, error) {
	m.mu.Lock()
	if o, ok := m.entries[k]; ok && o.ResourceVersion == rv {
		m.mu.Unlock()
		return o, false, nil
	}
	if c, ok := m.inflight[k]; ok && c.resourceVersion == rv {
		m.mu.Unlock()
		<-c.done
		return c.o, false, c.err
	}
	c := &keyRead{resourceVersion: rv, done: make(chan struct{})}
	m.inflight[k] = c
	m.mu.Unlock()

	c.o, c.err = read()

	m.mu.Lock()
	if m.inflight[k] == c {
		delete(m.inflight, k)
	}
	if c.err == nil && c.o.Found {
		m.entries[k] = c.o
	} else {
		delete(m.entries, k)
	}
	m.mu.Unlock()
	close(c.done)
	return c.o, true, c.err
}

func (m *keyMemo) forget(k memoKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, k)
}

func (m *keyMemo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// observeReferences observes every object vs references.
func (r *Reconciler) observeReferences(ctx context.Context, vs *magosv1.VariableSet) (map[objectRef]observedObject, error) {
	refs := referencedObjects(&vs.Spec)
	objs := make(map[objectRef]observedObject, len(refs))
	for _, ref := range refs {
		o, err := r.observe(ctx, vs.Namespace, ref)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
		}
		objs[ref] = o
	}
	return objs, nil
}

// observe learns whether ref exists, its resourceVersion and its key names.
// The metadata cache says whether it exists and at which version; the key
// names come from the memo when it knows that version (or is reading it),
// or else from one uncached read whose values are dropped at once.
func (r *Reconciler) observe(ctx context.Context, namespace string, ref objectRef) (observedObject, error) {
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	mk := memoKey{Namespace: namespace, Kind: ref.Kind, Name: ref.Name}
	meta := metadataObject(ref.Kind)
	if err := r.Metadata.Get(ctx, key, meta); err != nil {
		if apierrors.IsNotFound(err) {
			r.keys.forget(mk)
			return observedObject{}, nil
		}
		return observedObject{}, err
	}
	o, read, err := r.keys.load(mk, meta.ResourceVersion, func() (observedObject, error) {
		ctrl.LoggerFrom(ctx).V(1).Info("Reading key names", "kind", ref.Kind, "object", ref.Name)
		return r.readKeys(ctx, key, ref.Kind)
	})
	if read {
		recordRead(readAPIServer)
	} else {
		recordRead(readMemo)
	}
	return o, err
}

// readKeys reads one Secret or ConfigMap from the apiserver, uncached, and
// returns its key names; it zeroes the values it received before returning.
func (r *Reconciler) readKeys(ctx context.Context, key types.NamespacedName, kind string) (observedObject, error) {
	var o observedObject
	switch kind {
	case KindSecret:
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, key, s); err != nil {
			return o, client.IgnoreNotFound(err)
		}
		o.Keys = keysOf(s.Data)
		s.Data, s.StringData = nil, nil
		o.ResourceVersion = s.ResourceVersion
	case KindConfigMap:
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, key, cm); err != nil {
			return o, client.IgnoreNotFound(err)
		}
		o.Keys = make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			o.Keys = append(o.Keys, k)
		}
		slices.Sort(o.Keys)
		o.BinaryKeys = keysOf(cm.BinaryData)
		cm.Data, cm.BinaryData = nil, nil
		o.ResourceVersion = cm.ResourceVersion
	default:
		return o, fmt.Errorf("unknown reference kind %q", kind)
	}
	o.Found = true
	return o, nil
}

// keysOf returns the sorted keys of data and zeroes its values.
func keysOf(data map[string][]byte) []string {
	keys := make([]string, 0, len(data))
	for k, v := range data {
		keys = append(keys, k)
		clear(v)
	}
	slices.Sort(keys)
	return keys
}
