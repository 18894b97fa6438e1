package command

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// jobNameLabel is the label the job controller puts on a Job's Pods.
const jobNameLabel = "job-name"

type logsOptions struct {
	run    int
	follow bool
}

func newLogsCommand(f *factory) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs WORKSPACE",
		Short: "Print the runner output of a Workspace's current or a recent run",
		Long: `Print the runner output of the run in progress (else the newest one), or
with --run N of status.history[N] (0 is the newest), from the run's Pod.
Runs' Jobs and Pods are deleted once the workspace-controller's Job TTL has
passed after they finished; the result of the run stays in status.history.`,
		Example: `  kubectl magos logs hello -f        # follow the current run
  kubectl magos logs hello --run 1   # the run before the newest`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return o.show(cmd.Context(), f, a[0], cmd.Flags().Changed("run"))
		},
	}
	cmd.Flags().IntVar(&o.run, "run", 0, "the run in status.history to show, 0 the newest")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the output while the run goes on")
	return cmd
}

func (o *logsOptions) show(ctx context.Context, f *factory, name string, fromHistory bool) error {
	t, ws, err := readWorkspace(ctx, f, name)
	if err != nil {
		return err
	}
	r, err := runOf(ws, o.run, fromHistory)
	if err != nil {
		return err
	}
	pods, err := podsOfJob(ctx, t.c, t.key.Namespace, r.Job)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return newError(ExitFailure, ReasonNotFound, "the Pod of run %s is gone: runs' Jobs are deleted once the Job TTL has passed after they finished. "+
			"The run's result is still in status.history: %s", r.Job, runSummary(r))
	}
	cs, err := f.clientset()
	if err != nil {
		return err
	}
	pod := newestPod(pods)
	stream, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Follow: o.follow}).Stream(ctx)
	if err != nil {
		return failed("reading the output of Pod %s of run %s: %v (the run's result: %s)", pod.Name, r.Job, err, runSummary(r))
	}
	defer stream.Close()
	_, err = io.Copy(f.streams.Out, stream)
	return err
}

// runOf is history[n] when fromHistory, else the run in progress or the
// newest one.
func runOf(ws *magosv1.Workspace, n int, fromHistory bool) (*magosv1.RunStatus, error) {
	st := &ws.Status
	if !fromHistory && st.CurrentRun != nil {
		return st.CurrentRun, nil
	}
	if len(st.History) == 0 {
		return nil, newError(ExitFailure, ReasonNotFound, "Workspace %s has no run yet", ws.Name)
	}
	if n < 0 || n >= len(st.History) {
		return nil, usageError("Workspace %s keeps %d runs in status.history: --run takes 0 to %d", ws.Name, len(st.History), len(st.History)-1)
	}
	return &st.History[n], nil
}

// runSummary is a run's phase, result, reason and message on one line.
func runSummary(r *magosv1.RunStatus) string {
	s := fmt.Sprintf("%s %s", r.Phase, orNone(r.Result))
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

// clientset is the typed core clientset, for Pod logs.
func (f *factory) clientset() (kubernetes.Interface, error) {
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}
