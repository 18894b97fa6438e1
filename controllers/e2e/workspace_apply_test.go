package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

func TestWorkspaceAutoApplyAndNewRevision(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	dir := copyConfig(t, "hello")
	rev1 := s.gitRepository("infra", dir)
	created := time.Now()
	s.newWorkspace("hello", "infra", nil)

	ws := s.waitWorkspace("hello", 3*time.Minute, "applies the first revision", appliedRevision(rev1))
	// The real-node tier logs the same figure for the same config.
	t.Logf("local executor: Workspace applied %s after creation", time.Since(created).Round(time.Millisecond))
	require.NotNil(t, ws.Status.Plan)
	assert.EqualValues(t, 2, ws.Status.Plan.Add, "plan adds both terraform_data resources")
	assert.True(t, ws.Status.Plan.HasChanges)
	assert.True(t, strings.HasPrefix(ws.Status.Plan.Digest, "sha256:"), "plan digest %q", ws.Status.Plan.Digest)
	assert.Equal(t, ws.Status.Plan.ID, ws.Status.LastApplied.PlanID)
	assert.ElementsMatch(t, []string{"message", "secret_digest"}, ws.Status.Outputs, "status lists output names")
	for _, c := range []string{magosv1.ReadyCondition, magosv1.PlannedCondition, magosv1.AppliedCondition} {
		assert.True(t, conditions.IsTrue(ws, c), "%s should be True: %+v", c, conditions.Get(ws, c))
	}

	var outputs corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "hello-outputs"}, &outputs))
	assert.Equal(t, "hello", string(outputs.Data["message"]))
	assert.NotEmpty(t, outputs.Data["secret_digest"], "sensitive outputs are written to the outputs Secret")

	var state corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("hello")}, &state),
		"state lives in the Workspace's namespace")

	var plan0 corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.PlanSecretName("hello", 0)}, &plan0))
	assert.True(t, metav1.IsControlledBy(&plan0, ws) || hasOwner(&plan0, ws), "plan Secrets are owned by the Workspace")

	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "hello"}))
	require.Len(t, jobs.Items, 1, "one Job plans and applies: nothing decides on the plan")
	for _, j := range jobs.Items {
		assert.EqualValues(t, 0, *j.Spec.BackoffLimit)
		assert.NotNil(t, j.Spec.ActiveDeadlineSeconds)
		assert.NotNil(t, j.Spec.TTLSecondsAfterFinished)
		pod := j.Spec.Template.Spec
		assert.Equal(t, magosv1.RunPlanApply, j.Labels[magosv1.PhaseLabel])
		assert.Equal(t, magosv1.RunnerServiceAccountName("hello"), pod.ServiceAccountName, "the fast path runs as the apply identity")
		sc := pod.Containers[0].SecurityContext
		assert.True(t, *sc.ReadOnlyRootFilesystem && *sc.RunAsNonRoot && !*sc.AllowPrivilegeEscalation)
		assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
		assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)
	}

	// A new commit: new revision, new plan, applied.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"),
		[]byte(strings.Replace(readFile(t, filepath.Join(dir, "main.tf")), `default = "hello"`, `default = "hello again"`, 1)), 0o644))
	rev2 := s.publish("infra", dir)
	require.NotEqual(t, rev1, rev2)
	ws = s.waitWorkspace("hello", 3*time.Minute, "applies the second revision", appliedRevision(rev2))
	assert.EqualValues(t, 1, ws.Status.Plan.Add+ws.Status.Plan.Change, "only the greeting changes")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "hello-outputs"}, &outputs))
	assert.Equal(t, "hello again", string(outputs.Data["message"]))
	assert.GreaterOrEqual(t, len(ws.Status.History), 2, "history keeps the runs")
}

func hasOwner(o metav1.Object, owner metav1.Object) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
