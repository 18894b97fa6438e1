package command

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/planrender"
	"github.com/magos-dev/magos/cli/internal/plantest"
	"github.com/magos-dev/magos/cli/internal/view"
)

// The run that makes a plan runs the configuration's code, which can
// write the text the run stores (into the engine's output, or in place of
// the rendering). plan show renders what an approver reads from the plan
// JSON the digest covers: the run's text never appears as the plan, and
// with --engine-text only under a NOT VERIFIED line.
func TestPlanShowRendersThePlanFromTheVerifiedJSON(t *testing.T) {
	ctx := context.Background()
	g, p := plantest.StoredPlan(t, plantest.GreetingPlan, plantest.ForgedText, false)

	shown, err := ops.ReadablePlan(ctx, g, "hello", p, planrender.Options{})
	require.NoError(t, err)
	assert.True(t, shown.Verified)
	assert.Equal(t, view.RenderedSource, shown.Source)
	assert.Contains(t, shown.Text, "# terraform_data.greeting will be created")
	assert.NotContains(t, shown.Text, "No changes")

	var out bytes.Buffer
	require.NoError(t, writePlan(ctx, &out, g, "hello", p, planrender.Options{}, false))
	assert.Contains(t, out.String(), "Digest "+p.Digest+" (stored bundle "+p.BundleDigest+", verified)\n\n"+view.RenderedSource+"\n\n")
	assert.Contains(t, out.String(), "Plan: 1 to add, 0 to change, 0 to destroy.")
	assert.NotContains(t, out.String(), "No changes", "the run's text is not shown")
	assert.Contains(t, out.String(), "Policy: Passed")

	out.Reset()
	require.NoError(t, writePlan(ctx, &out, g, "hello", p, planrender.Options{}, true))
	rendered, runText, found := strings.Cut(out.String(), view.RunTextSource)
	require.True(t, found, "the run's text is marked: %s", out.String())
	assert.NotContains(t, rendered, "No changes")
	assert.Contains(t, runText, "No changes", "and shown only below the mark")
	assert.True(t, strings.HasPrefix(view.RunTextSource, "NOT VERIFIED"))
}

// A plan applied without a gate has no plan JSON: its text is all there
// is, and it is shown marked as not verified, never as the verified plan.
func TestPlanShowMarksTheTextOfAPlanAppliedWithoutAGate(t *testing.T) {
	ctx := context.Background()
	g, p := plantest.StoredPlan(t, "", plantest.ForgedText, true)
	shown, err := ops.ReadablePlan(ctx, g, "hello", p, planrender.Options{})
	require.NoError(t, err)
	assert.False(t, shown.Verified)
	assert.Equal(t, view.FastTextSource, shown.Source)
	assert.Equal(t, plantest.ForgedText, shown.Text)

	var out bytes.Buffer
	require.NoError(t, writePlan(ctx, &out, g, "hello", p, planrender.Options{}, false))
	assert.Contains(t, out.String(), view.FastTextSource+"\n\n"+strings.TrimRight(plantest.ForgedText, "\n"))

	// A fast run that had to render the plan JSON: rendered, still marked.
	g, p = plantest.StoredPlan(t, plantest.GreetingPlan, "", true)
	shown, err = ops.ReadablePlan(ctx, g, "hello", p, planrender.Options{})
	require.NoError(t, err)
	assert.False(t, shown.Verified)
	assert.Equal(t, view.FastJSONSource, shown.Source)
	assert.Contains(t, shown.Text, "terraform_data.greeting will be created")
}
