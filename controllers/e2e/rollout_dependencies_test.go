package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// devThenProd is a dev stage and a Manual prod stage.
func devThenProd() []magosv1.Stage {
	return []magosv1.Stage{
		{Name: "dev", Selector: envSelector("dev")},
		{Name: "prod", Selector: envSelector("prod"), Promotion: magosv1.PromotionManual},
	}
}

// dependsOnIn makes the Workspace of stage from depend on the one of stage
// to (each stage has one Workspace, <stage>-a).
func dependsOnIn(from, to string) func(*magosv1.Workspace) {
	return func(ws *magosv1.Workspace) {
		if ws.Name == workspaceName(from, 0) {
			ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: workspaceName(to, 0)}}
		}
	}
}

// A dependent in a later stage than its dependency: each revision reaches
// the dependency first (its stage), the dependent plans only once the
// dependency applied it, and applies when its own stage is promoted.
func TestRolloutWithDependencyInAnEarlierStage(t *testing.T) {
	env.Require(t)
	f := newRolloutFixture(t, 1, devThenProd(), dependsOnIn("prod", "dev"))
	dev, prod := workspaceName("dev", 0), workspaceName("prod", 0)
	var rev1 string
	f.waitRollout(3*time.Minute, "prod waits for promotion", func(ro *magosv1.Rollout) bool {
		rev1 = ro.Status.Revision
		return rev1 != "" && stageIs("prod", magosv1.StageWaitingForPromotion, rev1)(ro)
	})
	f.waitWorkspace(dev, time.Minute, "applied in dev", appliedRevision(rev1))
	f.waitWorkspace(prod, 2*time.Minute, "planned after its dependency and awaits promotion", awaitingPromotion(rev1, ""))
	f.promote("prod", rev1)
	f.waitRollout(3*time.Minute, "rolled out", rolledOut(rev1))

	rev2 := f.commit("v2")
	f.waitRollout(3*time.Minute, "prod waits for promotion of the new revision", stageIs("prod", magosv1.StageWaitingForPromotion, rev2))
	ws := f.waitWorkspace(prod, 2*time.Minute, "plans the new revision and keeps the old", awaitingPromotion(rev2, rev1))
	devApplies := f.applies.of(rev2, dev)
	require.Len(t, devApplies, 1)
	require.NotNil(t, ws.Status.Plan.Time)
	assert.False(t, ws.Status.Plan.Time.Time.Before(devApplies[0].Finished.Truncate(time.Second)),
		"the dependent planned %s (at %s) only after its dependency applied it (at %s)", rev2, ws.Status.Plan.Time, devApplies[0].Finished)
	f.promote("prod", rev2)
	f.waitRollout(3*time.Minute, "rolled out", rolledOut(rev2))
}

// A dependent in an earlier stage than its dependency, both on the Rollout's
// source: the dependency waits for its stage, which waits for the earlier
// stage, which waits for the dependent, which waits for the dependency.
// Nothing applies; the dependent says what it waits for (docs/rollouts.md).
func TestRolloutWithDependentInAnEarlierStageWaitsAndSaysWhy(t *testing.T) {
	env.Require(t)
	f := newRolloutFixture(t, 1, devThenProd(), dependsOnIn("dev", "prod"))
	dev, prod := workspaceName("dev", 0), workspaceName("prod", 0)
	var rev string
	f.waitRollout(3*time.Minute, "a revision is admitted to dev", func(ro *magosv1.Rollout) bool {
		rev = ro.Status.Revision
		return rev != "" && stageOf(ro, "dev") != nil && stageOf(ro, "dev").AdmittedRevision == rev
	})
	f.waitWorkspace(prod, 2*time.Minute, "planned and waits for its stage", awaitingPromotion(rev, ""))
	ws := f.waitWorkspace(dev, time.Minute, "waits for its dependency", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseWaiting && len(ws.Status.Dependencies) == 1 && !ws.Status.Dependencies[0].Ready &&
			strings.Contains(ws.Status.Dependencies[0].Message, "is AwaitingPromotion")
	})
	ready := conditionOf(ws.Status.Conditions, magosv1.ReadyCondition)
	assert.Equal(t, magosv1.ReasonDependencyNotReady, ready.Reason)
	assert.Contains(t, ws.Status.Dependencies[0].Message, "Workspace "+prod+" is AwaitingPromotion")
	assert.Empty(t, f.applies.of(rev, dev, prod), "nothing applies")
	assert.Equal(t, magosv1.StageProgressing, stageOf(f.rollout(), "dev").Phase, "the earlier stage does not complete")
}
