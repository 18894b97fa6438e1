package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// bombJSONBytes is what the crafted plan chunk unpacks to: deflate packs a
// run of one byte about 1000:1, so 700 MiB fit in one 768 KiB chunk.
const bombJSONBytes = 700 << 20

// TestPlanBombFailsOnlyItsWorkspace pins that a plan chunk crafted to
// unpack to hundreds of MiB neither crashes nor bloats the shared
// controller: the policy gate refuses it before unpacking, that Workspace
// fails closed with a clear reason, and another Workspace keeps
// reconciling.
func TestPlanBombFailsOnlyItsWorkspace(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	otherDir := copyConfig(t, "hello")
	s.gitRepository("other", otherDir)
	label := rand.String(8)
	policy := validatingPolicy(t, "v1", label, "Deny", allowsGreeting, "only terraform_data")
	s.newWorkspace("bomb", "infra", func(ws *magosv1.Workspace) {
		selecting(label)(ws)
		ws.Spec.Approval = magosv1.ApprovalManual
	})
	s.newWorkspace("bystander", "other", nil)
	ws := s.waitWorkspace("bomb", 3*time.Minute, "passes the gate and waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})

	// Chunk 0 replaced as the Workspace's config code could: same plan ID and
	// digest, consistent chunk count and checksum, 700 MiB of plan.json.
	chunk := bombChunk(t)
	require.LessOrEqual(t, len(chunk), magosv1.PlanChunkBytes)
	sum := sha256.Sum256(chunk)
	secrets := planSecrets(t, s.ns)
	_, err := secrets.Update(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: magosv1.PlanSecretName("bomb", 0), Namespace: s.ns,
			Annotations: map[string]string{
				magosv1.PlanIDAnnotation:     ws.Status.Plan.ID,
				magosv1.PlanDigestAnnotation: ws.Status.Plan.Digest,
				magosv1.PlanSHA256Annotation: "sha256:" + hex.EncodeToString(sum[:]),
				magosv1.PlanChunksAnnotation: strconv.Itoa(1),
			},
		},
		Type: magosv1.PlanSecretType,
		Data: map[string][]byte{magosv1.PlanChunkKey: chunk},
	}, metav1.UpdateOptions{})
	require.NoError(t, err)

	// A policy change makes the gate read the plan again.
	peak := watchHeap(t)
	setPolicyValidation(t, policy, allowsGreeting, "still only terraform_data")
	ws = s.waitWorkspace("bomb", 2*time.Minute, "fails closed", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseFailed
	})
	grown := peak()
	t.Logf("controller heap grew by at most %d MiB while the gate handled a chunk of %d KiB that unpacks to %d MiB",
		grown>>20, len(chunk)>>10, bombJSONBytes>>20)
	assert.Less(t, grown, uint64(128<<20), "the plan was not unpacked into memory")
	c := conditions.Get(ws, magosv1.PolicyPassedCondition)
	require.NotNil(t, c)
	assert.Equal(t, magosv1.ReasonPlanTooLarge, c.Reason)
	assert.Contains(t, c.Message, "the stored plan is too large to evaluate")
	assert.True(t, conditions.IsTrue(ws, magosv1.StalledCondition), "a retry cannot fix the same plan")
	assert.Equal(t, 0, applyJobs(t, s.ns, "bomb"))

	// The controller still reconciles other Workspaces.
	main := filepath.Join(otherDir, "main.tf")
	require.NoError(t, os.WriteFile(main, []byte(strings.Replace(readFile(t, main), `default = "hello"`, `default = "bonjour"`, 1)), 0o644))
	rev := s.publish("other", otherDir)
	s.waitWorkspace("bystander", 3*time.Minute, "applies its new revision", appliedRevision(rev))
}

// bombChunk is gzip(tar{plan.json: bombJSONBytes spaces}).
func bombChunk(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: magosv1.PlanJSONFile, Typeflag: tar.TypeReg, Mode: 0o600, Size: bombJSONBytes}))
	_, err = io.CopyN(tw, spaces{}, bombJSONBytes)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// spaces reads as endless JSON whitespace.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// watchHeap samples this process's heap (the in-process controllers) until
// the returned function is called, which returns the most it grew above
// the live heap at the start.
func watchHeap(t *testing.T) func() uint64 {
	t.Helper()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		peak := base
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- peak - base
				return
			case <-tick.C:
				metrics.Read(sample)
				peak = max(peak, sample[0].Value.Uint64())
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}
