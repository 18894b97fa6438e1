package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// RunTimeline records, from watches of one Workspace's Jobs and Pods
// started at a publish, when its plan and apply Jobs and their Pods
// appeared, started and ended, and the step timings each runner reported:
// where the time from a new revision to Applied goes. It watches rather
// than polls, so measuring costs the apiserver and the cores the run
// competes for next to nothing.
type RunTimeline struct {
	start time.Time
	mu    sync.Mutex
	seen  map[string]time.Duration // event → first seen, from start
	steps map[string]magosv1.RunSteps
}

// Timeline events, per phase (plan, apply).
const (
	eventJobCreated = "job created"
	eventPodCreated = "pod created"
	eventPodRunning = "pod running"
	eventPodEnded   = "pod ended"
)

// WatchRun watches the Jobs and Pods of workspace in namespace ns until
// ctx ends; start is when the revision was published.
func WatchRun(ctx context.Context, cfg *rest.Config, ns, workspace string, start time.Time) *RunTimeline {
	tl := &RunTimeline{start: start, seen: map[string]time.Duration{}, steps: map[string]magosv1.RunSteps{}}
	cs := kubernetes.NewForConfigOrDie(cfg)
	opts := metav1.ListOptions{LabelSelector: magosv1.WorkspaceLabel + "=" + workspace}
	jobs, err := cs.BatchV1().Jobs(ns).Watch(ctx, opts)
	if err != nil {
		return tl // segments reports the missed events
	}
	pods, err := cs.CoreV1().Pods(ns).Watch(ctx, opts)
	if err != nil {
		jobs.Stop()
		return tl
	}
	go func() {
		defer jobs.Stop()
		defer pods.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-jobs.ResultChan():
				if job, ok := ev.Object.(*batchv1.Job); ok {
					tl.observeJob(job)
				}
			case ev := <-pods.ResultChan():
				if pod, ok := ev.Object.(*corev1.Pod); ok {
					tl.observePod(pod)
				}
			}
		}
	}()
	return tl
}

// fresh says whether obj belongs to the run under watch rather than to an
// earlier revision's.
func (tl *RunTimeline) fresh(obj metav1.Object) bool {
	return obj.GetCreationTimestamp().After(tl.start.Add(-time.Second))
}

func (tl *RunTimeline) observeJob(job *batchv1.Job) {
	if tl.fresh(job) {
		tl.mark(job.Labels[magosv1.PhaseLabel], eventJobCreated)
	}
}

func (tl *RunTimeline) observePod(pod *corev1.Pod) {
	if !tl.fresh(pod) {
		return
	}
	phase := pod.Labels[magosv1.PhaseLabel]
	tl.mark(phase, eventJobCreated) // a Pod's Job exists before it
	tl.mark(phase, eventPodCreated)
	switch pod.Status.Phase {
	case corev1.PodRunning:
		tl.mark(phase, eventPodRunning)
	case corev1.PodSucceeded, corev1.PodFailed:
		tl.mark(phase, eventPodRunning)
		tl.mark(phase, eventPodEnded)
		tl.readSteps(phase, pod)
	}
}

func (tl *RunTimeline) mark(phase, event string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	key := phase + " " + event
	if _, ok := tl.seen[key]; !ok {
		tl.seen[key] = time.Since(tl.start)
	}
}

func (tl *RunTimeline) readSteps(phase string, pod *corev1.Pod) {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.Message != "" {
			var res magosv1.RunResult
			if json.Unmarshal([]byte(t.Message), &res) == nil && res.Steps != nil {
				tl.mu.Lock()
				tl.steps[phase] = *res.Steps
				tl.mu.Unlock()
			}
		}
	}
}

// at is when event of phase was first seen; ok is false if it never was.
func (tl *RunTimeline) at(phase, event string) (time.Duration, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	d, ok := tl.seen[phase+" "+event]
	return d, ok
}

// RunSegment is one stretch of a run from a new revision to Applied.
type RunSegment struct {
	name    string
	seconds float64
}

// Segments splits the time from publish to applied into what the source
// and controller took to start each Job (a plan and an apply Job, or the
// fast path's one), the Job's way to a running Pod, the runner's steps and
// the rest of its Pod's life, and the controller's work after each Pod
// ended. It returns nil if an event was missed.
func (tl *RunTimeline) Segments(applied time.Duration) []RunSegment {
	var out []RunSegment
	prev := time.Duration(0)
	after := map[string]string{
		magosv1.RunPlan:      "publish → plan Job (source, controller)",
		magosv1.RunApply:     "plan Pod ended → apply Job (controller: result, policy, status)",
		magosv1.RunPlanApply: "publish → plan-apply Job (source, controller)",
	}
	phases := []string{magosv1.RunPlan, magosv1.RunApply}
	if _, fast := tl.at(magosv1.RunPlanApply, eventJobCreated); fast {
		phases = []string{magosv1.RunPlanApply}
	}
	for _, phase := range phases {
		created, ok1 := tl.at(phase, eventJobCreated)
		running, ok2 := tl.at(phase, eventPodRunning)
		ended, ok3 := tl.at(phase, eventPodEnded)
		if !ok1 || !ok2 || !ok3 {
			return nil
		}
		tl.mu.Lock()
		steps := tl.steps[phase]
		tl.mu.Unlock()
		pod := (ended - running).Seconds()
		out = append(out,
			RunSegment{after[phase], (created - prev).Seconds()},
			RunSegment{phase + ": Job → Pod running (executor or kubelet)", (running - created).Seconds()},
			RunSegment{phase + ": runner fetch", steps.Fetch},
			RunSegment{phase + ": runner engine init", steps.Init},
			RunSegment{phase + ": runner engine " + phase, steps.Engine},
			RunSegment{phase + ": runner render (show -json)", steps.Render},
			RunSegment{phase + ": runner plan storage", steps.Storage},
			RunSegment{phase + ": runner start, text, outputs, report", pod - steps.Fetch - steps.Init - steps.Engine - steps.Render - steps.Storage},
		)
		prev = ended
	}
	return append(out, RunSegment{"last Pod ended → Applied (controller: result, status)", (applied - prev).Seconds()})
}

// AddSegments adds segs, one run's Segments, to sum, the runs' so far.
func AddSegments(sum, segs []RunSegment) []RunSegment {
	if sum == nil {
		sum = make([]RunSegment, len(segs))
	}
	for i, seg := range segs {
		sum[i].name = seg.name
		sum[i].seconds += seg.seconds
	}
	return sum
}

// FormatSegments renders segments averaged over n runs, with each
// stretch's share of the total.
func FormatSegments(sum []RunSegment, n int) string {
	total := 0.0
	for _, s := range sum {
		total += s.seconds
	}
	var b strings.Builder
	for _, s := range sum {
		fmt.Fprintf(&b, "  %-62s %6.2fs %5.1f%%\n", s.name, s.seconds/float64(n), 100*s.seconds/total)
	}
	fmt.Fprintf(&b, "  %-62s %6.2fs\n", "total", total/float64(n))
	return b.String()
}

// EngineTime is the time the engine's own init, plan and apply took in the
// runs seen, as the runners reported it.
func (tl *RunTimeline) EngineTime() time.Duration {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	total := 0.0
	for _, st := range tl.steps {
		total += st.Init + st.Engine
	}
	return time.Duration(total * float64(time.Second))
}
