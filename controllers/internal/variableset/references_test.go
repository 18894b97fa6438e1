package variableset

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStripMetadataKeepsIdentityOnly(t *testing.T) {
	m := metadataObject(KindSecret)
	m.ObjectMeta = metav1.ObjectMeta{
		Namespace: "ns", Name: "db", UID: "u", ResourceVersion: "7",
		Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"c2VjcmV0"}}`},
		Labels:          map[string]string{"app": "db"},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
		Finalizers:      []string{"f"},
	}
	out, err := stripMetadata(m)
	assert.NoError(t, err)
	assert.Equal(t, metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "u", ResourceVersion: "7"}, out.(*metav1.PartialObjectMetadata).ObjectMeta)

	other := "not metadata"
	out, err = stripMetadata(other)
	assert.NoError(t, err)
	assert.Equal(t, other, out)
}

func TestKeysOfZeroesValues(t *testing.T) {
	v1, v2 := []byte("secret-one"), []byte("two")
	keys := keysOf(map[string][]byte{"b": v1, "a": v2})
	assert.Equal(t, []string{"a", "b"}, keys)
	assert.Equal(t, make([]byte, len(v1)), v1)
	assert.Equal(t, make([]byte, len(v2)), v2)
}

func TestKeyMemo(t *testing.T) {
	m := newKeyMemo()
	k := memoKey{Namespace: "ns", Kind: KindSecret, Name: "db"}
	reads := 0
	reader := func(o observedObject, err error) func() (observedObject, error) {
		return func() (observedObject, error) {
			reads++
			return o, err
		}
	}

	o, read, err := m.load(k, "1", reader(found("1", "password"), nil))
	require.NoError(t, err)
	assert.True(t, read)
	assert.Equal(t, []string{"password"}, o.Keys)

	o, read, err = m.load(k, "1", reader(observedObject{}, errors.New("must not be called")))
	require.NoError(t, err)
	assert.False(t, read, "the same resourceVersion is served from the memo")
	assert.Equal(t, []string{"password"}, o.Keys)

	o, read, _ = m.load(k, "2", reader(found("2", "password", "user"), nil))
	assert.True(t, read, "another resourceVersion is read")
	assert.Equal(t, []string{"password", "user"}, o.Keys)

	_, _, err = m.load(k, "3", reader(observedObject{}, errors.New("forbidden")))
	require.Error(t, err)
	assert.Equal(t, 0, m.len(), "a failed read leaves no entry")

	_, _, _ = m.load(k, "4", reader(found("4"), nil))
	assert.Equal(t, 1, m.len())
	m.forget(k)
	assert.Equal(t, 0, m.len())
	assert.Equal(t, 4, reads)
}

func TestKeyMemoSharesConcurrentReads(t *testing.T) {
	m := newKeyMemo()
	k := memoKey{Namespace: "ns", Kind: KindSecret, Name: "shared"}
	release := make(chan struct{})
	var reads atomic.Int32
	read := func() (observedObject, error) {
		reads.Add(1)
		<-release
		return found("5", "token"), nil
	}
	var wg sync.WaitGroup
	results := make([]observedObject, 8)
	for i := range results {
		wg.Go(func() {
			results[i], _, _ = m.load(k, "5", read)
		})
	}
	require.Eventually(t, func() bool { return reads.Load() == 1 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), reads.Load(), "eight concurrent lookups of one version make one read")
	for _, r := range results {
		assert.Equal(t, []string{"token"}, r.Keys)
	}
}
