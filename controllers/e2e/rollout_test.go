package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// threeStages is dev, staging (one Workspace at a time) and prod (Manual).
func threeStages() []magosv1.Stage {
	return []magosv1.Stage{
		{Name: "dev", Selector: envSelector("dev")},
		{Name: "staging", Selector: envSelector("staging"), MaxParallel: ptr.To[int32](1)},
		{Name: "prod", Selector: envSelector("prod"), Promotion: magosv1.PromotionManual},
	}
}

// awaitingPromotion is a wait condition: the Workspace planned revision and
// waits for its stage, still at applied revision (or none).
func awaitingPromotion(revision, applied string) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		a := ws.Status.LastApplied
		return ws.Status.Phase == magosv1.PhaseAwaitingPromotion && ws.Status.Plan != nil && ws.Status.Plan.Revision == revision &&
			((applied == "" && a == nil) || (a != nil && a.Revision == applied))
	}
}

func TestRolloutPromotesStageByStage(t *testing.T) {
	env.Require(t)
	f := newRolloutFixture(t, 2, threeStages(), nil)
	rev1 := f.rollout().Status.Revision
	f.waitRollout(3*time.Minute, "prod waits for promotion of the first revision", func(ro *magosv1.Rollout) bool {
		rev1 = ro.Status.Revision
		return rev1 != "" && stageIs("prod", magosv1.StageWaitingForPromotion, rev1)(ro)
	})
	for _, name := range f.stages[2] {
		ws := f.waitWorkspace(name, time.Minute, "planned and awaiting promotion", awaitingPromotion(rev1, ""))
		ready := conditionOf(ws.Status.Conditions, magosv1.ReadyCondition)
		assert.Equal(t, magosv1.ReasonAwaitingPromotion, ready.Reason)
		assert.Contains(t, ready.Message, "Waits for stage prod of Rollout release to admit revision "+rev1)
	}
	assert.Empty(t, f.applies.of("", f.stages[2]...), "prod applied nothing before its promotion")
	f.promote("prod", rev1)
	f.waitRollout(3*time.Minute, "the first revision rolled out", rolledOut(rev1))
	var fast batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &fast, client.InNamespace(f.ns), client.MatchingLabels{magosv1.PhaseLabel: magosv1.RunPlanApply}))
	assert.Empty(t, fast.Items, "a Rollout decides on its Workspaces' plans: none takes the fast path")

	t.Run("a new commit reaches dev, then staging one at a time, then prod once promoted", func(t *testing.T) {
		rev2 := f.commit("v2")
		ro := f.waitRollout(3*time.Minute, "prod waits for promotion", stageIs("prod", magosv1.StageWaitingForPromotion, rev2))
		assert.Equal(t, magosv1.ReadyCondition, conditionOf(ro.Status.Conditions, magosv1.ReadyCondition).Type)
		assert.Equal(t, string(magosv1.StageWaitingForPromotion), conditionOf(ro.Status.Conditions, magosv1.ReadyCondition).Reason)
		for _, name := range f.stages[2] {
			f.waitWorkspace(name, time.Minute, "plans ahead and keeps the old revision", awaitingPromotion(rev2, rev1))
		}
		assert.Empty(t, f.applies.of(rev2, f.stages[2]...), "prod applied nothing of the new revision before its promotion")

		f.promote("prod", rev2)
		ro = f.waitRollout(3*time.Minute, "rolled out", rolledOut(rev2))
		f.assertStagesInOrder(rev2, 1)
		f.assertStatusTimesInOrder(ro, rev2)
	})

	t.Run("a restarted controller resumes mid-rollout without re-applying", func(t *testing.T) {
		rev3 := f.commit("v3")
		f.promote("prod", rev3)
		before := f.waitRollout(3*time.Minute, "staging is admitted", func(ro *magosv1.Rollout) bool {
			return ro.Status.Revision == rev3 && stageOf(ro, "staging").AdmittedRevision == rev3
		})
		f.stopController()
		time.Sleep(2 * time.Second) // downtime, not synchronisation: runs admitted before the stop go on without the controllers
		f.startController()
		ro := f.waitRollout(3*time.Minute, "rolled out after the restart", rolledOut(rev3))
		assert.Equal(t, stageOf(before, "dev").Started, stageOf(ro, "dev").Started, "the restart kept the stage's admission")
		f.assertStagesInOrder(rev3, 1)
		for _, names := range f.stages {
			for _, name := range names {
				assert.Len(t, f.applies.of("", name), 3, "Workspace %s applied each revision exactly once", name)
			}
		}
		assert.Eventually(t, func() bool { return hasEvent(t, f.ns, "release", "StageSucceeded") }, 10*time.Second, 250*time.Millisecond,
			"stage transitions are recorded as events")
	})

	t.Run("a Workspace in no stage is reported and waits; labelled, it joins its stage", func(t *testing.T) {
		rev := f.rollout().Status.Revision
		f.newWorkspace("stray", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "app"}
		})
		f.waitRollout(time.Minute, "reports the stray Workspace", func(ro *magosv1.Rollout) bool {
			ready := conditionOf(ro.Status.Conditions, magosv1.ReadyCondition)
			return len(ro.Status.UnstagedWorkspaces) == 1 && ro.Status.UnstagedWorkspaces[0] == "stray" &&
				ready != nil && strings.Contains(ready.Message, "in no stage")
		})
		ws := f.waitWorkspace("stray", 2*time.Minute, "planned, waiting", awaitingPromotion(rev, ""))
		assert.Contains(t, conditionOf(ws.Status.Conditions, magosv1.ReadyCondition).Message, "No stage of Rollout release selects this Workspace")
		assert.Empty(t, f.applies.of("", "stray"))

		patch := client.MergeFrom(ws.DeepCopy())
		ws.Labels = map[string]string{"env": "dev"}
		require.NoError(t, env.Client.Patch(context.Background(), ws, patch))
		f.waitWorkspace("stray", 2*time.Minute, "joins dev, which admitted the revision, and applies it", appliedRevision(rev))
		ro := f.waitRollout(time.Minute, "dev lists it", func(ro *magosv1.Rollout) bool {
			return len(ro.Status.UnstagedWorkspaces) == 0 && len(stageOf(ro, "dev").Workspaces) == 3 && rolledOut(rev)(ro)
		})
		assert.Equal(t, magosv1.StageSucceeded, stageOf(ro, "dev").Phase)
	})
}

// TestRolloutHalts: one Workspace per stage; staging selects a policy that
// denies the "bad" release.
func TestRolloutHalts(t *testing.T) {
	env.Require(t)
	label := rand.String(8)
	policy := validatingPolicy(t, "v1", label, "Deny",
		`!object.resource_changes.exists(rc, rc.type == 'terraform_data' && rc.change.after.input == 'staging:bad')`,
		"staging must not run the bad release")
	f := newRolloutFixture(t, 1, threeStages(), func(ws *magosv1.Workspace) {
		if ws.Labels["env"] == "staging" {
			selecting(label)(ws)
		}
	})
	var rev1 string
	f.waitRollout(3*time.Minute, "prod waits", func(ro *magosv1.Rollout) bool {
		rev1 = ro.Status.Revision
		return rev1 != "" && stageIs("prod", magosv1.StageWaitingForPromotion, rev1)(ro)
	})
	f.promote("prod", rev1)
	f.waitRollout(3*time.Minute, "the first revision rolled out", rolledOut(rev1))
	// Other tests' Rollouts (an aborted one, say) may be halted in this
	// process too: count this one against what was halted before it.
	haltedBefore := metricSum(t, "magos_rollouts_halted")

	rev2 := f.commit("bad")
	var rev4, rev5 string
	t.Run("a policy failure in staging halts the rollout and prod keeps its revision", func(t *testing.T) {
		f.promote("prod", rev2)
		ro := f.waitRollout(3*time.Minute, "halted in staging", stageIs("staging", magosv1.StageHalted, rev2))
		halted := conditionOf(ro.Status.Conditions, magosv1.HaltedCondition)
		require.NotNil(t, halted)
		assert.Equal(t, "True", string(halted.Status))
		assert.Contains(t, halted.Message, "staging-a")
		assert.Contains(t, halted.Message, "staging must not run the bad release")
		assert.Equal(t, "True", string(conditionOf(ro.Status.Conditions, magosv1.StalledCondition).Status))
		assert.Equal(t, magosv1.StageSucceeded, stageOf(ro, "dev").Phase, "dev applied the revision")
		assert.Equal(t, magosv1.StagePending, stageOf(ro, "prod").Phase)
		assert.Eventually(t, func() bool { return hasEvent(t, f.ns, "release", "StageHalted") }, 10*time.Second, 250*time.Millisecond)
		assert.Equal(t, haltedBefore+1, metricSum(t, "magos_rollouts_halted"), "the halted Rollout is counted")
		assert.Eventually(t, func() bool { return rolloutPhaseSeries(t, f.ns, "Halted") }, 10*time.Second, 100*time.Millisecond,
			"magos_resource_info names the halted Rollout")

		ws := f.waitWorkspace("prod-a", time.Minute, "plans ahead, keeps the old revision", awaitingPromotion(rev2, rev1))
		assert.Contains(t, conditionOf(ws.Status.Conditions, magosv1.ReadyCondition).Message, "stage prod")
		assert.Never(t, func() bool { return len(f.applies.of(rev2, "prod-a")) > 0 }, 3*time.Second, 250*time.Millisecond,
			"prod applied a revision staging failed on")
	})

	t.Run("fixing the failure resumes the rollout", func(t *testing.T) {
		setPolicyValidation(t, policy, `object.resource_changes.size() >= 0`, "anything goes")
		f.waitRollout(3*time.Minute, "rolled out after the fix", rolledOut(rev2))
		assert.Equal(t, haltedBefore, metricSum(t, "magos_rollouts_halted"), "the resumed Rollout is no longer counted")
		assert.Eventually(t, func() bool { return rolloutPhaseSeries(t, f.ns, "Succeeded") && !rolloutPhaseSeries(t, f.ns, "Halted") },
			10*time.Second, 100*time.Millisecond, "magos_resource_info says the Rollout succeeded")
		assert.Positive(t, metricSum(t, "magos_rollout_stage_transitions_total"))
		f.assertStagesInOrder(rev2)
	})

	t.Run("a newer revision restarts from the first stage; later stages never apply the older one", func(t *testing.T) {
		f.patchRollout(func(ro *magosv1.Rollout) { ro.Spec.Promotions = nil })
		rev3 := f.commit("v3")
		f.waitRollout(3*time.Minute, "prod waits for rev3", stageIs("prod", magosv1.StageWaitingForPromotion, rev3))
		rev4 = f.commit("v4")
		ro := f.waitRollout(time.Minute, "restarted from dev", func(ro *magosv1.Rollout) bool { return ro.Status.Revision == rev4 })
		assert.Empty(t, stageOf(ro, "prod").AdmittedRevision)
		f.promote("prod", rev3)
		f.waitRollout(3*time.Minute, "prod waits for rev4", stageIs("prod", magosv1.StageWaitingForPromotion, rev4))
		f.waitWorkspace("prod-a", time.Minute, "still at rev2", awaitingPromotion(rev4, rev2))
		assert.Empty(t, f.applies.of(rev3, "prod-a"), "prod never applies a revision superseded before it was admitted")
		f.promote("prod", rev4)
		f.waitRollout(3*time.Minute, "rev4 rolled out", rolledOut(rev4))
		f.assertStagesInOrder(rev4)
	})

	t.Run("abort stops a revision where it is", func(t *testing.T) {
		rev5 = f.commit("v5")
		f.waitRollout(3*time.Minute, "prod waits for rev5", stageIs("prod", magosv1.StageWaitingForPromotion, rev5))
		f.patchRollout(func(ro *magosv1.Rollout) { ro.Annotations = map[string]string{magosv1.AbortAnnotation: rev5} })
		ro := f.waitRollout(time.Minute, "aborted", func(ro *magosv1.Rollout) bool {
			c := conditionOf(ro.Status.Conditions, magosv1.HaltedCondition)
			return c != nil && c.Reason == "Aborted"
		})
		assert.Empty(t, stageOf(ro, "prod").AdmittedRevision)
		f.promote("prod", rev5)
		assert.Never(t, func() bool { return len(f.applies.of(rev5, "prod-a")) > 0 }, 3*time.Second, 250*time.Millisecond,
			"an aborted revision was applied")
		ws := f.waitWorkspace("prod-a", time.Minute, "keeps rev4", awaitingPromotion(rev5, rev4))
		assert.Contains(t, conditionOf(ws.Status.Conditions, magosv1.ReadyCondition).Message, "the stage is Halted")
	})

	t.Run("suspend holds a new revision; a bake time delays the next stage", func(t *testing.T) {
		f.patchRollout(func(ro *magosv1.Rollout) {
			ro.Spec.Suspend = true
			ro.Spec.Stages[0].BakeTime = &metav1.Duration{Duration: 5 * time.Second}
		})
		rev6 := f.commit("v6")
		ro := f.waitRollout(time.Minute, "suspended with rev6", func(ro *magosv1.Rollout) bool {
			ready := conditionOf(ro.Status.Conditions, magosv1.ReadyCondition)
			return ro.Status.Revision == rev6 && ready != nil && ready.Reason == magosv1.SuspendedReason
		})
		assert.Empty(t, stageOf(ro, "dev").AdmittedRevision, "a suspended Rollout admits nothing, not even the first stage")
		f.waitWorkspace("dev-a", time.Minute, "plans and waits", awaitingPromotion(rev6, rev5))
		assert.Never(t, func() bool { return len(f.applies.of(rev6, "dev-a")) > 0 }, 3*time.Second, 250*time.Millisecond,
			"a suspended Rollout let dev apply")

		f.patchRollout(func(ro *magosv1.Rollout) { ro.Spec.Suspend = false })
		ro = f.waitRollout(2*time.Minute, "staging admitted after dev baked", func(ro *magosv1.Rollout) bool {
			return ro.Status.Revision == rev6 && stageOf(ro, "staging").AdmittedRevision == rev6
		})
		dev, staging := stageOf(ro, "dev"), stageOf(ro, "staging")
		require.NotNil(t, dev.Completed)
		// Both times are stored to the second: a 5s bake leaves at least 4s.
		assert.GreaterOrEqual(t, staging.Started.Sub(dev.Completed.Time), 4*time.Second,
			"staging was admitted before dev baked for 5s")
		assert.True(t, recorded(t, f.ns, "release", "StageBaking"))
	})
}
