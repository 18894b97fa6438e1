package planstore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// refusingWriter fails the test on any write.
type refusingWriter struct{ t *testing.T }

func (w refusingWriter) Get(context.Context, string, metav1.GetOptions) (*corev1.Secret, error) {
	w.t.Fatal("Store read a chunk for a plan it should refuse")
	return nil, nil
}

func (w refusingWriter) Update(context.Context, *corev1.Secret, metav1.UpdateOptions) (*corev1.Secret, error) {
	w.t.Fatal("Store wrote a chunk of a plan it should refuse")
	return nil, nil
}

func TestStoreRefusesPlansAboveTheChunkLimit(t *testing.T) {
	// Incompressible bytes one chunk more than the limit allows.
	bin := make([]byte, (magosv1.MaxPlanChunks+1)*magosv1.PlanChunkBytes)
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(bin)
	in := planstore.Input{
		Workspace: "web",
		Owner:     planstore.WorkspaceOwner("web", "2c7a3c86-2f0f-4d43-9c1e-0d8a9f0c1a11"),
		ID:        "plan-1",
		JSON:      []byte(`{}`),
		Binary:    bin,
	}
	_, err := planstore.Store(context.Background(), refusingWriter{t}, in)
	require.ErrorIs(t, err, planstore.ErrTooLarge)
}
