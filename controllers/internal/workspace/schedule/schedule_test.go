package schedule

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/runqueue"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

func TestRunPriority(t *testing.T) {
	plan := decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan})
	requested := plan
	requested.HandlesRequest = true
	tests := []struct {
		name string
		d    decide.Decision
		f    decide.Facts
		want runqueue.Priority
	}{
		{"an apply", decide.StartDecision(runjob.Run{Phase: magosv1.RunApply}), decide.Facts{}, runqueue.Urgent},
		{"a destroy without a plan", decide.StartDecision(runjob.Run{Phase: magosv1.RunDestroy}), decide.Facts{}, runqueue.Urgent},
		{"a plan of a reconcile request is not urgent", requested, decide.Facts{}, runqueue.Normal},
		{"a plan of a plan request is not urgent", plan, decide.Facts{Request: &magosv1.PlanRequest{ID: "r1"}}, runqueue.Normal},
		{"a destroy plan of a deleted Workspace", plan, decide.Facts{Deletion: &decide.DeletionFacts{}}, runqueue.Urgent},
		{"a destroy plan of a deleted Workspace asked for again", requested, decide.Facts{Deletion: &decide.DeletionFacts{}}, runqueue.Urgent},
		{"a plan of a new revision", plan, decide.Facts{}, runqueue.Normal},
		{"a drift re-plan", decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan, Drift: true}), decide.Facts{}, runqueue.Drift},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, runPriority(tt.d, tt.f)) })
	}
}

func TestRequestedPlan(t *testing.T) {
	plan := decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan})
	requested := plan
	requested.HandlesRequest = true
	apply := decide.StartDecision(runjob.Run{Phase: magosv1.RunApply})
	apply.HandlesRequest = true
	assert.True(t, requestedPlan(requested, decide.Facts{}), "a reconcile request")
	assert.True(t, requestedPlan(plan, decide.Facts{Request: &magosv1.PlanRequest{ID: "r1"}}), "a plan request")
	assert.False(t, requestedPlan(plan, decide.Facts{}), "a plan of a new revision")
	assert.False(t, requestedPlan(apply, decide.Facts{}), "an apply is not rate-limited")
	assert.False(t, requestedPlan(requested, decide.Facts{Deletion: &decide.DeletionFacts{}}), "a deletion's plan is not rate-limited")
}

// Each namespace has one requested plan at normal priority per interval;
// the namespaces are counted apart, and the limit forgets a namespace once
// its interval ended.
func TestRequestLimitPerNamespace(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	l := &requestLimit{interval: time.Minute}
	assert.False(t, l.limited("ns-a", start), "the first requested plan")
	l.admitted("ns-a", start)
	assert.True(t, l.limited("ns-a", start.Add(59*time.Second)), "another within the interval")
	assert.False(t, l.limited("ns-b", start.Add(30*time.Second)), "another namespace's")
	l.admitted("ns-b", start.Add(30*time.Second))
	assert.False(t, l.limited("ns-a", start.Add(time.Minute)), "once the interval ended")
	l.admitted("ns-c", start.Add(70*time.Second))
	assert.Equal(t, []string{"ns-b", "ns-c"}, slices.Sorted(maps.Keys(l.last)), "ns-a's interval ended")

	off := &requestLimit{}
	off.admitted("ns-a", start)
	assert.False(t, off.limited("ns-a", start), "no interval, no limit")
	assert.Empty(t, off.last)
}

// TestQueued: a run the queue or the plan rate holds waits without a Job,
// its message naming the bound, never its position.
func TestQueued(t *testing.T) {
	limits := runqueue.Limits{Total: 4, PerNamespace: 3, PerProject: 2}
	f := decide.Facts{Revision: "main@sha1:abc"}
	held := func(p runqueue.Priority, v runqueue.Verdict, limited time.Duration) *decide.HeldRun {
		return &decide.HeldRun{After: queuedRecheck, Priority: p.String(), Bound: queueBound(limits, v), Limited: limited}
	}

	d := decide.Queued(decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan}), f, held(runqueue.Normal, runqueue.Verdict{Position: 3}, 0))
	assert.Equal(t, magosv1.PhaseWaiting, d.Phase)
	assert.Equal(t, magosv1.ReasonQueued, d.Reason)
	assert.True(t, d.Queued)
	assert.Equal(t, decide.ActWait, d.Action)
	assert.Equal(t, queuedRecheck, d.After)
	assert.Contains(t, d.Message, "The plan run is queued (priority normal): this controller runs at most 4 runs at once")
	assert.NotContains(t, d.Message, "3", "the position is not in status: it changes with every admission")

	d = decide.Queued(decide.StartDecision(runjob.Run{Phase: magosv1.RunApply}), f, held(runqueue.Urgent, runqueue.Verdict{ByProject: true}, 0))
	assert.Contains(t, d.Message, "The apply run is queued (priority urgent): the Workspaces of this Project run at most 2 runs at once")

	d = decide.Queued(decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan}), f, held(runqueue.Normal, runqueue.Verdict{ByNamespace: true}, 0))
	assert.Contains(t, d.Message, "The plan run is queued (priority normal): the Workspaces of this namespace run at most 3 runs at once (--max-concurrent-runs-per-namespace)")

	d = decide.Queued(decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan}), f, held(runqueue.Normal, runqueue.Verdict{ByShare: true}, 0))
	assert.Contains(t, d.Message, "The plan run is queued (priority normal): the namespaces waiting share this controller's 4 runs (--max-concurrent-runs), and this namespace's Workspaces hold their share while another namespace below its own waits")

	requested := decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan})
	requested.HandlesRequest = true
	d = decide.Queued(requested, f, held(runqueue.Drift, runqueue.Verdict{}, time.Minute))
	assert.Equal(t, magosv1.PhaseWaiting, d.Phase, "a requested plan at drift priority is no drift check: the Workspace waits")
	assert.Equal(t, magosv1.ReasonQueued, d.Reason)
	assert.False(t, d.HandlesRequest, "the request is handled when its plan starts")
	assert.Contains(t, d.Message, "(priority drift)")
	assert.Contains(t, d.Message, "started less than 1m0s ago (--requested-plan-interval)")

	d = decide.Queued(decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan, Drift: true}), f, held(runqueue.Drift, runqueue.Verdict{}, 0))
	assert.Equal(t, magosv1.PhaseIdle, d.Phase, "a queued drift check leaves the Workspace Ready")
	assert.Empty(t, d.Reason)
	assert.True(t, d.Queued)
	assert.Equal(t, "Applied revision main@sha1:abc; the drift plan is queued: this controller runs at most 4 runs at once (--max-concurrent-runs)", d.Message)

	rate := NewPlanRate(5, time.Minute)
	d = decide.Queued(decide.StartDecision(runjob.Run{Phase: magosv1.RunPlan}), f, &decide.HeldRun{After: 12 * time.Second, Bound: rate.bound()})
	assert.Equal(t, magosv1.ReasonQueued, d.Reason)
	assert.Equal(t, 12*time.Second, d.After, "the plan rate says when to look again")
	assert.Equal(t, "The plan run waits 12s: the Workspaces of this namespace started 5 plans in the last 1m0s (--max-plans-per-namespace-per-minute), the most they may", d.Message)
}

func TestJitteredInterval(t *testing.T) {
	const interval = time.Hour
	assert.Equal(t, interval, JitteredInterval(interval, "a", 0), "no jitter")
	assert.Equal(t, time.Duration(0), JitteredInterval(0, "a", 0.1), "no interval")
	assert.Equal(t, JitteredInterval(interval, "ws/plan-1", 0.1), JitteredInterval(interval, "ws/plan-1", 0.1), "one plan waits one interval, however often it is reconciled")

	// 1,000 Workspaces planned at once re-plan over the last tenth of the
	// interval, never later than it, spread over every minute of it.
	minutes := map[int]int{}
	for i := range 1000 {
		d := JitteredInterval(interval, fmt.Sprintf("uid-%d/plan", i), 0.1)
		assert.LessOrEqual(t, d, interval)
		assert.GreaterOrEqual(t, d, interval-6*time.Minute)
		minutes[int((interval-d)/time.Minute)]++
	}
	assert.Len(t, minutes, 6)
	for m, n := range minutes {
		assert.Less(t, n, 250, "minute %d has %d of 1,000 re-plans", m, n)
	}
}
