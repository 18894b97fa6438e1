package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// TestCLIPlanPolicyTreeLogs: plan show renders the stored plan from its
// plan JSON with its verdict, its JSON feeds policy test, tree shows the Project, and logs
// says where a run's result is once its Pod is gone.
func TestCLIPlanPolicyTreeLogs(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: s.ns}}))
	s.newWorkspace("hello", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Approval = magosv1.ApprovalManual
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "app"}
	})
	ws := s.waitWorkspace("hello", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	planID := ws.Status.Plan.ID

	r := s.magos("plan", "show", "hello")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Plan "+planID+" of Workspace hello")
	assert.Contains(t, r.stdout, "Digest "+ws.Status.Plan.Digest+" (stored bundle "+ws.Status.Plan.BundleDigest+", verified)")
	assert.NotEmpty(t, ws.Status.Plan.BundleDigest, "the controller recorded the stored bundle's digest")
	assert.Contains(t, r.stdout, "Rendered by kubectl magos from the plan JSON the digest covers")
	assert.Contains(t, r.stdout, "terraform_data.greeting will be created", "rendered from the plan JSON")
	assert.NotContains(t, r.stdout, "NOT VERIFIED", "the run's own text is not shown")
	assert.Contains(t, r.stdout, "Policy: Passed")

	r = s.magos("plan", "show", "hello", "--json")
	require.Equal(t, 0, r.code, "%s", r)
	var plan struct {
		ResourceChanges []struct{ Address string } `json:"resource_changes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &plan))
	require.NotEmpty(t, plan.ResourceChanges)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(planFile, []byte(r.stdout), 0o600))

	r = s.magos("policy", "test", planFile, "--policy", filepath.Join(env.Root, "controllers", "internal", "policyengine", "testdata", "cookbook", "forbidden-resource-types.yaml"))
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stdout, "FAILED")
	assert.Contains(t, r.stdout, "terraform_data.greeting")

	r = s.magos("tree", "app")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Project app:")
	assert.Contains(t, r.stdout, "Workspace hello: AwaitingApproval")
	r = s.magos("tree", "nope")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, `Project "nope" not found`)

	job := ws.Status.History[0].Job
	require.NoError(t, env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(s.ns), client.MatchingLabels{"job-name": job}))
	require.Eventually(t, func() bool {
		var pods corev1.PodList
		return env.Client.List(ctx, &pods, client.InNamespace(s.ns), client.MatchingLabels{"job-name": job}) == nil && len(pods.Items) == 0
	}, 30*time.Second, 250*time.Millisecond)
	r = s.magos("logs", "hello")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "the Pod of run "+job+" is gone")
	assert.Contains(t, r.stderr, "still in status.history: plan Succeeded")
	// A Pod that only carries the Job's label is not the run's.
	require.NoError(t, env.Client.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "impostor", Namespace: s.ns, Labels: map[string]string{"job-name": job}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "runner", Image: "impostor"}}},
	}))
	r = s.magos("logs", "hello")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "the Pod of run "+job+" is gone", "a Pod labelled like the run's is not shown as its output")
	r = s.magos("logs", "hello", "--run", "3")
	assert.Equal(t, 2, r.code, "%s", r)

	// What the approver reads is the plan the controller recorded: a bundle
	// rewritten with the same plan ID and JSON but another rendering (every
	// checksum of its own recomputed, as any writer of the plan Secrets
	// can) is refused, in both views.
	secrets := planSecrets(t, s.ns)
	recorded, err := planstore.Load(ctx, secrets, "hello")
	require.NoError(t, err)
	_, err = planstore.Store(ctx, secrets, planstore.Input{
		Workspace: "hello", Owner: planstore.WorkspaceOwner("hello", string(ws.UID)), ID: recorded.ID,
		JSON: recorded.JSON, Binary: recorded.Binary, Text: []byte("No changes. Your infrastructure matches the configuration.\n"),
	})
	require.NoError(t, err)
	for _, args := range [][]string{{"plan", "show", "hello"}, {"plan", "show", "hello", "--json"}} {
		r = s.magos(args...)
		assert.Equal(t, 1, r.code, "%s", r)
		assert.Contains(t, r.stderr, "is not the one recorded in its status", "%v", args)
		assert.Contains(t, r.stderr, "do not approve it", "%v", args)
		assert.NotContains(t, r.stdout, "No changes", "%v", args)
	}
}
