package planstore_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// TestLoadJSONReadsOnlyThePlanJSON: the policy gate's read gets plan.json,
// verified against the plan digest, and reads no chunk past it.
func TestLoadJSONReadsOnlyThePlanJSON(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	secrets := clientset(t).CoreV1().Secrets(env.NewNamespace(t))
	reserve(t, secrets, 4)
	planJSON := []byte(`{"format_version":"1.2","resource_changes":[]}`)
	meta, err := planstore.Store(ctx, secrets, input("plan-1", planJSON, randomBytes(t, 3*magosv1.PlanChunkBytes)))
	require.NoError(t, err)
	require.Equal(t, 4, meta.Chunks)

	var got []string
	getter := planstore.GetterFunc(func(ctx context.Context, name string) (*corev1.Secret, error) {
		got = append(got, name)
		return secrets.Get(ctx, name, metav1.GetOptions{})
	})
	p, err := planstore.LoadJSON(ctx, getter, workspace, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, planJSON, p.JSON)
	assert.Nil(t, p.Binary)
	assert.Equal(t, meta.Digest, p.Digest)
	assert.Equal(t, []string{"web-plan-00"}, got, "chunks past plan.json are not read")
}

// TestLoadJSONRefusesOversizedPlanJSON pins that plan.json bigger than the
// reader's limit is refused with ErrTooLarge before it is unpacked: here a
// 64 MiB plan.json that packs into one chunk, read with a 1 MiB limit.
func TestLoadJSONRefusesOversizedPlanJSON(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	secrets := clientset(t).CoreV1().Secrets(env.NewNamespace(t))
	reserve(t, secrets, 1)
	// 64 MiB of whitespace after the JSON: the plan is not kept here, so
	// the test's own copy is garbage before LoadJSON is measured.
	meta, err := planstore.Store(ctx, secrets, input("plan-1",
		append([]byte(`{"format_version":"1.2"}`), bytes.Repeat([]byte(" "), 64<<20)...), []byte("bin")))
	require.NoError(t, err)
	require.Equal(t, 1, meta.Chunks, "64 MiB of whitespace pack into one chunk")
	runtime.GC()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = planstore.LoadJSON(ctx, secrets, workspace, 1<<20)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, planstore.ErrTooLarge)
	assert.ErrorContains(t, err, "plan.json unpacks to")
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("LoadJSON allocated %d KiB to refuse a %d KiB chunk that unpacks to 64 MiB", allocated>>10, meta.Size>>10)
	assert.Less(t, allocated, uint64(16<<20), "the plan was not unpacked into memory")
}

// TestLoadRefusesOversizedChunks: a chunk bigger than a chunk may be is
// corrupt, whoever wrote it.
func TestLoadRefusesOversizedChunks(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	secrets := clientset(t).CoreV1().Secrets(env.NewNamespace(t))
	reserve(t, secrets, 1)
	_, err := planstore.Store(ctx, secrets, input("plan-1", []byte(`{"format_version":"1.2"}`), []byte("bin")))
	require.NoError(t, err)
	s, err := secrets.Get(ctx, "web-plan-00", metav1.GetOptions{})
	require.NoError(t, err)
	s.Data[magosv1.PlanChunkKey] = append(s.Data[magosv1.PlanChunkKey], make([]byte, magosv1.PlanChunkBytes)...)
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	require.NoError(t, err)

	_, err = planstore.Load(ctx, secrets, workspace)
	require.ErrorIs(t, err, planstore.ErrCorrupt)
	assert.ErrorContains(t, err, "more than a chunk's")
	_, err = planstore.LoadJSON(ctx, secrets, workspace, 1<<20)
	require.ErrorIs(t, err, planstore.ErrCorrupt)
}
