package realnode

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// Faults on the real node. Each test starts a slow apply (testdata/slow,
// its provisioner sleeping), injects one fault while the apply's runner
// runs, and checks what must hold whatever the fault: the Workspace says
// what happened and reaches the revision applied, no plan is applied
// twice, and the state and outputs are there. docs/operations.md "What
// survives what" lists the outcomes.

// faultPause is how long the slow apply's provisioner sleeps: long enough
// to inject a fault while it runs, and for the apply to outlast a restart
// of the apiserver (about 20 s) that starts 8 s into the run (slowApply).
const faultPause = "40"

// slowApply creates Workspace name in a new namespace from testdata/slow
// and returns once its apply's runner container runs: the namespace, the
// revision and the apply's Pod.
func slowApply(t *testing.T, name string) (ns, rev string, pod corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	ns = newNamespace(t)
	rev = newGitSource(t, ns).Publish(ctx, "infra", "./testdata/slow")
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Runner:    &magosv1.RunnerSpec{Image: slowRunnerImage},
			Terraform: &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Image: "ghcr.io/magos-dev/magos-engine-opentofu:{version}"},
			Vars:      []magosv1.Variable{{Name: "pause", Value: ptr.To(faultPause)}},
			Outputs:   &magosv1.OutputsSpec{SecretName: name + "-outputs"},
		},
	}))
	ws := waitWorkspace(t, ns, name, 5*time.Minute, "starts applying", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseApplying && ws.Status.CurrentRun != nil
	})
	pod = runningRunner(t, ns, ws.Status.CurrentRun.Job)
	// Give the engine time to reach the provisioner: the Workspace takes
	// the fast path, so the run plans first.
	time.Sleep(8 * time.Second)
	return ns, rev, pod
}

// runningRunner waits for the Pod of job whose runner container runs.
func runningRunner(t *testing.T, ns, job string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	require.Eventually(t, func() bool {
		var pods corev1.PodList
		require.NoError(t, k8s.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"batch.kubernetes.io/job-name": job}))
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.Name == "runner" && c.State.Running != nil {
					pod = p
					return true
				}
			}
		}
		return false
	}, 2*time.Minute, 250*time.Millisecond, "the runner container of Job %s never ran", job)
	return pod
}

// survives checks what must hold after a fault: the Workspace reaches
// rev applied (recovering, as a user would after reading its message,
// from a state lock the fault left held or from state the engine could
// not write back), no plan is applied by two Jobs, and the state and the
// output are written. It returns the Workspace.
func survives(t *testing.T, ns, name, rev string) *magosv1.Workspace {
	t.Helper()
	ctx := context.Background()
	stuck := func(ws *magosv1.Workspace) bool {
		return ws.Status.CurrentRun == nil && ws.Status.Phase == magosv1.PhaseFailed && (ws.Status.Lock != nil || ws.Status.ErroredState != nil)
	}
	ws := waitWorkspace(t, ns, name, 8*time.Minute, "applies, or stalls on what the fault left", func(ws *magosv1.Workspace) bool {
		return applied(rev)(ws) || stuck(ws)
	})
	if !applied(rev)(ws) {
		ready := readyCondition(ws)
		patch := client.MergeFrom(ws.DeepCopy())
		if lock := ws.Status.Lock; lock != nil {
			t.Logf("the fault left the state lock held by %s: %s", lock.Holder, ready.Message)
			assert.Contains(t, ready.Message, "magos.dev/unlock", "the message says how to unlock")
			ws.Annotations = map[string]string{magosv1.UnlockAnnotation: lock.Holder}
		} else {
			es := ws.Status.ErroredState
			t.Logf("the fault left state the engine could not write back in %s: %s", es.Secret, ready.Message)
			require.NotEmpty(t, es.Secret, "the state was saved")
			restoreState(t, ns, es.Secret, es.StateSecret)
			ws.Annotations = map[string]string{magosv1.StateRestoredAnnotation: es.Job}
		}
		require.NoError(t, k8s.Patch(ctx, ws, patch))
		ws = waitWorkspace(t, ns, name, 5*time.Minute, "applies once recovered", applied(rev))
	}
	assert.Nil(t, ws.Status.Lock, "the state lock is released")

	var jobs batchv1.JobList
	require.NoError(t, k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{magosv1.WorkspaceLabel: name}))
	appliers := map[string][]string{}
	for _, j := range jobs.Items {
		if phase := j.Labels[magosv1.PhaseLabel]; phase != magosv1.RunApply && phase != magosv1.RunPlanApply {
			continue
		}
		plan := magosv1.ParseRunAnnotations(j.Annotations).PlanID
		appliers[plan] = append(appliers[plan], j.Name)
	}
	for plan, js := range appliers {
		assert.Len(t, js, 1, "plan %s is applied by one Job, not %v", plan, js)
	}

	var state corev1.Secret
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: magosv1.StateSecretName(name)}, &state))
	assert.NotEmpty(t, state.Data[magosv1.StateKey], "the state is kept")
	assertOutput(t, ns, name+"-outputs", "done", "slow")
	return ws
}

// restoreState copies the state saved in Secret errored into the state
// Secret, as docs/workspaces.md tells a user to.
func restoreState(t *testing.T, ns, errored, stateSecret string) {
	t.Helper()
	ctx := context.Background()
	var saved, state corev1.Secret
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: errored}, &saved))
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: stateSecret}, &state))
	require.NotEmpty(t, saved.Data[magosv1.StateKey])
	patch := client.MergeFrom(state.DeepCopy())
	if state.Data == nil {
		state.Data = map[string][]byte{}
	}
	state.Data[magosv1.StateKey] = saved.Data[magosv1.StateKey]
	require.NoError(t, k8s.Patch(ctx, &state, patch))
}

// lastRun is the Workspace's history entry of Job job, if any.
func lastRun(ws *magosv1.Workspace, job string) *magosv1.RunStatus {
	for i := range ws.Status.History {
		if ws.Status.History[i].Job == job {
			return &ws.Status.History[i]
		}
	}
	return nil
}

// TestFaultControllerDeletedMidApply: the workspace-controller's Pod
// deleted while an apply runs; its replacement takes the leader Lease,
// adopts the running Job and records its result. The apply is neither
// lost nor started again.
func TestFaultControllerDeletedMidApply(t *testing.T) {
	requireMagos(t)
	ns, rev, pod := slowApply(t, "ctl")
	job := pod.Labels["batch.kubernetes.io/job-name"]
	deleteWorkspaceController(t)
	t.Logf("deleted the workspace-controller mid-apply of Job %s", job)

	ws := survives(t, ns, "ctl", rev)
	run := lastRun(ws, job)
	require.NotNil(t, run, "the new controller recorded the adopted Job")
	assert.Equal(t, magosv1.ResultSucceeded, run.Result, "the apply that ran through the fault succeeded")
	assert.Equal(t, run.PlanID, ws.Status.LastApplied.PlanID, "and it is the applied plan")
}

// TestFaultRunnerKilledMidApply: the runner container killed with
// SIGKILL through the runtime, as an OOM kill would end it: no chance to
// save state or release the lock. The Job fails, the Workspace says so,
// and the run is retried from a new plan once the lock is released.
func TestFaultRunnerKilledMidApply(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns, rev, pod := slowApply(t, "killed")
	job := pod.Labels["batch.kubernetes.io/job-name"]
	var id string
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == "runner" {
			id = c.ContainerID
		}
	}
	require.NoError(t, node.KillContainer(ctx, id))
	t.Logf("killed the runner container of Job %s", job)

	failed := waitWorkspace(t, ns, "killed", 3*time.Minute, "reports the killed apply", func(ws *magosv1.Workspace) bool {
		r := lastRun(ws, job)
		return r != nil && r.Result != magosv1.ResultRunning
	})
	run := lastRun(failed, job)
	assert.NotEqual(t, magosv1.ResultSucceeded, run.Result)
	t.Logf("the killed run: %s, %s: %s", run.Result, run.Reason, run.Message)
	survives(t, ns, "killed", rev)
}

// TestFaultRunnerOutOfMemory: the apply outgrows the runner's memory
// limit (its provisioner holds 1 GiB under a 256 MiB limit) and the kernel
// kills what it must. The run fails as OOMKilled, saying so, and once the
// configuration needs less the Workspace applies, the state intact.
func TestFaultRunnerOutOfMemory(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rev := newGitSource(t, ns).Publish(ctx, "infra", "./testdata/slow")
	const name = "hungry"
	limits := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Runner: &magosv1.RunnerSpec{Image: slowRunnerImage,
				Resources: &corev1.ResourceRequirements{Requests: limits, Limits: limits}},
			Terraform: &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Image: "ghcr.io/magos-dev/magos-engine-opentofu:{version}"},
			Vars:      []magosv1.Variable{{Name: "pause", Value: ptr.To("2")}, {Name: "hold_mib", Value: ptr.To("1024")}},
			Outputs:   &magosv1.OutputsSpec{SecretName: name + "-outputs"},
		},
	}))
	var run *magosv1.RunStatus
	ws := waitWorkspace(t, ns, name, 5*time.Minute, "reports the apply the kernel stopped", func(ws *magosv1.Workspace) bool {
		for i := range ws.Status.History {
			if r := &ws.Status.History[i]; (r.Phase == magosv1.RunApply || r.Phase == magosv1.RunPlanApply) && r.Result == magosv1.ResultFailed {
				run = r
				return true
			}
		}
		return false
	})
	t.Logf("the apply out of memory: %s: %s", run.Reason, run.Message)
	assert.Equal(t, "OOMKilled", run.Reason, "the run says what stopped it")
	assert.Nil(t, ws.Status.LastApplied, "nothing is reported applied")

	// The configuration is made to need less; the Workspace recovers.
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(ws), ws))
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Spec.Vars = []magosv1.Variable{{Name: "pause", Value: ptr.To("2")}, {Name: "hold_mib", Value: ptr.To("0")}}
	require.NoError(t, k8s.Patch(ctx, ws, patch))
	survives(t, ns, name, rev)
}

// TestFaultRunnerEvictedMidApply: the runner Pod evicted through the
// Eviction API (a drain). The apply's Job fails at once (its
// podFailurePolicy fails the Job on a disruption rather than start the
// apply in a new Pod), and what follows is a new plan, never a second
// apply of the evicted one's plan.
func TestFaultRunnerEvictedMidApply(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns, rev, pod := slowApply(t, "evicted")
	job := pod.Labels["batch.kubernetes.io/job-name"]
	require.NoError(t, k8s.SubResource("eviction").Create(ctx, &pod, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns},
	}))
	t.Logf("evicted runner Pod %s of Job %s", pod.Name, job)

	ws := survives(t, ns, "evicted", rev)
	run := lastRun(ws, job)
	require.NotNil(t, run)
	assert.NotEqual(t, magosv1.ResultSucceeded, run.Result, "the evicted apply is not reported as applied")
	assert.NotEqual(t, run.PlanID, ws.Status.LastApplied.PlanID, "the revision was applied from a new plan")
}

// TestFaultNodeProgramsRestartedMidApply: containerd, the kubelet and the
// apiserver each restarted while an apply runs. Containers outlive
// containerd and the kubelet: the apply that was running completes and is
// the one recorded as applied. The runner's writes retry while the
// apiserver is away; when it is away longer than they retry, the engine's
// state is saved to the errored-state Secret (StateNotSaved), and once a
// user restored it the Workspace applies.
func TestFaultNodeProgramsRestartedMidApply(t *testing.T) {
	requireMagos(t)
	for _, program := range []string{"containerd", "kubelet", "kube-apiserver"} {
		t.Run(program, func(t *testing.T) {
			ns, rev, pod := slowApply(t, "restart")
			job := pod.Labels["batch.kubernetes.io/job-name"]
			began := time.Now()
			require.NoError(t, node.Restart(context.Background(), program))
			t.Logf("restarted %s mid-apply of Job %s in %s", program, job, time.Since(began).Round(time.Millisecond))

			ws := survives(t, ns, "restart", rev)
			run := lastRun(ws, job)
			require.NotNil(t, run, "the Job that ran through the restart is recorded")
			if program == "kube-apiserver" && run.Reason == magosv1.ReasonStateNotSaved {
				t.Logf("the state write outlasted its retries and was saved: %s", run.Message)
				return
			}
			assert.Equal(t, magosv1.ResultSucceeded, run.Result, "%s: %s", run.Reason, run.Message)
			assert.Equal(t, run.PlanID, ws.Status.LastApplied.PlanID)
		})
	}
}

// TestFaultControllerDeletedMidPlan: the workspace-controller's Pod
// deleted while a plan runs (a Workspace with Manual approval, so the plan
// is a Job of its own, held reading a remote state from a server on the
// node). Its replacement adopts the plan Job and records the plan: one
// plan Job for the revision, awaiting approval; approved, it is applied by
// one Job.
func TestFaultControllerDeletedMidPlan(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns := newNamespace(t)
	l, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	held := testenv.NewHeldState(t, l)
	rev := newGitSource(t, ns).Publish(ctx, "infra", configDir(t, held.Config()))
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "ctl-plan", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Approval:  magosv1.ApprovalManual,
		},
	}))
	ws := waitWorkspace(t, ns, "ctl-plan", 5*time.Minute, "starts planning", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhasePlanning && ws.Status.CurrentRun != nil
	})
	select {
	case <-held.Arrived:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the plan of Job %s never read the held state", ws.Status.CurrentRun.Job)
	}
	// The plan held now is the one to adopt (a first plan may have failed
	// and been retried before it got here).
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(ws), ws))
	require.NotNil(t, ws.Status.CurrentRun, "a plan runs while the state is held")
	job := ws.Status.CurrentRun.Job
	deleteWorkspaceController(t)
	t.Logf("deleted the workspace-controller mid-plan of Job %s", job)
	held.Release()

	ws = waitWorkspace(t, ns, "ctl-plan", 5*time.Minute, "records the adopted plan and awaits approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan != nil && ws.Status.Plan.Revision == rev
	})
	run := lastRun(ws, job)
	require.NotNil(t, run, "the new controller recorded the adopted Job")
	assert.Equal(t, magosv1.ResultSucceeded, run.Result)
	assert.Equal(t, run.PlanID, ws.Status.Plan.ID, "the adopted Job's plan is the plan awaiting approval")
	assert.Equal(t, []string{job}, jobsOf(t, ns, "ctl-plan", magosv1.RunPlan), "one plan Job for the revision")

	patch := client.MergeFrom(ws.DeepCopy())
	ws.Spec.ApprovedPlan = ws.Status.Plan.ID
	require.NoError(t, k8s.Patch(ctx, ws, patch))
	ws = waitWorkspace(t, ns, "ctl-plan", 5*time.Minute, "applies the approved plan", applied(rev))
	assert.Equal(t, run.PlanID, ws.Status.LastApplied.PlanID)
	assert.Len(t, jobsOf(t, ns, "ctl-plan", magosv1.RunApply), 1, "one apply Job")
	assert.Equal(t, []string{job}, jobsOf(t, ns, "ctl-plan", magosv1.RunPlan), "and still one plan Job")
}

// jobsOf names the Workspace's Jobs of run phase.
func jobsOf(t *testing.T, ns, name, phase string) []string {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, k8s.List(context.Background(), &jobs, client.InNamespace(ns), client.MatchingLabels{magosv1.WorkspaceLabel: name, magosv1.PhaseLabel: phase}))
	var names []string
	for _, j := range jobs.Items {
		names = append(names, j.Name)
	}
	return names
}

// deleteWorkspaceController deletes every Pod of the workspace-controller.
func deleteWorkspaceController(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var controllers corev1.PodList
	require.NoError(t, k8s.List(ctx, &controllers, client.InNamespace(magosNamespace), client.MatchingLabels{"app.kubernetes.io/name": "workspace-controller"}))
	require.NotEmpty(t, controllers.Items)
	for i := range controllers.Items {
		require.NoError(t, k8s.Delete(ctx, &controllers.Items[i]))
	}
}
