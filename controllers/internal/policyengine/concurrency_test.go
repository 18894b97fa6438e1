package policyengine

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// TestEvaluateConcurrently: one Evaluator serves many reconcilers at once
// (run with -race), each getting the verdict it would get alone.
func TestEvaluateConcurrently(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	tagged, untagged := plan(t, tfTagged), plan(t, tfUntagged)
	policies := policiesOf(
		jsonPolicySpec{"require-env", policytest.SpecRequireEnv},
		jsonPolicySpec{"require-env-expr", policytest.SpecRequireEnvExpr},
		jsonPolicySpec{"prod-only", policytest.SpecProdOnly},
	)(t)
	broken := policiesOf(jsonPolicySpec{"broken", policytest.SpecBadCEL})(t)

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 5 {
				switch i % 3 {
				case 0:
					v := e.Evaluate(context.Background(), policies, tagged)
					assert.True(t, v.Passed, v.Message)
				case 1:
					v := e.Evaluate(context.Background(), policies, untagged)
					assert.False(t, v.Passed, v.Message)
					assert.False(t, v.Errored, v.Message)
					assert.Len(t, v.Violations, 2)
				default:
					v := e.Evaluate(context.Background(), append(broken, policies...), tagged)
					assert.True(t, v.Errored, v.Message)
				}
			}
		})
	}
	wg.Wait()
}
