package e2e

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/project"
	"github.com/magos-dev/magos/controllers/internal/rollout"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/variableset"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspaceset"
	"github.com/magos-dev/magos/tools/harness/executor"
	"github.com/magos-dev/magos/tools/harness/localsource"
	"github.com/magos-dev/magos/tools/harness/sourcecontroller"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// controllerLogs collects every log line the in-process controllers write,
// so tests can assert what never appears in them.
var controllerLogs = &testenv.LogBuffer{}

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(controllerLogs)))
}

var runnerBinary = &testenv.Binary{Dir: "runner", Pkg: ".", Name: "runner"}

// buildRunner compiles the runner binary once per test binary.
func buildRunner(t testing.TB) string { return runnerBinary.Build(t) }

// stack is one test's Magos: a namespace, Flux's source-controller, the
// local Job executor and the workspace-controller, all on the shared
// control plane.
type stack struct {
	t  testing.TB
	ns string
	// flux is Flux's own source-controller (shared by the test binary),
	// which clones what the test publishes into GitRepository artifacts.
	flux *sourcecontroller.Controller
	// standIn serves what no source-controller would: hostile artifacts
	// (standInRepository) and ExternalArtifacts, whose producers are
	// other controllers.
	standIn    *localsource.Server
	executor   *executor.Executor
	runnerLogs *testenv.LogBuffer
	stopCtrl   func()
	// proxy is the socket on which the in-process workspace-controller
	// serves the artifact proxy, which every run fetches its artifact
	// from; proxyAddr is its address.
	proxy     *keptListener
	proxyAddr string
	// concurrency of each in-process controller.
	concurrency int
	opts        stackOptions
}

// stackOptions size a stack; the zero value suits a test.
type stackOptions struct {
	// Concurrency of each controller (default 2).
	Concurrency int
	// MaxProcesses caps the executor's concurrent runner processes (default: no cap).
	MaxProcesses int
	// NoControllers leaves the controllers to the test (for example as
	// processes); the stack then only provides the source and the executor.
	NoControllers bool
	// NoVariableSetController leaves VariableSet status to the test.
	NoVariableSetController bool
	// RunnerEnv is added to the workspace-controller's --runner-env.
	RunnerEnv []string
	// Workspace adjusts the workspace-controller's options (e.g. its guards).
	Workspace func(*config.Options)
	// AlsoWatch are namespaces the controllers watch besides the stack's own.
	AlsoWatch []string
	// UnpullableImages are images the executor fails to pull.
	UnpullableImages []string
	// EventsAddr is where the controllers forward events (--events-addr).
	EventsAddr string
	// DigestAlgorithm is the algorithm of source-controller's artifact
	// digests (default sha256): another gives the stack an instance of
	// its own (--artifact-digest-algo), sharded by the algorithm.
	DigestAlgorithm string
}

func newStack(t testing.TB) *stack { return newStackWith(t, stackOptions{}) }

func newStackWith(t testing.TB, opts stackOptions) *stack {
	t.Helper()
	s := &stack{t: t, ns: env.NewNamespace(t), runnerLogs: &testenv.LogBuffer{}, concurrency: max(opts.Concurrency, 2), opts: opts,
		proxy: newKeptListener(t)}
	s.proxyAddr = s.proxy.Addr()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	s.flux = sourcecontroller.Shared(t, env, opts.DigestAlgorithm)
	src, err := localsource.New(env.Client, localsource.Options{DigestAlgorithm: opts.DigestAlgorithm})
	require.NoError(t, err)
	require.NoError(t, src.Start())
	t.Cleanup(func() { _ = src.Close() })
	s.standIn = src

	ex, err := executor.New(env.Config, executor.Options{
		RunnerPath:   buildRunner(t),
		Namespace:    s.ns,
		LogOutput:    s.runnerLogs,
		MaxProcesses: opts.MaxProcesses,
		// The engine reaches the runner through the engine image's init
		// container, which the executor imitates from bin/engines.
		EnginesDir:       filepath.Join(env.Root, "bin", "engines"),
		UnpullableImages: opts.UnpullableImages,
	})
	require.NoError(t, err)
	go func() { _ = ex.Start(ctx) }()
	s.executor = ex

	if !opts.NoControllers {
		s.startController()
	}
	t.Cleanup(func() {
		s.stopController()
		if t.Failed() {
			t.Logf("runner output:\n%s", s.runnerLogs.String())
			t.Logf("controller log lines about namespace %s:\n%s", s.ns, linesWith(controllerLogs.String(), `"`+s.ns+`"`))
			t.Logf("source-controller log lines about namespace %s:\n%s", s.ns, s.flux.LogAbout(s.ns))
			var projects magosv1.ProjectList
			if env.Client.List(context.Background(), &projects, client.InNamespace(s.ns)) == nil {
				for _, p := range projects.Items {
					t.Logf("Project %s: generation %d, status %+v", p.Name, p.Generation, p.Status)
				}
			}
		}
	})
	return s
}

var (
	tofurcOnce sync.Once
	tofurcPath string
)

// tofurc renders the CLI configuration that installs the magostest provider
// from the filesystem mirror built by `make tools`.
func tofurc(t testing.TB) string {
	t.Helper()
	tofurcOnce.Do(func() {
		tmpl := template.Must(template.ParseFiles(filepath.Join(env.Root, "tools", "testprovider", "tofurc.tmpl")))
		f, err := os.CreateTemp("", "magos-tofurc-")
		if err != nil {
			return
		}
		defer f.Close()
		if err := tmpl.Execute(f, map[string]string{"ProvidersDir": filepath.Join(env.Root, "bin", "providers")}); err != nil {
			return
		}
		tofurcPath = f.Name()
	})
	require.NotEmpty(t, tofurcPath, "rendering the CLI configuration")
	return tofurcPath
}

// workspaceOptions are the workspace-controller's settings in tests.
func (s *stack) workspaceOptions() config.Options {
	o := config.Options{
		RunnerEnv:            append([]string{"TF_CLI_CONFIG_FILE=" + tofurc(s.t)}, s.opts.RunnerEnv...),
		RunnerImage:          "magos-runner:test",
		VersionsDir:          "/opt/magos/engines",
		EngineImages:         map[magosv1.Engine]string{magosv1.EngineOpenTofu: config.DefaultOpenTofuImage},
		DefaultEngineVersion: "1.10.6",
		RunTimeout:           5 * time.Minute,
		JobTTL:               time.Hour,
		RetryInterval:        3 * time.Second,
		PolicyEnginePath:     testenv.PolicyEngine.Build(s.t),
		Guards:               config.Guards{NoCrossNamespaceRefs: true},
		// The flags' defaults: every run passes the run queue, one
		// namespace holds at most half of its slots, requested plans are
		// rate-limited, and no run's deadline passes an hour.
		MaxConcurrentRuns:             20,
		MaxConcurrentRunsPerNamespace: config.AutoPerNamespace,
		RequestedPlanInterval:         time.Minute,
		MaxRunTimeout:                 time.Hour,
		// As the chart installs it: runners fetch through the proxy.
		ArtifactProxy: config.ArtifactProxy{Listener: s.proxy.session(), URL: "http://" + s.proxyAddr},
	}
	if s.opts.Workspace != nil {
		s.opts.Workspace(&o)
	}
	return o
}

// startController runs the workspace-, project-, rollout-, workspaceset- and variableset-controllers
// in-process, watching only the test's namespace, with the cache and
// RESTMapper the binaries build (trimmed Jobs and Pods, no managedFields).
func (s *stack) startController() {
	s.t.Helper()
	opts := setup.Options{Concurrency: s.concurrency, EventsAddr: s.opts.EventsAddr, WatchNamespaces: append([]string{s.ns}, s.opts.AlsoWatch...)}
	cacheOpts, err := opts.CacheOptions(&magosv1.Workspace{})
	require.NoError(s.t, err)
	s.stopCtrl = env.StartManagerWithOptions(s.t, ctrl.Options{Scheme: setup.Scheme(), Cache: cacheOpts, MapperProvider: setup.NewMapper}, func(mgr ctrl.Manager) error {
		c := workspace.NewController()
		c.Options = s.workspaceOptions()
		err := errors.Join(c.Register(mgr, opts), project.Register(mgr, opts), rollout.Register(mgr, opts), workspaceset.Register(mgr, opts))
		if s.opts.NoVariableSetController {
			return err
		}
		return errors.Join(err, variableset.Register(mgr, opts))
	})
}

// stopController stops the in-process controllers and waits for them.
func (s *stack) stopController() {
	if s.stopCtrl != nil {
		s.stopCtrl()
		s.stopCtrl = nil
	}
}

// gitRepository creates a GitRepository and publishes dir as its artifact.
func (s *stack) gitRepository(name, dir string) string {
	s.t.Helper()
	return s.gitRepositoryIn(s.ns, name, dir)
}

// gitRepositoryIn creates a GitRepository in namespace ns and publishes dir
// as its artifact.
func (s *stack) gitRepositoryIn(ns, name, dir string) string {
	s.t.Helper()
	return s.publishIn(ns, name, dir)
}

// publish commits dir to the Git repository of GitRepository name and
// returns source-controller's artifact revision of the commit.
func (s *stack) publish(name, dir string) string {
	s.t.Helper()
	return s.publishIn(s.ns, name, dir)
}

func (s *stack) publishIn(ns, name, dir string) string {
	s.t.Helper()
	rev, err := s.flux.Publish(context.Background(), env.Client, types.NamespacedName{Namespace: ns, Name: name}, dir)
	require.NoError(s.t, err)
	return rev
}

// standInRepository creates GitRepository name in a shard no
// source-controller serves, for the stand-in to publish hostile artifacts
// to (PublishArtifact): what a compromised or buggy source would serve.
func (s *stack) standInRepository(name string) {
	s.t.Helper()
	repo := newSourceObject(name, s.ns)
	repo.SetLabels(map[string]string{sourcecontroller.ShardLabel: "stand-in"})
	require.NoError(s.t, unstructured.SetNestedMap(repo.Object, map[string]any{
		"url": "https://example.invalid/" + name + ".git", "interval": "5m", "ref": map[string]any{"branch": "main"},
	}, "spec"))
	require.NoError(s.t, env.Client.Create(context.Background(), repo))
}

// newWorkspace creates a Workspace reading GitRepository repo.
func (s *stack) newWorkspace(name, repo string, mutate func(*magosv1.Workspace)) *magosv1.Workspace {
	s.t.Helper()
	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: repo},
			Outputs:   &magosv1.OutputsSpec{SecretName: name + "-outputs"},
		},
	}
	if mutate != nil {
		mutate(ws)
	}
	require.NoError(s.t, env.Client.Create(context.Background(), ws))
	return ws
}

// waitWorkspace polls the Workspace until ok holds, failing after timeout.
func (s *stack) waitWorkspace(name string, timeout time.Duration, what string, ok func(*magosv1.Workspace) bool) *magosv1.Workspace {
	s.t.Helper()
	return testenv.WaitFor(s.t, env.Client, client.ObjectKey{Namespace: s.ns, Name: name}, &magosv1.Workspace{}, timeout, 250*time.Millisecond,
		ok, "Workspace "+name+": "+what)
}

// appliedRevision is a wait condition: the Workspace applied revision rev and is Ready.
func appliedRevision(rev string) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.Revision == rev &&
			ws.Status.Phase == magosv1.PhaseIdle && ws.Status.ObservedGeneration == ws.Generation
	}
}

// copyConfig copies testdata/<name> to a temp dir the test may edit.
func copyConfig(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))))
	return dst
}

// linesWith returns the lines of text that contain sub.
func linesWith(text, sub string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func sha256Sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// newSourceObject is a GitRepository reference for Get/Delete.
func newSourceObject(name, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	u.SetKind("GitRepository")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}
