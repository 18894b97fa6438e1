package progress

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func threeStages() *magosv1.Rollout {
	return &magosv1.Rollout{Spec: magosv1.RolloutSpec{Stages: []magosv1.Stage{
		{Name: "dev"}, {Name: "staging", MaxParallel: ptr.To[int32](1)}, {Name: "prod", Promotion: magosv1.PromotionManual},
	}}}
}

// pendingMembers is two members per stage that have applied old.
func pendingMembers(old string) [][]Member {
	out := make([][]Member, 3)
	for i, stage := range []string{"dev", "staging", "prod"} {
		out[i] = []Member{{Name: stage + "-a", AppliedRevision: old, Ready: true}, {Name: stage + "-b", AppliedRevision: old, Ready: true}}
	}
	return out
}

// step runs Stages and stores the result as the Rollout's status.
func step(ro *magosv1.Rollout, o Facts) Result {
	res := Stages(ro, o)
	ro.Status.Revision, ro.Status.Stages = o.Revision, res.Stages
	return res
}

func phases(ro *magosv1.Rollout) []magosv1.StagePhase {
	var out []magosv1.StagePhase
	for _, st := range ro.Status.Stages {
		out = append(out, st.Phase)
	}
	return out
}

func applyAll(ms []Member, rev string) {
	for i := range ms {
		ms[i].AppliedRevision, ms[i].Ready = rev, true
	}
}

func TestProgressAdmitsStageByStage(t *testing.T) {
	ro := threeStages()
	m := pendingMembers("r1")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageProgressing, magosv1.StagePending, magosv1.StagePending}, phases(ro))
	assert.Equal(t, "r2", ro.Status.Stages[0].AdmittedRevision)
	assert.Equal(t, []string{"dev-a", "dev-b"}, ro.Status.Stages[0].AdmittedWorkspaces)
	assert.Empty(t, ro.Status.Stages[1].AdmittedRevision, "staging must not be admitted before dev applied")

	m[0][0].AppliedRevision = "r2"
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(time.Minute)})
	assert.Equal(t, magosv1.StageProgressing, ro.Status.Stages[0].Phase)
	assert.Equal(t, []string{"dev-b"}, ro.Status.Stages[0].AdmittedWorkspaces)

	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(2 * time.Minute)})
	require.Equal(t, []magosv1.StagePhase{magosv1.StageSucceeded, magosv1.StageProgressing, magosv1.StagePending}, phases(ro))
	assert.Equal(t, []string{"staging-a"}, ro.Status.Stages[1].AdmittedWorkspaces, "maxParallel 1 admits one Workspace")
	assert.Equal(t, t0.Add(2*time.Minute), ro.Status.Stages[1].Started.Time)

	m[1][0].AppliedRevision = "r2"
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(3 * time.Minute)})
	assert.Equal(t, []string{"staging-b"}, ro.Status.Stages[1].AdmittedWorkspaces)

	applyAll(m[1], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(4 * time.Minute)})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageSucceeded, magosv1.StageSucceeded, magosv1.StageWaitingForPromotion}, phases(ro))
	assert.Empty(t, ro.Status.Stages[2].AdmittedRevision)
	assert.Contains(t, ro.Status.Stages[2].Message, "{stage: prod, revision: r2}")

	ro.Spec.Promotions = []magosv1.Promotion{{Stage: "prod", Revision: "r1"}}
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(5 * time.Minute)})
	assert.Equal(t, magosv1.StageWaitingForPromotion, ro.Status.Stages[2].Phase, "a promotion of another revision does not count")

	ro.Spec.Promotions = append(ro.Spec.Promotions, magosv1.Promotion{Stage: "prod", Revision: "r2"})
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(6 * time.Minute)})
	assert.Equal(t, magosv1.StageProgressing, ro.Status.Stages[2].Phase)
	assert.Equal(t, "r2", ro.Status.Stages[2].AdmittedRevision)

	applyAll(m[2], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(7 * time.Minute)})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageSucceeded, magosv1.StageSucceeded, magosv1.StageSucceeded}, phases(ro))
	ComputeStatus(ro, Observation{})
	assert.Equal(t, magosv1.ReasonRolledOut, readyReason(ro))
}

func TestProgressBakes(t *testing.T) {
	ro := threeStages()
	ro.Spec.Stages[0].BakeTime = &metav1.Duration{Duration: 10 * time.Minute}
	m := pendingMembers("r1")
	applyAll(m[0], "r2")
	res := step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	assert.Equal(t, magosv1.StageBaking, ro.Status.Stages[0].Phase)
	assert.Equal(t, 10*time.Minute, res.RequeueAfter)
	assert.Empty(t, ro.Status.Stages[1].AdmittedRevision)

	m[0][1].Ready = false
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(5 * time.Minute)})
	assert.Equal(t, magosv1.StageProgressing, ro.Status.Stages[0].Phase, "a member no longer Ready interrupts the bake")

	m[0][1].Ready = true
	res = step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(6 * time.Minute)})
	assert.Equal(t, magosv1.StageBaking, ro.Status.Stages[0].Phase)
	assert.Equal(t, 10*time.Minute, res.RequeueAfter, "the bake restarts")

	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(16 * time.Minute)})
	assert.Equal(t, magosv1.StageSucceeded, ro.Status.Stages[0].Phase)
	assert.Equal(t, "r2", ro.Status.Stages[1].AdmittedRevision)
}

func TestProgressHaltsAndResumes(t *testing.T) {
	ro := threeStages()
	m := pendingMembers("r1")
	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	require.Equal(t, magosv1.StageProgressing, ro.Status.Stages[1].Phase)

	m[1][0].Failing, m[1][0].Message = true, "PolicyViolation: denied"
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(time.Minute)})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageSucceeded, magosv1.StageHalted, magosv1.StagePending}, phases(ro))
	assert.Contains(t, ro.Status.Stages[1].Message, "staging-a")
	assert.Contains(t, ro.Status.Stages[1].Message, "denied")
	assert.Equal(t, []string{"staging-a"}, ro.Status.Stages[1].AdmittedWorkspaces, "a halted stage admits no one new")
	ComputeStatus(ro, Observation{})
	assert.True(t, isTrue(ro, magosv1.HaltedCondition))
	assert.True(t, isTrue(ro, magosv1.StalledCondition))

	m[1][0].Failing = false
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(2 * time.Minute)})
	assert.Equal(t, magosv1.StageProgressing, ro.Status.Stages[1].Phase, "the stage resumes once the failure is fixed")
	ComputeStatus(ro, Observation{})
	assert.False(t, isTrue(ro, magosv1.HaltedCondition))
}

func TestProgressRestartsOnANewRevision(t *testing.T) {
	ro := threeStages()
	m := pendingMembers("r1")
	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	require.Equal(t, "r2", ro.Status.Stages[1].AdmittedRevision)

	step(ro, Facts{Revision: "r3", Members: m, Now: t0.Add(time.Minute)})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageProgressing, magosv1.StagePending, magosv1.StagePending}, phases(ro))
	assert.Equal(t, "r3", ro.Status.Stages[0].AdmittedRevision)
	assert.Empty(t, ro.Status.Stages[1].AdmittedRevision, "staging loses r2 and waits for dev to apply r3")
	assert.Empty(t, ro.Status.Stages[1].AdmittedWorkspaces)
}

func TestProgressSuspendAndAbort(t *testing.T) {
	ro := threeStages()
	ro.Spec.Suspend = true
	m := pendingMembers("r1")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	assert.Equal(t, magosv1.StagePending, ro.Status.Stages[0].Phase)
	ComputeStatus(ro, Observation{})
	assert.Equal(t, magosv1.SuspendedReason, readyReason(ro))

	ro.Spec.Suspend = false
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	ro.Spec.Suspend = true
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	assert.Equal(t, magosv1.StageProgressing, ro.Status.Stages[0].Phase, "suspend keeps admitted stages going")
	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	assert.Empty(t, ro.Status.Stages[1].AdmittedRevision, "suspend admits no further stage")

	ro.Spec.Suspend = false
	m = pendingMembers("r1")
	step(ro, Facts{Revision: "r3", Members: m, Now: t0})
	step(ro, Facts{Revision: "r3", Members: m, Now: t0, Aborted: true})
	assert.Equal(t, magosv1.StageHalted, ro.Status.Stages[0].Phase)
	assert.Empty(t, ro.Status.Stages[0].AdmittedWorkspaces, "an aborted stage admits no one")
	assert.Equal(t, magosv1.StageHalted, ro.Status.Stages[1].Phase, "stages not reached are halted too")
	assert.Empty(t, ro.Status.Stages[1].AdmittedRevision)
	ComputeStatus(ro, Observation{Aborted: true})
	assert.Equal(t, magosv1.ReasonAborted, readyReason(ro))
}

func TestProgressAdmitsAJoinerOfASucceededStage(t *testing.T) {
	ro := threeStages()
	m := pendingMembers("r1")
	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	require.Equal(t, magosv1.StageSucceeded, ro.Status.Stages[0].Phase)
	m[0] = append(m[0], Member{Name: "dev-c"})
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	assert.Equal(t, magosv1.StageSucceeded, ro.Status.Stages[0].Phase)
	assert.Equal(t, []string{"dev-c"}, ro.Status.Stages[0].AdmittedWorkspaces)
}

func readyReason(ro *magosv1.Rollout) string {
	for _, c := range ro.Status.Conditions {
		if c.Type == magosv1.ReadyCondition {
			return c.Reason
		}
	}
	return ""
}

func isTrue(ro *magosv1.Rollout, t string) bool {
	for _, c := range ro.Status.Conditions {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func TestProgressHoldsLaterStagesBehindAnInsertedStage(t *testing.T) {
	ro := threeStages()
	m := pendingMembers("r1")
	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0})
	require.Equal(t, "r2", ro.Status.Stages[1].AdmittedRevision)

	ro.Spec.Stages = append([]magosv1.Stage{{Name: "canary"}}, ro.Spec.Stages...)
	m = append([][]Member{{{Name: "canary-a", AppliedRevision: "r1", Ready: true}}}, m...)
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(time.Minute)})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageProgressing, magosv1.StagePending, magosv1.StagePending, magosv1.StagePending}, phases(ro))
	assert.Empty(t, ro.Status.Stages[2].AdmittedRevision, "staging waits for the inserted canary stage")

	applyAll(m[0], "r2")
	step(ro, Facts{Revision: "r2", Members: m, Now: t0.Add(2 * time.Minute)})
	assert.Equal(t, []magosv1.StagePhase{magosv1.StageSucceeded, magosv1.StageSucceeded, magosv1.StageProgressing, magosv1.StagePending}, phases(ro),
		"dev had applied r2 already and succeeds again at once")
}
