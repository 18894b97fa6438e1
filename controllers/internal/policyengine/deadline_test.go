package policyengine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// TestEvaluateHasADeadline pins that a policy which takes too long blocks
// the plan with a verdict that names the deadline, and that Evaluate
// returns close to the deadline instead of when the policy finishes.
func TestEvaluateHasADeadline(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	require.Equal(t, policy.DefaultTimeout, e.Timeout, "an Evaluator has a deadline unless told otherwise")
	e.Timeout = 200 * time.Millisecond
	p := syntheticPlan(3000)
	policies := policiesOf(jsonPolicySpec{"quadratic", policytest.SpecQuadratic})(t)

	start := time.Now()
	v := e.Evaluate(context.Background(), policies, p)
	took := time.Since(start)
	assert.False(t, v.Passed)
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, "policy evaluation exceeded its deadline of 200ms")
	assert.Less(t, took, 5*time.Second, "Evaluate returns at the deadline")
}

// TestEvaluateRefusesAPlanThatDecodesTooBig pins that plan JSON whose
// decoded form would be far bigger than its text (a list of one-key
// objects takes about 44 times its size) is refused before decoding, with
// a verdict that says why.
func TestEvaluateRefusesAPlanThatDecodesTooBig(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	require.Equal(t, int64(DefaultMaxPlanMemory), e.MaxPlanMemory)
	e.MaxPlanMemory = 16 << 20
	bomb := []byte(`{"format_version":"1.2","resource_changes":[` + strings.Repeat(`{"a":0},`, 1<<20) + `{"a":0}]}`)
	require.Less(t, len(bomb), 9<<20, "the text is well under the limit")

	v := e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"fine", policytest.SpecAlwaysPass})(t), bomb)
	assert.False(t, v.Passed)
	assert.True(t, v.Errored)
	assert.Contains(t, v.Message, "more than the limit of 16 MiB")

	// A real-sized synthetic plan stays well under the default.
	p := syntheticPlan(2000)
	assert.Less(t, decodedSize(p), int64(DefaultMaxPlanMemory)/4, "plan of %d bytes", len(p))
}

// TestEvaluateStopsAtTheCELCostLimit pins that an expression is stopped at
// Kubernetes' CEL cost limit for one expression, long before the deadline,
// and that the verdict names the limit: a costly policy blocks its own
// plans, not the engine.
func TestEvaluateStopsAtTheCELCostLimit(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	policies := policiesOf(jsonPolicySpec{"quadratic", policytest.SpecQuadratic})(t)

	v := e.Evaluate(context.Background(), policies, syntheticPlan(3000))
	assert.False(t, v.Passed)
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, `policy "quadratic": spec.validations[0]: operation cancelled: actual cost limit exceeded (the expression reached the CEL cost limit of 1000000 per expression)`)
	assert.NotContains(t, v.Message, "deadline", "stopped by its cost, not by the deadline")

	v = e.Evaluate(context.Background(), policies, syntheticPlan(100))
	assert.True(t, v.Passed, "the same policy on a small plan stays under the limit: %s", v.Message)
}
