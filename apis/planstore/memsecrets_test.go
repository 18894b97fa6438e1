package planstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// memSecrets is a Writer over Secrets held in memory, counting the reads
// by name; an update of a missing Secret is NotFound, as on an apiserver.
type memSecrets struct {
	secrets map[string]*corev1.Secret
	reads   []string
}

// reservedSecrets returns memSecrets holding n reserved chunks of the
// Workspace's plan, as the workspace-controller creates them.
func reservedSecrets(workspace string, n int) *memSecrets {
	m := &memSecrets{secrets: map[string]*corev1.Secret{}}
	owner := WorkspaceOwner(workspace, "2c7a3c86-2f0f-4d43-9c1e-0d8a9f0c1a11")
	for i := range n {
		s := EmptyChunk(workspace, i, owner)
		m.secrets[s.Name] = s
	}
	return m
}

func (m *memSecrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	m.reads = append(m.reads, name)
	s, ok := m.secrets[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}

func (m *memSecrets) Update(_ context.Context, s *corev1.Secret, _ metav1.UpdateOptions) (*corev1.Secret, error) {
	if _, ok := m.secrets[s.Name]; !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, s.Name)
	}
	m.secrets[s.Name] = s.DeepCopy()
	return s, nil
}

// putBundle writes stream as the whole stored plan of in's Workspace in one
// chunk, with consistent checksums: a bundle any Secret writer could forge,
// bypassing Store's checks.
func (m *memSecrets) putBundle(t *testing.T, in Input, stream []byte) {
	t.Helper()
	require.LessOrEqual(t, len(stream), magosv1.PlanChunkBytes, "the forged bundle fits one chunk")
	meta := Meta{ID: in.ID, Digest: Digest(in.JSON), SHA256: Digest(stream), Chunks: 1}
	s := chunkSecret(in, meta, 0, stream)
	m.secrets[s.Name] = s
}
