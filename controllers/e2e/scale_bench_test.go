package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/tools/harness/sourcecontroller"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

const (
	// scaleBenchEnv turns BenchmarkScale on; `make bench-scale` sets it
	// (the benchmark takes too long for `make bench`).
	scaleBenchEnv = "MAGOS_BENCH_SCALE"
	// scaleWorkspacesEnv is how many Workspaces BenchmarkScale creates
	// (default 10,000).
	scaleWorkspacesEnv = "MAGOS_SCALE_WORKSPACES"
	// fleetSize is how many of them belong to the Project whose new
	// revisions are measured.
	fleetSize = 1000
	// scaleStepsEnv names the steps to run, comma-separated (default all
	// of scaleSteps, in their order).
	scaleStepsEnv = "MAGOS_SCALE_STEPS"
	// scaleMemoryTarget is the controller's peak RSS target in bytes (300
	// MB), met with no memory limit set: the Go runtime's heap goal is then
	// twice what is live, so this bounds what the controller keeps.
	scaleMemoryTarget = 300_000_000
	// scaleGCShareTarget bounds the garbage collector's share of the
	// controller's CPU.
	scaleGCShareTarget = 0.10
)

// scaleSteps are BenchmarkScale's steps; each but the first needs the ones
// before it to have run.
var scaleSteps = []string{"converge", "restart", "revision", "bounds"}

// scaleBounds are the Project bounds on runs in progress of the sweep.
var scaleBounds = []int{4, 16, 64}

var workspaceControllerBinary = &testenv.Binary{Dir: "controllers", Pkg: "./workspace", Name: "workspace"}

// BenchmarkScale runs the workspace-controller binary over N Workspaces of
// one terraform_data each ($MAGOS_SCALE_WORKSPACES, default 10,000) on the
// local control plane and prints, each beside its target: the first
// converge of all N (time, the controller's peak RSS, its API writes and CPU
// seconds per plan+apply cycle); a restart with N applied Workspaces (Jobs
// created, time until every Workspace is reconciled again, apiserver
// requests per second); a new revision of the 1,000 Workspaces of one
// Project (writes and CPU per cycle); and the same under Project bounds of
// 4, 16 and 64 with drift re-plans of that Project queued meanwhile
// (applies per minute, and the run queue's waits by priority).
//
// Runs are simulated (simulatedRunner): no engine runs, each Job is
// completed through the run contract with the writes a real runner makes,
// so the controller is what is measured.
func BenchmarkScale(b *testing.B) {
	if os.Getenv(scaleBenchEnv) == "" {
		b.Skip("BenchmarkScale runs with `make bench-scale`")
	}
	env.Require(b)
	n := 10_000
	if v := os.Getenv(scaleWorkspacesEnv); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err, scaleWorkspacesEnv)
	}
	steps := scaleSteps
	if v := os.Getenv(scaleStepsEnv); v != "" {
		steps = strings.Split(v, ",")
		for _, step := range steps {
			require.Contains(b, scaleSteps, step, scaleStepsEnv)
		}
	}
	s := newScaleRun(b, n)
	s.report("Runs are SIMULATED: no engine runs; each run Job is completed by an in-process runner that makes the runner's writes (state lock, plan Secret, state) and the job controller's and kubelet's (Pod, Pod status, Job status). The workspace-controller binary is what is measured; %d Workspaces, %d CPU cores; the controller runs with no memory limit (no GOMEMLIMIT, GOGC 100). Steps: %s.",
		n, runtime.NumCPU(), strings.Join(steps, ", "))
	s.firstConverge()
	for _, step := range steps[1:] {
		switch step {
		case "restart":
			s.restart()
		case "revision":
			s.newRevision()
		case "bounds":
			s.boundSweep()
		}
	}
}

// scaleRun is one BenchmarkScale: its namespace, sources, simulated
// runner and controller process.
type scaleRun struct {
	b       *testing.B
	n       int
	fleet   int // Workspaces of Project "fleet", the first ones
	ns      string
	c       client.Client
	cache   cache.Cache
	flux    *sourcecontroller.Controller
	config  string // the configuration directory, republished per revision
	version int
	sim     *simulatedRunner
	bin     string
	logs    *os.File
	ctrl    *controllerProcess
	// pprofAddr serves the controller's Go profiles.
	pprofAddr string
}

func newScaleRun(b *testing.B, n int) *scaleRun {
	s := &scaleRun{b: b, n: n, fleet: min(fleetSize, n), ns: env.NewNamespace(b), config: b.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	var err error
	s.c, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	require.NoError(b, err)
	s.cache, err = cache.New(cfg, cache.Options{Scheme: testenv.Scheme(), DefaultNamespaces: map[string]cache.Config{s.ns: {}}})
	require.NoError(b, err)
	_, err = s.cache.GetInformer(ctx, &magosv1.Workspace{})
	require.NoError(b, err)
	go func() { _ = s.cache.Start(ctx) }()

	s.flux = sourcecontroller.Shared(b, env, "")

	s.sim, err = newSimulatedRunner(env.Config)
	require.NoError(b, err)
	simDone := make(chan struct{})
	go func() { s.sim.run(ctx, s.ns, 8); close(simDone) }()
	b.Cleanup(func() { cancel(); <-simDone })

	s.bin = filepath.Dir(workspaceControllerBinary.Build(b))
	s.logs, err = os.Create(filepath.Join(b.TempDir(), "workspace-controller.log"))
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.logs.Close() })

	st := s.stack()
	for _, repo := range []string{"base", "fleet", "drift"} {
		s.writeConfig()
		st.gitRepository(repo, s.config)
	}
	p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: s.ns}}
	require.NoError(b, s.c.Create(ctx, p))
	p.Status.ObservedGeneration = p.Generation
	conditions.Set(p, magosv1.ReadyCondition, metav1.ConditionTrue, magosv1.ReconciliationSucceededReason, "set by the benchmark")
	require.NoError(b, s.c.Status().Update(ctx, p), "the Project is Ready (no project-controller runs here)")
	return s
}

// stack is enough of a stack to publish sources.
func (s *scaleRun) stack() *stack { return &stack{t: s.b, ns: s.ns, flux: s.flux} }

// writeConfig writes the next version of the one-terraform_data configuration.
func (s *scaleRun) writeConfig() {
	s.version++
	body := fmt.Sprintf("resource \"terraform_data\" \"this\" {\n  input = \"v%d\"\n}\n", s.version)
	require.NoError(s.b, os.WriteFile(filepath.Join(s.config, "main.tf"), []byte(body), 0o600))
}

// publish publishes a new version of the configuration as repo's artifact.
func (s *scaleRun) publish(repo string) string {
	s.writeConfig()
	return s.stack().publish(repo, s.config)
}

// report prints a line at once (the benchmark's log would come only at
// its end, and cut).
func (s *scaleRun) report(format string, args ...any) {
	fmt.Printf("scale: "+format+"\n", args...)
}

// startController starts the controller binary with extra flags and waits
// until it is ready.
func (s *scaleRun) startController(extra ...string) {
	s.pprofAddr = freeAddr(s.b)
	// The fleet is one namespace's: the controller's bound, not the
	// namespace's bounds on runs and plan starts, is what the figures
	// measure.
	args := append([]string{"--watch-namespaces", s.ns, "--runner-image", "magos-runner:simulated", "--pprof-bind-address", s.pprofAddr,
		"--max-concurrent-runs-per-namespace=0", "--max-plans-per-namespace-per-minute=0"}, extra...)
	s.ctrl = startControllerWithEnv(s.b, s.logs, []string{"GOMEMLIMIT=off", "GOGC=100"}, s.bin, "workspace", env.Kubeconfig, s.ns, args...)
	s.ctrl.waitReady(s.b)
}

// stopController stops the controller with SIGTERM, as a rollout would.
func (s *scaleRun) stopController() {
	require.NoError(s.b, s.ctrl.cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan struct{})
	go func() {
		_ = s.ctrl.cmd.Wait() // a signalled process exits non-zero
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = s.ctrl.cmd.Process.Kill()
		<-done
	}
}

// figures is everything measured at one moment.
type figures struct {
	at         time.Time
	api        apiserverRequests
	ctrl       controllerFigures
	proc       procFigures
	simRunner  int64
	simCluster int64
	simJobs    int64
}

func (s *scaleRun) measure() figures {
	return figures{
		at: time.Now(), api: readAPIServerRequests(s.b), ctrl: readControllerFigures(s.b, s.ctrl),
		proc: readProcFigures(s.b, s.ctrl.cmd.Process.Pid), simRunner: s.sim.RunnerWrites.Load(),
		simCluster: s.sim.ClusterWrites.Load(), simJobs: s.sim.Jobs.Load(),
	}
}

// createWorkspaces creates names with mutate, 16 at a time.
func (s *scaleRun) createWorkspaces(names []string, mutate func(i int, ws *magosv1.Workspace)) {
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: s.ns}}
				mutate(i, ws)
				if err := s.c.Create(context.Background(), ws); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		require.NoError(s.b, err, "creating Workspaces")
	default:
	}
}

// waitApplied waits until every Workspace of names has applied rev and is
// Ready, reading the test's cache.
func (s *scaleRun) waitApplied(what string, want map[string]string) time.Time {
	deadline := time.Now().Add(scaleTimeout(len(want)))
	lastLog := time.Now()
	for {
		var list magosv1.WorkspaceList
		require.NoError(s.b, s.cache.List(context.Background(), &list, client.InNamespace(s.ns)))
		done := 0
		for i := range list.Items {
			ws := &list.Items[i]
			if rev, ok := want[ws.Name]; ok && appliedRevision(rev)(ws) && conditions.IsTrue(ws, magosv1.ReadyCondition) {
				done++
			}
		}
		if done == len(want) {
			return time.Now()
		}
		if time.Since(lastLog) > time.Minute {
			s.report("%s: %d of %d applied (%d Jobs completed, %d failed: %s)", what, done, len(want), s.sim.Jobs.Load(), s.sim.Errors.Load(), s.sim.LastError())
			lastLog = time.Now()
		}
		require.True(s.b, time.Now().Before(deadline), "%s: only %d of %d Workspaces applied in time; last simulated run error: %s", what, done, len(want), s.sim.LastError())
		time.Sleep(2 * time.Second)
	}
}

// waitObserved waits until the controller has reconciled n Workspaces since
// it started (one magos_resource_info series each).
func (s *scaleRun) waitObserved(n int) time.Time {
	deadline := time.Now().Add(scaleTimeout(n))
	for {
		if f, err := scrapeController(s.ctrl); err == nil && f.observed >= n {
			return time.Now()
		}
		require.True(s.b, time.Now().Before(deadline), "the controller did not reconcile all %d Workspaces in time", n)
		time.Sleep(time.Second)
	}
}

func scaleWorkspaceName(i int) string { return fmt.Sprintf("ws-%05d", i) }

// firstConverge creates the N Workspaces and measures until every one has
// applied its first plan.
func (s *scaleRun) firstConverge() {
	s.startController()
	baseRev, fleetRev := s.publish("base"), s.publish("fleet")
	names := make([]string, s.n)
	want := map[string]string{}
	for i := range names {
		names[i] = scaleWorkspaceName(i)
		want[names[i]] = baseRev
		if i < s.fleet {
			want[names[i]] = fleetRev
		}
	}
	heapBefore := s.liveHeapBytes()
	before := s.measure()
	s.createWorkspaces(names, func(i int, ws *magosv1.Workspace) {
		ws.Spec.SourceRef = magosv1.SourceReference{Kind: "GitRepository", Name: "base"}
		if i < s.fleet {
			ws.Spec.SourceRef.Name = "fleet"
			ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "fleet"}
		}
	})
	created := time.Now()
	s.waitApplied("first converge", want)
	after := s.measure()
	s.reportCycle("first converge (includes each Workspace's one-time setup: ServiceAccounts, RBAC, state and plan Secrets, lock Lease)",
		before, after, s.n, created.Sub(before.at))
	peakMB := after.proc.peakRSSMiB * (1 << 20) / 1e6
	gcShare := (after.ctrl.gcCPUSeconds - before.ctrl.gcCPUSeconds) / (after.proc.cpuSeconds - before.proc.cpuSeconds)
	s.report("  controller peak RSS: %.0f MiB, %.0f MB with no memory limit%s; %.1f KiB per Workspace above the %.0f MiB it had before any",
		after.proc.peakRSSMiB, peakMB, targetNote(peakMB, scaleMemoryTarget/1e6),
		(after.proc.peakRSSMiB-before.proc.rssMiB)*1024/float64(s.n), before.proc.rssMiB)
	s.report("  garbage collector: %.0f%% of the controller's CPU%s", 100*gcShare, targetNote(gcShare, scaleGCShareTarget))
	s.reportLiveHeap(heapBefore)
	s.b.ReportMetric(after.at.Sub(before.at).Seconds(), "first-converge-s")
	s.b.ReportMetric(after.proc.peakRSSMiB, "peak-rss-MiB")
	s.b.ReportMetric(gcShare, "gc-cpu-share")
}

// reportCycle prints the figures of n plan+apply cycles between before and after.
func (s *scaleRun) reportCycle(what string, before, after figures, n int, creating time.Duration) {
	d := after.at.Sub(before.at)
	per := func(v float64) float64 { return v / float64(n) }
	api := after.api.minus(before.api)
	ctrlWrites := after.ctrl.writes - before.ctrl.writes
	s.report("%s: %d Workspaces Applied and Ready in %s (creating them took %s): %.1f cycles/s",
		what, n, d.Round(time.Second), creating.Round(time.Second), float64(n)/d.Seconds())
	s.report("  API writes per plan+apply cycle per Workspace: controller %.1f (target ≤ 12); simulated runner %.1f, simulated job controller and kubelet %.1f; apiserver total %.1f (also the benchmark's own creates)",
		per(ctrlWrites), per(float64(after.simRunner-before.simRunner)), per(float64(after.simCluster-before.simCluster)), per(api.writes))
	s.report("  apiserver writes per cycle by resource (controller, simulated runs and benchmark together): %s", api.breakdown(n))
	s.report("  controller CPU: %.3f s per cycle (%.0f s in all); controller API requests (reads too) per cycle: %.1f; simulated Jobs: %d",
		per(after.proc.cpuSeconds-before.proc.cpuSeconds), after.proc.cpuSeconds-before.proc.cpuSeconds,
		per(after.ctrl.requests-before.ctrl.requests), after.simJobs-before.simJobs)
}

// restart restarts the controller with the N Workspaces applied.
func (s *scaleRun) restart() {
	ctx := context.Background()
	var jobs batchv1.JobList
	require.NoError(s.b, s.c.List(ctx, &jobs, client.InNamespace(s.ns)))
	jobsBefore, simBefore := len(jobs.Items), s.sim.Jobs.Load()
	s.stopController()
	apiBefore := readAPIServerRequests(s.b)
	start := time.Now()
	s.startController()
	observed := s.waitObserved(s.n)
	apiAfter := readAPIServerRequests(s.b)
	// Jobs a restart would start come from the first reconciles; give
	// the requeues that follow a little time too.
	time.Sleep(15 * time.Second)
	after := s.measure()
	require.NoError(s.b, s.c.List(ctx, &jobs, client.InNamespace(s.ns)))
	created := 0
	for _, j := range jobs.Items {
		if !j.CreationTimestamp.Time.Before(start.Truncate(time.Second)) {
			created++
		}
	}
	d := observed.Sub(start)
	api := apiAfter.minus(apiBefore)
	s.report("restart with %d applied Workspaces (%d Jobs kept): %d Jobs created after the restart (target 0; %d simulated runs); every Workspace reconciled again %s after the process started",
		s.n, jobsBefore, created, after.simJobs-simBefore, d.Round(time.Second))
	s.report("  apiserver during the resync: %.0f requests/s (%.0f writes in all); controller: %.0f requests, %.0f writes; controller peak RSS %.0f MiB, %.1f CPU s",
		api.all/d.Seconds(), api.writes, after.ctrl.requests, after.ctrl.writes, after.proc.peakRSSMiB, after.proc.cpuSeconds)
	s.b.ReportMetric(float64(created), "jobs-after-restart")
	s.b.ReportMetric(d.Seconds(), "resync-s")
}

// newRevision publishes a new revision to the fleet's 1,000 Workspaces and
// measures the plan+apply cycle of a Workspace that has its setup.
func (s *scaleRun) newRevision() {
	before := s.measure()
	rev := s.publish("fleet")
	want := map[string]string{}
	for i := range s.fleet {
		want[scaleWorkspaceName(i)] = rev
	}
	s.waitApplied("new revision", want)
	after := s.measure()
	s.reportCycle("new revision of one Project (--max-concurrent-runs 20)", before, after, s.fleet, 0)
	s.b.ReportMetric((after.ctrl.writes-before.ctrl.writes)/float64(s.fleet), "controller-writes/cycle")
	s.b.ReportMetric((after.proc.cpuSeconds-before.proc.cpuSeconds)/float64(s.fleet), "controller-cpu-s/cycle")
}

// boundSweep adds Workspaces to the fleet's Project that re-plan for drift
// every 30s, then for each bound restarts the controller with that Project
// bound and publishes a new revision to the fleet.
func (s *scaleRun) boundSweep() {
	drifting := max(s.fleet/10, 1)
	names := make([]string, drifting)
	want := map[string]string{}
	driftRev := s.publish("drift")
	for i := range names {
		names[i] = fmt.Sprintf("drift-%04d", i)
		want[names[i]] = driftRev
	}
	s.createWorkspaces(names, func(_ int, ws *magosv1.Workspace) {
		ws.Spec.SourceRef = magosv1.SourceReference{Kind: "GitRepository", Name: "drift"}
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "fleet"}
		ws.Spec.Interval = &metav1.Duration{Duration: 30 * time.Second}
	})
	s.waitApplied("drifting Workspaces", want)
	total := s.n + drifting
	var driftStarts, inversions atomic.Int64
	queue := s.watchFleetQueue()
	s.sim.OnCreate(func(job *batchv1.Job) {
		if job.Annotations[magosv1.DriftAnnotation] == "true" {
			driftStarts.Add(1)
			if queue.waitingSince(job.CreationTimestamp.Time) > 0 {
				inversions.Add(1)
			}
		}
	})
	for _, bound := range scaleBounds {
		driftStarts.Store(0)
		inversions.Store(0)
		s.stopController()
		s.startController("--max-concurrent-runs=0", "--max-concurrent-runs-per-project="+strconv.Itoa(bound))
		s.waitObserved(total)
		rev := s.publish("fleet")
		start := time.Now()
		fleet := map[string]string{}
		for i := range s.fleet {
			fleet[scaleWorkspaceName(i)] = rev
		}
		done := s.waitApplied(fmt.Sprintf("bound %d", bound), fleet)
		perMinute := float64(s.fleet) / done.Sub(start).Minutes()
		waits := readQueueWait(readControllerFigures(s.b, s.ctrl).metrics)
		s.report("Project bound %d, %d drifting Workspaces of the Project re-planning every 30s: %d applies in %s = %.0f applies/min",
			bound, drifting, s.fleet, done.Sub(start).Round(time.Second), perMinute)
		s.report("  drift re-plans started while a run of the Project above them had waited over a second (priority inversions): %d of %d drift re-plans (target 0)",
			inversions.Load(), driftStarts.Load())
		s.report("  run queue waits (magos_workspace_run_queue_wait_seconds): urgent (applies, destroys) %s; normal (new revision and requested plans) %s; drift %s",
			waits["urgent"], waits["normal"], waits["drift"])
		s.b.ReportMetric(perMinute, fmt.Sprintf("bound%d-applies/min", bound))
	}
}

// queueWatch follows which Workspaces of the fleet's Project, other than
// the drifting ones, wait in the run queue, and since when (by this
// process's clock, when its cache first saw them Queued).
type queueWatch struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// watchFleetQueue starts following the fleet's queued runs.
func (s *scaleRun) watchFleetQueue() *queueWatch {
	q := &queueWatch{since: map[string]time.Time{}}
	inf, err := s.cache.GetInformer(context.Background(), &magosv1.Workspace{})
	require.NoError(s.b, err)
	observe := func(obj any) {
		ws, ok := obj.(*magosv1.Workspace)
		if !ok || ws.Spec.ProjectRef == nil || ws.Spec.ProjectRef.Name != "fleet" || strings.HasPrefix(ws.Name, "drift-") {
			return
		}
		ready := conditions.Get(ws, magosv1.ReadyCondition)
		queued := ws.Status.Phase == magosv1.PhaseWaiting && ready != nil && ready.Reason == magosv1.ReasonQueued
		q.mu.Lock()
		defer q.mu.Unlock()
		if _, seen := q.since[ws.Name]; queued && !seen {
			q.since[ws.Name] = time.Now()
		} else if !queued {
			delete(q.since, ws.Name)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, obj any) { observe(obj) }})
	require.NoError(s.b, err)
	return q
}

// waitingSince is how many of the fleet's runs still wait and have waited
// since over a second before t: runs of a higher priority than a drift
// re-plan whose Job was created at t (a creation time has whole seconds,
// and the controller decides a little before it creates).
func (q *queueWatch) waitingSince(t time.Time) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, since := range q.since {
		if since.Add(time.Second).Before(t) {
			n++
		}
	}
	return n
}
