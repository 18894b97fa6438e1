package ops

import (
	"context"
	"fmt"
	"io"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// jobNameLabel is the label the job controller puts on a Job's Pods.
const jobNameLabel = "job-name"

// RunLogs is the runner output of a run of the target Workspace, read
// from the run's Pod through cs: history[n] when fromHistory, else the
// run in progress or the newest one; following it while the run goes on
// when follow.
func RunLogs(ctx context.Context, t *Target, cs kubernetes.Interface, n int, fromHistory, follow bool) (io.ReadCloser, error) {
	ws, err := t.ReadWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	r, err := RunOf(ws, n, fromHistory)
	if err != nil {
		return nil, err
	}
	pods, err := podsOfJob(ctx, t.Client, t.Key.Namespace, r.Job)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, failure.NotFound("the Pod of run %s is gone: runs' Jobs are deleted once the Job TTL has passed after they finished. "+
			"The run's result is still in status.history: %s", r.Job, runSummary(r))
	}
	pod := newestPod(pods)
	stream, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Follow: follow}).Stream(ctx)
	if err != nil {
		return nil, failure.Failed("reading the output of Pod %s of run %s: %v (the run's result: %s)", pod.Name, r.Job, err, runSummary(r))
	}
	return stream, nil
}

// RunOf is history[n] when fromHistory, else the run in progress or the
// newest one.
func RunOf(ws *magosv1.Workspace, n int, fromHistory bool) (*magosv1.RunStatus, error) {
	st := &ws.Status
	if !fromHistory && st.CurrentRun != nil {
		return st.CurrentRun, nil
	}
	if len(st.History) == 0 {
		return nil, failure.NotFound("Workspace %s has no run yet", ws.Name)
	}
	if n < 0 || n >= len(st.History) {
		return nil, failure.Usage("Workspace %s keeps %d runs in status.history: --run takes 0 to %d", ws.Name, len(st.History), len(st.History)-1)
	}
	return &st.History[n], nil
}

// runSummary is a run's phase, result, reason and message on one line.
func runSummary(r *magosv1.RunStatus) string {
	s := fmt.Sprintf("%s %s", r.Phase, view.OrNone(r.Result))
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if r.Message != "" {
		s += ": " + r.Message
	}
	return s
}

// podsOfJob are the Pods Job name controls (by the Job's UID, not its
// labels, which any Pod may carry); none when the Job is gone.
func podsOfJob(ctx context.Context, c client.Reader, namespace, name string) ([]corev1.Pod, error) {
	var job batchv1.Job
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &job); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{jobNameLabel: name}); err != nil {
		return nil, err
	}
	var own []corev1.Pod
	for i := range pods.Items {
		if metav1.IsControlledBy(&pods.Items[i], &job) {
			own = append(own, pods.Items[i])
		}
	}
	return own, nil
}

// newestPod is the most recently created Pod (a Job may retry its Pod).
func newestPod(pods []corev1.Pod) *corev1.Pod {
	newest := &pods[0]
	for i := range pods {
		if newest.CreationTimestamp.Before(&pods[i].CreationTimestamp) {
			newest = &pods[i]
		}
	}
	return newest
}
