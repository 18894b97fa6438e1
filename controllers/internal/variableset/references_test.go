package variableset

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
	_, ok := m.get(k, "1")
	assert.False(t, ok)

	m.put(k, found("1", "password"))
	o, ok := m.get(k, "1")
	assert.True(t, ok)
	assert.Equal(t, []string{"password"}, o.Keys)
	_, ok = m.get(k, "2")
	assert.False(t, ok, "another resourceVersion misses")

	m.forget(k)
	_, ok = m.get(k, "1")
	assert.False(t, ok)
	assert.Equal(t, 0, m.len())
}
