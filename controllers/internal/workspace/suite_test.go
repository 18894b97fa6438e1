package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/tools/harness/sourcecontroller"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// The tests of this file's package drive the workspace-controller, running
// in-process, through its decisions without a runner or an engine: each
// run's Job is finished by the test (runjobs_test.go) with the report a
// runner would write. controllers/e2e runs the same Workspaces with the
// real runner and OpenTofu.

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// controllerLogs collects what the in-process controllers log; a failed
// test prints it.
var controllerLogs = &testenv.LogBuffer{}

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(controllerLogs), zap.UseDevMode(true)))
}

// sourceName is the GitRepository every fixture's Workspaces read.
const sourceName = "infra"

// fixture is one test's namespace, its GitRepository (cloned by Flux's
// source-controller) and the workspace-controller watching the namespace.
type fixture struct {
	t      testing.TB
	ns     string
	source *sourcecontroller.Controller
	// Revision is the GitRepository's current artifact revision.
	Revision string
	retry    time.Duration
	// tune, if set, adjusts the controller's options.
	tune func(*config.Options)
	stop func()
}

// newFixture creates a namespace with a GitRepository that has an
// artifact, and starts the workspace-controller with retry as its retry
// interval. Without the environment (-short) the test is skipped.
func newFixture(t testing.TB, retry time.Duration) *fixture {
	t.Helper()
	return newTunedFixture(t, retry, nil)
}

// newTunedFixture is newFixture with the controller's options adjusted by
// tune.
func newTunedFixture(t testing.TB, retry time.Duration, tune func(*config.Options)) *fixture {
	t.Helper()
	env.Require(t)
	f := &fixture{t: t, ns: env.NewNamespace(t), retry: retry, tune: tune}
	f.source = sourcecontroller.Shared(t, env, "")
	f.publish("first revision")
	f.startController()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", controllerLogs.String())
		}
	})
	return f
}

// options are the workspace-controller's settings in these tests.
func (f *fixture) options() config.Options {
	o := config.Options{
		RunnerImage:          "magos-runner:test",
		VersionsDir:          "/opt/magos/engines",
		EngineImages:         map[magosv1.Engine]string{magosv1.EngineOpenTofu: config.DefaultOpenTofuImage},
		DefaultEngineVersion: "1.10.6",
		RunTimeout:           5 * time.Minute,
		JobTTL:               time.Hour,
		RetryInterval:        f.retry,
		PolicyEnginePath:     testenv.PolicyEngine.Build(f.t),
		// These tests drive a run's plan and apply Jobs one by one: the
		// fast path's single Job is tested apart (workspace_fastpath_test.go).
		Guards: config.Guards{AlwaysSeparatePlanIdentity: true},
	}
	if f.tune != nil {
		f.tune(&o)
	}
	return o
}

// startController runs the workspace-controller in-process, watching only
// the fixture's namespace, until the test ends or stopController is called.
func (f *fixture) startController() {
	f.t.Helper()
	f.stop = env.StartManager(f.t, setup.Scheme(), f.ns, func(mgr ctrl.Manager) error {
		c := workspace.NewController()
		c.Options = f.options()
		return c.Register(mgr, setup.Options{WatchNamespaces: []string{f.ns}, Concurrency: 2})
	})
}

// stopController stops the workspace-controller and waits for it.
func (f *fixture) stopController() { f.stop() }

// publish commits content (as a comment in main.tf) to the
// GitRepository's repository and returns source-controller's artifact
// revision. The controller records the artifact's URL and digest and
// hands them to the runner; these tests' runs never fetch it.
func (f *fixture) publish(content string) string {
	f.t.Helper()
	dir := f.t.TempDir()
	require.NoError(f.t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# "+content+"\n"), 0o644))
	rev, err := f.source.Publish(context.Background(), env.Client, types.NamespacedName{Namespace: f.ns, Name: sourceName}, dir)
	require.NoError(f.t, err)
	f.Revision = rev
	return rev
}

// newWorkspace creates a Workspace reading the fixture's GitRepository;
// mutate, if set, adjusts it first.
func (f *fixture) newWorkspace(name string, mutate func(*magosv1.Workspace)) {
	f.t.Helper()
	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: sourceName}},
	}
	if mutate != nil {
		mutate(ws)
	}
	require.NoError(f.t, env.Client.Create(context.Background(), ws))
}

// update changes Workspace name with mutate (a merge patch of the spec or
// metadata).
func (f *fixture) update(name string, mutate func(*magosv1.Workspace)) {
	f.t.Helper()
	ws := f.get(name)
	patch := client.MergeFrom(ws.DeepCopy())
	mutate(ws)
	require.NoError(f.t, env.Client.Patch(context.Background(), ws, patch))
}

// get reads Workspace name.
func (f *fixture) get(name string) *magosv1.Workspace {
	f.t.Helper()
	ws := &magosv1.Workspace{}
	require.NoError(f.t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, ws))
	return ws
}

// waitWorkspace polls Workspace name until its status describes its
// current generation and ok holds.
func (f *fixture) waitWorkspace(name, what string, ok func(*magosv1.Workspace) bool) *magosv1.Workspace {
	f.t.Helper()
	return testenv.WaitFor(f.t, env.Client, client.ObjectKey{Namespace: f.ns, Name: name}, &magosv1.Workspace{}, 30*time.Second, 50*time.Millisecond,
		func(ws *magosv1.Workspace) bool { return ws.Status.ObservedGeneration == ws.Generation && ok(ws) }, "Workspace "+name+": "+what)
}

// running is a wait condition: the Workspace's current run is job's.
func running(job string) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		return ws.Status.CurrentRun != nil && ws.Status.CurrentRun.Job == job
	}
}

// inPhase is a wait condition: the Workspace is in phase p.
func inPhase(p magosv1.WorkspacePhase) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool { return ws.Status.Phase == p }
}
