package command

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

type requestOptions struct {
	wait    bool
	timeout time.Duration
}

// newRequestCommands are replan and retry: both set the reconcile request
// annotation; retry refuses a Workspace whose last run did not fail.
func newRequestCommands(f *factory) []*cobra.Command {
	replan := &requestOptions{}
	replanCmd := &cobra.Command{
		Use:   "replan WORKSPACE",
		Short: "Plan a Workspace again now, even when nothing changed",
		Long: `Ask for a new plan now by setting the reconcile request annotation
(` + magosv1.ReconcileRequestAnnotation + `) to the current time; the controller records the
request it handled in status.lastHandledReconcileAt.`,
		Example: `  kubectl magos replan hello
  kubectl magos replan hello --wait   # until the plan it started has finished`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error { return replan.run(cmd.Context(), f, a[0], nil) },
	}
	retry := &requestOptions{}
	retryCmd := &cobra.Command{
		Use:   "retry WORKSPACE",
		Short: "Retry a Workspace's failed run now, without waiting for its backoff",
		Long: `Retry the failed run of a Workspace now by setting the reconcile request
annotation (` + magosv1.ReconcileRequestAnnotation + `) to the current time. Refused when
its last run did not fail.`,
		Example: `  kubectl magos retry hello --wait`,
		Args:    args(1, 1),
		RunE:    func(cmd *cobra.Command, a []string) error { return retry.run(cmd.Context(), f, a[0], retryable) },
	}
	for _, c := range []struct {
		cmd *cobra.Command
		o   *requestOptions
	}{{replanCmd, replan}, {retryCmd, retry}} {
		c.cmd.Flags().BoolVar(&c.o.wait, "wait", false, "wait until the request is handled and the run it started has finished")
		c.cmd.Flags().DurationVar(&c.o.timeout, "timeout", 10*time.Minute, "how long --wait waits")
	}
	return []*cobra.Command{replanCmd, retryCmd}
}

// run sets the request after check (if any) accepts the Workspace.
func (o *requestOptions) run(ctx context.Context, f *factory, name string, check func(*magosv1.Workspace) error) error {
	t, err := targetOf(f, name)
	if err != nil {
		return err
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	ws := &magosv1.Workspace{}
	if err := t.update(ctx, ws, func() error {
		if check != nil {
			if err := check(ws); err != nil {
				return err
			}
		}
		setAnnotation(ws, magosv1.ReconcileRequestAnnotation, at)
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: reconcile requested at %s\n", name, at)
	if !o.wait {
		return nil
	}
	ws, err = t.waitWorkspace(ctx, o.timeout, "handle the request of "+at, func(ws *magosv1.Workspace) (bool, error) { return requestDone(ws, at) })
	if err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: request handled; %s: %s\n", name, ws.Status.Phase, readyMessage(ws.Status.Conditions))
	return nil
}

// retryable refuses a Workspace whose newest run did not fail.
func retryable(ws *magosv1.Workspace) error {
	r := ws.Status.LastRun()
	if r == nil || r.Result == magosv1.ResultSucceeded || ws.Status.CurrentRun != nil {
		return refused("Workspace %s has no failed run to retry (phase %s); to plan again anyway use: kubectl magos replan %s",
			ws.Name, orNone(string(ws.Status.Phase)), ws.Name)
	}
	return nil
}

// requestDone says whether the controller handled the request at and the
// run it started has finished; a run started since that failed, or a
// stall, fails it.
func requestDone(ws *magosv1.Workspace, at string) (bool, error) {
	st := &ws.Status
	if st.LastHandledReconcileAt != at || st.CurrentRun != nil {
		return false, nil
	}
	requested, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return false, err
	}
	if r := st.LastRun(); r != nil && r.Result != magosv1.ResultSucceeded && r.Started != nil && !r.Started.Time.Before(requested.Truncate(time.Second)) {
		return false, failed("the %s run %s failed (%s): %s", r.Phase, r.Job, r.Reason, r.Message)
	}
	if err := stalledError(ws); err != nil {
		return false, err
	}
	return true, nil
}

// setAnnotation sets annotation key to value on the object.
func setAnnotation(obj client.Object, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}
