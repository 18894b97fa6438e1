package planstore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

const workspace = "web"

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func input(id string, planJSON, planBin []byte) planstore.Input {
	return planstore.Input{
		Workspace: workspace,
		Owner:     planstore.WorkspaceOwner(workspace, "2c7a3c86-2f0f-4d43-9c1e-0d8a9f0c1a11"),
		ID:        id,
		JSON:      planJSON,
		Binary:    planBin,
	}
}

// reserve creates chunk Secrets 0..n-1 empty, as the workspace-controller
// does before a plan.
func reserve(t testing.TB, secrets corev1Secrets, n int) {
	t.Helper()
	for i := range n {
		_, err := secrets.Create(context.Background(), planstore.EmptyChunk(workspace, i, input("", nil, nil).Owner), metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// chunkNames lists the plan Secrets that exist, by probing names in order.
func chunkNames(t *testing.T, secrets planstore.Getter) []string {
	t.Helper()
	var names []string
	for i := 0; i < magosv1.MaxPlanChunks; i++ {
		_, err := secrets.Get(context.Background(), magosv1.PlanSecretName(workspace, i), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		require.NoError(t, err)
		names = append(names, magosv1.PlanSecretName(workspace, i))
	}
	return names
}

func TestStoreAndLoadMultiChunkPlan(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	secrets := clientset(t).CoreV1().Secrets(ns)
	reserve(t, secrets, 4)

	// Random bytes do not compress: 2.5 MB need four chunks of 768 KiB.
	bigJSON := []byte(`{"format_version":"1.2","resource_changes":[]}`)
	bigBin := randomBytes(t, 2500*1000)
	meta, err := planstore.Store(ctx, secrets, input("plan-1", bigJSON, bigBin))
	require.NoError(t, err)
	assert.Equal(t, 4, meta.Chunks)
	assert.Equal(t, planstore.Digest(bigJSON), meta.Digest)
	assert.Equal(t, []string{"web-plan-00", "web-plan-01", "web-plan-02", "web-plan-03"}, chunkNames(t, secrets))

	first, err := secrets.Get(ctx, "web-plan-00", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.SecretType(magosv1.PlanSecretType), first.Type)
	assert.Equal(t, map[string]string{
		magosv1.WorkspaceLabel: workspace, magosv1.PlanIDLabel: "plan-1", magosv1.ManagedByLabel: magosv1.ManagedByValue,
	}, first.Labels)
	assert.Equal(t, "4", first.Annotations[magosv1.PlanChunksAnnotation])
	assert.Equal(t, meta.SHA256, first.Annotations[magosv1.PlanSHA256Annotation])
	assert.Equal(t, meta.Digest, first.Annotations[magosv1.PlanDigestAnnotation])
	assert.Equal(t, "plan-1", first.Annotations[magosv1.PlanIDAnnotation])
	require.Len(t, first.OwnerReferences, 1)
	assert.Equal(t, "magos.dev/v1alpha1", first.OwnerReferences[0].APIVersion)
	assert.Equal(t, "Workspace", first.OwnerReferences[0].Kind)
	assert.Equal(t, workspace, first.OwnerReferences[0].Name)
	assert.Len(t, first.Data[magosv1.PlanChunkKey], magosv1.PlanChunkBytes)

	got, err := planstore.Load(ctx, secrets, workspace)
	require.NoError(t, err)
	assert.Equal(t, bigJSON, got.JSON)
	assert.Equal(t, bigBin, got.Binary)
	assert.Equal(t, meta, got.Meta)

	stat, err := planstore.Stat(ctx, secrets, workspace)
	require.NoError(t, err)
	assert.Equal(t, "plan-1", stat.ID)
	assert.Equal(t, meta.Digest, stat.Digest)

	// A smaller plan replaces it and the leftover chunks are emptied (the
	// runner could not create them again).
	smallJSON := []byte(`{"format_version":"1.2"}`)
	_, err = planstore.Store(ctx, secrets, input("plan-2", smallJSON, []byte("tiny")))
	require.NoError(t, err)
	assert.Len(t, chunkNames(t, secrets), 4)
	for i := 1; i < 4; i++ {
		s, err := secrets.Get(ctx, magosv1.PlanSecretName(workspace, i), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Empty(t, s.Data, "leftover chunk %d", i)
		assert.NotContains(t, s.Labels, magosv1.PlanIDLabel)
	}
	got, err = planstore.Load(ctx, secrets, workspace)
	require.NoError(t, err)
	assert.Equal(t, "plan-2", got.ID)
	assert.Equal(t, smallJSON, got.JSON)
	assert.Equal(t, []byte("tiny"), got.Binary)
}

// The runner may not create Secrets: a plan that needs more chunk Secrets
// than are reserved writes nothing and says how many it needs.
func TestStoreNeedsReservedChunks(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	secrets := clientset(t).CoreV1().Secrets(env.NewNamespace(t))
	planJSON := []byte(`{"format_version":"1.2"}`)

	_, err := planstore.Store(ctx, secrets, input("plan-0", planJSON, []byte("bin")))
	var notReserved *planstore.NotReservedError
	require.ErrorAs(t, err, &notReserved)
	assert.Equal(t, 1, notReserved.Chunks)

	reserve(t, secrets, 2)
	_, err = planstore.Store(ctx, secrets, input("plan-1", planJSON, []byte("bin")))
	require.NoError(t, err)
	// Random bytes do not compress: three chunks.
	_, err = planstore.Store(ctx, secrets, input("plan-2", planJSON, randomBytes(t, 2*magosv1.PlanChunkBytes)))
	require.ErrorIs(t, err, planstore.ErrNotReserved)
	require.ErrorAs(t, err, &notReserved)
	assert.Equal(t, 3, notReserved.Chunks)
	assert.ErrorContains(t, err, "the plan needs 3 plan Secrets")
	got, err := planstore.Load(ctx, secrets, workspace)
	require.NoError(t, err)
	assert.Equal(t, "plan-1", got.ID, "the stored plan is left as it was")
}

// A chunk Secret reserved but never written holds no plan.
func TestLoadOfReservedChunksIsNotFound(t *testing.T) {
	env.Require(t)
	secrets := clientset(t).CoreV1().Secrets(env.NewNamespace(t))
	reserve(t, secrets, 1)
	_, err := planstore.Load(context.Background(), secrets, workspace)
	require.ErrorIs(t, err, planstore.ErrNotFound)
}

func TestLoadThroughGetterFunc(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	secrets := clientset(t).CoreV1().Secrets(ns)
	reserve(t, secrets, 1)
	_, err := planstore.Store(ctx, secrets, input("plan-1", []byte(`{"format_version":"1.2"}`), []byte("bin")))
	require.NoError(t, err)

	// The way a controller-runtime client would be wrapped.
	calls := 0
	getter := planstore.GetterFunc(func(ctx context.Context, name string) (*corev1.Secret, error) {
		calls++
		return secrets.Get(ctx, name, metav1.GetOptions{})
	})
	got, err := planstore.Load(ctx, getter, workspace)
	require.NoError(t, err)
	assert.Equal(t, "plan-1", got.ID)
	assert.Equal(t, 1, calls)
}

func TestLoadRefusesBrokenPlans(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	bin := func(t *testing.T) []byte { return randomBytes(t, 2*magosv1.PlanChunkBytes) } // three chunks
	planJSON := []byte(`{"format_version":"1.2"}`)
	tests := []struct {
		name    string
		breakIt func(t *testing.T, secrets corev1Secrets)
		wantIs  error
		wantErr string
	}{
		{
			name:    "nothing stored",
			breakIt: func(t *testing.T, s corev1Secrets) { deleteChunks(t, s, 0, 1, 2) },
			wantIs:  planstore.ErrNotFound,
		},
		{
			name:    "a missing chunk",
			breakIt: func(t *testing.T, s corev1Secrets) { deleteChunks(t, s, 1) },
			wantIs:  planstore.ErrCorrupt, wantErr: "chunk 1 of 3 is missing",
		},
		{
			name: "a changed chunk",
			breakIt: func(t *testing.T, s corev1Secrets) {
				editChunk(t, s, 2, func(sec *corev1.Secret) { sec.Data[magosv1.PlanChunkKey][10] ^= 0xff })
			},
			wantIs: planstore.ErrCorrupt, wantErr: "the chunks have sha256:",
		},
		{
			name: "a chunk of another plan",
			breakIt: func(t *testing.T, s corev1Secrets) {
				editChunk(t, s, 1, func(sec *corev1.Secret) { sec.Annotations[magosv1.PlanIDAnnotation] = "plan-0" })
			},
			wantIs: planstore.ErrCorrupt, wantErr: "does not belong to plan plan-1",
		},
		{
			name: "a wrong chunk count",
			breakIt: func(t *testing.T, s corev1Secrets) {
				editChunk(t, s, 0, func(sec *corev1.Secret) {
					sec.Annotations[magosv1.PlanChunksAnnotation] = strconv.Itoa(magosv1.MaxPlanChunks + 1)
				})
			},
			wantIs: planstore.ErrCorrupt, wantErr: "no valid magos.dev/chunks annotation",
		},
		{
			name: "a plan digest that does not match plan.json",
			breakIt: func(t *testing.T, s corev1Secrets) {
				editChunk(t, s, 0, func(sec *corev1.Secret) {
					sec.Annotations[magosv1.PlanDigestAnnotation] = planstore.Digest([]byte("other"))
				})
			},
			wantIs: planstore.ErrCorrupt, wantErr: "plan.json has digest",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			secrets := clientset(t).CoreV1().Secrets(ns)
			reserve(t, secrets, 3)
			meta, err := planstore.Store(ctx, secrets, input("plan-1", planJSON, bin(t)))
			require.NoError(t, err)
			require.Equal(t, 3, meta.Chunks)
			tt.breakIt(t, secrets)
			_, err = planstore.Load(ctx, secrets, workspace)
			require.ErrorIs(t, err, tt.wantIs)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// corev1Secrets is the part of a SecretInterface the tests use.
type corev1Secrets interface {
	planstore.Writer
	Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

func deleteChunks(t *testing.T, s corev1Secrets, chunks ...int) {
	t.Helper()
	for _, i := range chunks {
		require.NoError(t, s.Delete(context.Background(), magosv1.PlanSecretName(workspace, i), metav1.DeleteOptions{}))
	}
}

func editChunk(t *testing.T, s corev1Secrets, i int, edit func(*corev1.Secret)) {
	t.Helper()
	sec, err := s.Get(context.Background(), magosv1.PlanSecretName(workspace, i), metav1.GetOptions{})
	require.NoError(t, err)
	edit(sec)
	_, err = s.Update(context.Background(), sec, metav1.UpdateOptions{})
	require.NoError(t, err, fmt.Sprintf("editing chunk %d", i))
}
