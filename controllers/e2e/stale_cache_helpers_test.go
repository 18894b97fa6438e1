package e2e

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// laggingClient is the workspace-controller's client with a cache that
// lags behind the apiserver: its Job reads miss every Job created after it
// was made, as an informer does that has not yet seen their create events.
// Everything else reads and writes the apiserver; its status patches fail
// while Conflicts is positive (testenv.ConflictingClient).
type laggingClient struct {
	*testenv.ConflictingClient
	mu    sync.Mutex
	known map[string]bool
}

// newLaggingClient snapshots the Jobs of namespace ns now.
func newLaggingClient(t *testing.T, ns string) *laggingClient {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns)))
	c := &laggingClient{ConflictingClient: &testenv.ConflictingClient{Client: env.Client}, known: map[string]bool{}}
	for _, j := range jobs.Items {
		c.known[j.Name] = true
	}
	return c
}

func (c *laggingClient) seen(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.known[name]
}

func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*batchv1.Job); ok && !c.seen(key.Name) {
		return apierrors.NewNotFound(batchv1.Resource("jobs"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *laggingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if jobs, ok := list.(*batchv1.JobList); ok {
		jobs.Items = slices.DeleteFunc(jobs.Items, func(j batchv1.Job) bool { return !c.seen(j.Name) })
	}
	return nil
}

// laggingReconciler is a workspace-controller reconciler, driven by the
// test, that reads Jobs through c and everything it reads live (its
// APIReader) from the apiserver.
func (s *stack) laggingReconciler(c *laggingClient) *workspace.Reconciler {
	s.t.Helper()
	opts := s.workspaceOptions()
	engine := policy.NewEngineClient(opts.PolicyEnginePath)
	s.t.Cleanup(func() { _ = engine.Close() })
	return &workspace.Reconciler{Client: c, APIReader: env.Client, Options: opts, Policies: engine}
}

// reconcileOnce runs one reconcile of Workspace name with r.
func (s *stack) reconcileOnce(r *workspace.Reconciler, name string) error {
	s.t.Helper()
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: s.ns, Name: name}})
	return err
}

// getWorkspace reads Workspace name from the apiserver.
func (s *stack) getWorkspace(name string) *magosv1.Workspace {
	s.t.Helper()
	ws := &magosv1.Workspace{}
	require.NoError(s.t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, ws))
	return ws
}

// unfinishedJobs are the Workspace's Jobs that have not finished.
func unfinishedJobs(t *testing.T, ns, name string) []string {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns), client.MatchingLabels{magosv1.WorkspaceLabel: name}))
	var out []string
	for _, j := range jobs.Items {
		done := false
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == "True" {
				done = true
			}
		}
		if !done {
			out = append(out, j.Name)
		}
	}
	return out
}
