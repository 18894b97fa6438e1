package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

// stateOf unpacks the gzip'd state JSON of Secret name ("" when empty).
func stateOf(t *testing.T, ns, name string) string {
	t.Helper()
	var sec corev1.Secret
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &sec))
	gz := sec.Data[magosv1.StateKey]
	if len(gz) == 0 {
		return ""
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}

// A runner stopped mid-apply (its Job deleted) gets its grace period: the
// engine finishes, writes the state and releases the lock, and the
// controller waits for the Pod to end instead of recording the run as
// gone and the lock as stuck while the runner still holds it.
func TestApplyJobDeletedMidApplyReleasesTheLock(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("stopped", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Vars = []magosv1.Variable{{Name: "pause", Value: ptr.To("60")}}
	})
	ws := s.waitApplyingWithLock("stopped")
	job := ws.Status.CurrentRun.Job
	var j batchv1.Job
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: job}, &j))
	grace := j.Spec.Template.Spec.TerminationGracePeriodSeconds
	require.NotNil(t, grace)
	assert.Greater(t, time.Duration(*grace)*time.Second, magosv1.DefaultShutdownWait, "the Pod outlasts the engine's shutdown wait")
	require.NoError(t, env.Client.Delete(ctx, &j, client.PropagationPolicy(metav1.DeletePropagationBackground)))

	ws = s.waitWorkspace("stopped", 2*time.Minute, "records the stopped run", func(ws *magosv1.Workspace) bool {
		return len(ws.Status.History) > 0 && ws.Status.History[0].Job == job
	})
	assert.Nil(t, ws.Status.Lock, "no stuck lock: the stopped run released it")
	assert.False(t, lockHeld(s.ns, "stopped"))
	assert.Equal(t, magosv1.ResultFailed, ws.Status.History[0].Result)
	assert.Contains(t, stateOf(t, s.ns, magosv1.StateSecretName("stopped")), `"terraform_data"`,
		"the interrupted apply wrote the state of what it did")
}

// An apply whose state cannot be written back leaves the engine's errored
// state saved in the Secret reserved for it, reported in status; no run
// starts until someone restores the state and says so.
func TestApplyWhoseStateWriteFailsSavesErroredState(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("errored", "infra", nil)
	ws := s.waitApplyingWithLock("errored")
	job := ws.Status.CurrentRun.Job
	// The runner cannot create the state Secret again: writing it back fails.
	stateSecret := magosv1.StateSecretName("errored")
	require.NoError(t, env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: stateSecret}}))

	ws = s.waitWorkspace("errored", 2*time.Minute, "reports the state it could not write", func(ws *magosv1.Workspace) bool {
		return ws.Status.ErroredState != nil && conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	es := ws.Status.ErroredState
	assert.Equal(t, job, es.Job)
	assert.Equal(t, magosv1.ErroredStateSecretName("errored"), es.Secret)
	assert.Equal(t, stateSecret, es.StateSecret)
	assert.Equal(t, magosv1.ReasonStateNotSaved, conditions.Get(ws, magosv1.StalledCondition).Reason)
	msg := readyMessage(ws)
	assert.Contains(t, msg, es.Secret, "the message names where the state is")
	assert.Contains(t, msg, workspace.StateRestoredAnnotation+"="+job, "and how to go on")
	saved := stateOf(t, s.ns, es.Secret)
	require.Contains(t, saved, `"terraform_data"`, "the errored state holds what the apply created")
	require.Never(t, func() bool { return planJobs(t, s.ns, "errored") > 1 }, 4*time.Second, 250*time.Millisecond,
		"no run starts on the state Secret that lacks it")

	// Restore it (as the message says) and acknowledge.
	var errored corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: es.Secret}, &errored))
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: stateSecret, Labels: magosv1.StateSecretLabels("errored"), Annotations: map[string]string{"encoding": "gzip"}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{magosv1.StateKey: errored.Data[magosv1.StateKey]},
	}))
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Annotations = map[string]string{workspace.StateRestoredAnnotation: job}
	require.NoError(t, env.Client.Patch(ctx, ws, patch))
	ws = s.waitWorkspace("errored", 3*time.Minute, "plans again on the restored state and is done", appliedRevision(rev))
	assert.Nil(t, ws.Status.ErroredState)
	assert.False(t, ws.Status.Plan.HasChanges, "the restored state has what the apply created: nothing is applied twice")
	assert.Contains(t, stateOf(t, s.ns, stateSecret), `"terraform_data"`)
}
