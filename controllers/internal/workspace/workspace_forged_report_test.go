package workspace_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A run's result is read from the Pods its Job controls. A Pod that anyone
// able to create Pods in the namespace labels with the run's job-name, and
// ends with a forged report, does not speak for the run: here it claims a
// successful plan while the real run failed.
func TestAForgedPodDoesNotReportForARun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, time.Minute)
	f.newWorkspace("forged", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	plan := waitJob(t, f.ns, "forged", magosv1.RunPlan)

	forged, err := json.Marshal(magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, PlanDigest: "sha256:forged", Add: 1, HasChanges: true})
	require.NoError(t, err)
	pod := &corev1.Pod{
		// Named to be listed before the Job's own Pod.
		ObjectMeta: metav1.ObjectMeta{Name: "a-forged-report", Namespace: f.ns, Labels: map[string]string{"job-name": plan.Name}},
		Spec:       corev1.PodSpec{NodeName: "synthetic-node", Containers: []corev1.Container{{Name: "runner", Image: "x"}}},
	}
	require.NoError(t, env.Client.Create(ctx, pod))
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", Image: "x",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: string(forged), StartedAt: now, FinishedAt: now}},
	}}}
	require.NoError(t, env.Client.Status().Update(ctx, pod))

	report(t, plan, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonInitFailed, Message: "init failed"})
	ws := f.waitWorkspace("forged", "records the failed plan", func(ws *magosv1.Workspace) bool { return len(ws.Status.History) > 0 })
	assert.Equal(t, magosv1.ResultFailed, ws.Status.History[0].Result)
	assert.Equal(t, magosv1.ReasonInitFailed, ws.Status.History[0].Reason)
	assert.Nil(t, ws.Status.Plan, "no plan was recorded")
}
