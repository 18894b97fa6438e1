package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// The job completer plays the job controller and the kubelet for the runs
// the workspace-controller starts, synthetically: for a Job it creates the
// Job's Pod, ends the Pod with a runner report as its termination message
// and finishes the Job with the status the job controller would give it.

// syntheticNode is the node the Pods of finished runs are bound to.
const syntheticNode = "synthetic-node"

// Job condition reasons and messages as the job controller writes them.
const (
	completionsReached       = "CompletionsReached"
	completionsReachedMsg    = "Reached expected number of succeeded pods"
	podFailurePolicyReason   = "PodFailurePolicy"
	deadlineExceededReason   = "DeadlineExceeded"
	deadlineExceededMessage  = "Job was active longer than specified deadline"
	failJobExitCodeRuleIndex = 1 // the runner's exit codes in the Job's podFailurePolicy
)

// waitJob waits for a Job of Workspace ws in phase (plan, apply, destroy)
// that has not finished, and returns it.
func waitJob(t testing.TB, ns, ws, phase string) *batchv1.Job {
	t.Helper()
	var found *batchv1.Job
	require.Eventually(t, func() bool {
		for _, j := range runJobs(t, ns, ws) {
			if j.Labels[magosv1.PhaseLabel] == phase && !jobDone(&j) {
				found = &j
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "a %s Job of Workspace %s starts", phase, ws)
	return found
}

// runJobs lists the Jobs of Workspace ws, oldest first.
func runJobs(t testing.TB, ns, ws string) []batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns), client.MatchingLabels{magosv1.WorkspaceLabel: ws}))
	return jobs.Items
}

// jobsIn counts the Jobs of Workspace ws in phase.
func jobsIn(t testing.TB, ns, ws, phase string) int {
	t.Helper()
	n := 0
	for _, j := range runJobs(t, ns, ws) {
		if j.Labels[magosv1.PhaseLabel] == phase {
			n++
		}
	}
	return n
}

func jobDone(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobEnv is the value of the runner container's environment variable name.
func jobEnv(job *batchv1.Job, name string) string {
	for _, c := range job.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// complete ends the run of job successfully: the runner reported res
// (Result Succeeded unless set) and exited 0, and the Job completed.
func complete(t testing.TB, job *batchv1.Job, res magosv1.RunResult) {
	t.Helper()
	if res.Result == "" {
		res.Result = magosv1.ResultSucceeded
	}
	require.Equal(t, magosv1.ResultSucceeded, res.Result, "complete reports a successful run; use report for others")
	report(t, job, res)
}

// report ends the run of job with the runner's report res: the runner
// exits with the exit code of res.Result, and the Job completes (exit 0) or
// fails through its podFailurePolicy, which fails the Job at once on the
// runner's own exit codes.
func report(t testing.TB, job *batchv1.Job, res magosv1.RunResult) {
	t.Helper()
	if res.Phase == "" {
		res.Phase = job.Labels[magosv1.PhaseLabel]
	}
	if magosv1.RunPlans(res.Phase) && res.Result == magosv1.ResultSucceeded {
		res.PlanDigest = storeReportedPlan(t, job, res)
	}
	reportOnly(t, job, res)
}

// reportOnly ends job's run with report res, storing nothing: a plan run's
// report then describes whatever plan is stored. The report is a runner's
// of the controller's run contract and version unless res names others
// (rawReport sends it as it is).
func reportOnly(t testing.TB, job *batchv1.Job, res magosv1.RunResult) {
	t.Helper()
	if res.Contract == 0 {
		res.Contract = magosv1.RunContractMajor
	}
	if res.RunnerVersion == "" {
		res.RunnerVersion = setup.Version
	}
	rawReport(t, job, res)
}

// rawReport ends job's run with report res as it is.
func rawReport(t testing.TB, job *batchv1.Job, res magosv1.RunResult) {
	t.Helper()
	if res.Phase == "" {
		res.Phase = job.Labels[magosv1.PhaseLabel]
	}
	msg, err := json.Marshal(res)
	require.NoError(t, err)
	code := exitCode(res.Result)
	pod := endPod(t, job, code, string(msg))
	if code == magosv1.ExitSucceeded {
		finishJob(t, job, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete, completionsReached, completionsReachedMsg)
		return
	}
	finishJob(t, job, batchv1.JobFailureTarget, batchv1.JobFailed, podFailurePolicyReason,
		fmt.Sprintf("Container runner for pod %s/%s failed with exit code %d matching FailJob rule at index %d", pod.Namespace, pod.Name, code, failJobExitCodeRuleIndex))
}

// storeReportedPlan stores, as a plan run does, a plan whose JSON makes
// the changes res reports (its counts, and an output change where it
// reports changes without counts), under the run's plan ID, and returns its
// digest: reportedDigest(res). The controller reads the counts back from
// the stored JSON.
func storeReportedPlan(t testing.TB, job *batchv1.Job, res magosv1.RunResult) string {
	t.Helper()
	ws := job.Labels[magosv1.WorkspaceLabel]
	secrets := testSecrets{ns: job.Namespace}
	meta, err := planstore.Store(context.Background(), secrets, planstore.Input{
		Workspace: ws, Owner: planstore.WorkspaceOwner(ws, string(job.OwnerReferences[0].UID)),
		ID: jobEnv(job, magosv1.EnvPlanID), JSON: reportedPlanJSON(res), Binary: []byte("binary plan"),
	})
	require.NoError(t, err, "storing the plan of Job %s", job.Name)
	return meta.Digest
}

// reportedDigest is the digest of the plan storeReportedPlan stores for res.
func reportedDigest(res magosv1.RunResult) string { return planstore.Digest(reportedPlanJSON(res)) }

// reportedPlanJSON is a plan JSON document with res's changes; res's
// PlanDigest makes plans of equal counts differ.
func reportedPlanJSON(res magosv1.RunResult) []byte {
	var changes []string
	for action, n := range map[string]int32{"create": res.Add, "update": res.Change, "delete": res.Destroy} {
		for i := range n {
			changes = append(changes, fmt.Sprintf(`{"address":"terraform_data.%s_%d","change":{"actions":[%q]}}`, action, i, action))
		}
	}
	sort.Strings(changes)
	outputs := `{}`
	if res.HasChanges && res.Add+res.Change+res.Destroy == 0 {
		outputs = `{"out":{"actions":["update"]}}`
	}
	return fmt.Appendf(nil, `{"format_version":"1.2","test_plan":%q,"resource_changes":[%s],"output_changes":%s}`,
		res.PlanDigest, strings.Join(changes, ","), outputs)
}

// testSecrets reads and writes Secrets of one namespace through the test
// environment's client, for planstore.
type testSecrets struct{ ns string }

func (s testSecrets) Get(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	return sec, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, sec)
}

func (s testSecrets) Update(ctx context.Context, sec *corev1.Secret, _ metav1.UpdateOptions) (*corev1.Secret, error) {
	sec.Namespace = s.ns
	return sec, env.Client.Update(ctx, sec)
}

// fail ends the run of job without a report: the runner was killed (the
// deadline, an eviction) and the Job failed with reason and message.
func fail(t testing.TB, job *batchv1.Job, reason, message string) {
	t.Helper()
	endPod(t, job, 137, "")
	finishJob(t, job, batchv1.JobFailureTarget, batchv1.JobFailed, reason, message)
}

// exitCodes are the runner's exit codes by run result; any other result
// exits with ExitFailed.
var exitCodes = map[string]int32{
	magosv1.ResultSucceeded: magosv1.ExitSucceeded,
	magosv1.ResultStale:     magosv1.ExitStale,
	magosv1.ResultLocked:    magosv1.ExitLocked,
}

func exitCode(result string) int32 {
	if code, ok := exitCodes[result]; ok {
		return code
	}
	return magosv1.ExitFailed
}

// endPod creates the Pod of job as the job controller does (from the Job's
// template, labelled job-name, controlled by the Job) and ends its runner
// container with exit code and termination message, as the kubelet does.
func endPod(t testing.TB, job *batchv1.Job, code int32, message string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	labels[batchv1.JobNameLabel] = job.Name
	labels["job-name"] = job.Name
	labels[batchv1.ControllerUidLabel] = string(job.UID)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    job.Name + "-",
			Namespace:       job.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = syntheticNode
	require.NoError(t, env.Client.Create(ctx, pod), "creating the Pod of Job %s", job.Name)

	now := metav1.Now()
	phase, reason := corev1.PodSucceeded, "Completed"
	if code != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	pod.Status = corev1.PodStatus{
		Phase:     phase,
		StartTime: &now,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:  "runner",
			Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, Message: message, StartedAt: now, FinishedAt: now,
			}},
		}},
	}
	require.NoError(t, env.Client.Status().Update(ctx, pod), "ending the Pod of Job %s", job.Name)
	return pod
}

// finishJob sets the Job's terminal status as the job controller does:
// the interim condition (SuccessCriteriaMet or FailureTarget) and then the
// terminal one (Complete or Failed) with reason and message, startTime,
// the Pod counted, and completionTime for a completed Job. The apiserver
// refuses a terminal condition without its interim one.
func finishJob(t testing.TB, job *batchv1.Job, interim, terminal batchv1.JobConditionType, reason, message string) {
	t.Helper()
	ctx := context.Background()
	current := &batchv1.Job{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(job), current))
	now := metav1.Now()
	st := &current.Status
	if st.StartTime == nil {
		st.StartTime = &now
	}
	st.Active, st.Ready, st.Terminating = 0, ptr.To[int32](0), ptr.To[int32](0)
	st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	cond := func(t batchv1.JobConditionType) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastProbeTime: now, LastTransitionTime: now}
	}
	st.Conditions = append(st.Conditions, cond(interim), cond(terminal))
	if terminal == batchv1.JobComplete {
		st.Succeeded = 1
		st.CompletionTime = &now
	} else {
		st.Failed = 1
	}
	require.NoError(t, env.Client.Status().Update(ctx, current), "finishing Job %s", job.Name)
}

// TestJobCompleterWritesWhatTheControllerReads pins the completer itself:
// its Jobs pass the apiserver's Job status validation and read as finished
// the way the controller reads runs (the Job's terminal condition, the
// report in the termination message of a Pod labelled job-name).
func TestJobCompleterWritesWhatTheControllerReads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("completer", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	job := waitJob(t, f.ns, "completer", magosv1.RunPlan)
	report(t, job, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonInitFailed, Message: "init failed"})

	got := &batchv1.Job{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), got))
	assert.True(t, jobDone(got), "the Job finished")
	var types []batchv1.JobConditionType
	for _, c := range got.Status.Conditions {
		types = append(types, c.Type)
	}
	assert.Equal(t, []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed}, types)

	var pods corev1.PodList
	require.NoError(t, env.Client.List(context.Background(), &pods, client.InNamespace(f.ns), client.MatchingLabels{"job-name": job.Name}))
	require.Len(t, pods.Items, 1)
	p := pods.Items[0]
	assert.Equal(t, "completer", p.Labels[magosv1.WorkspaceLabel])
	assert.Equal(t, magosv1.RunPlan, p.Labels[magosv1.PhaseLabel])
	assert.Equal(t, corev1.PodFailed, p.Status.Phase)
	var res magosv1.RunResult
	require.NoError(t, json.Unmarshal([]byte(p.Status.ContainerStatuses[0].State.Terminated.Message), &res))
	assert.Equal(t, magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonInitFailed, Message: "init failed",
		Contract: magosv1.RunContractMajor, RunnerVersion: setup.Version}, res)
	assert.Equal(t, int32(magosv1.ExitFailed), p.Status.ContainerStatuses[0].State.Terminated.ExitCode)
}
