package policy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// TestAPIVerdict: a verdict maps field by field onto Workspace status.
func TestAPIVerdict(t *testing.T) {
	v := policyprotocol.Verdict{
		Policies:   []string{"a", "b"},
		Violations: []policyprotocol.Violation{{Policy: "a", Validation: 2, Message: "no", Action: policyprotocol.ActionDeny}},
		Message:    "Plan denied by 1 of 2 policies: a [Deny]: no",
	}
	got := policy.APIVerdict(v, "sha256:abc")
	assert.False(t, got.Passed)
	assert.Equal(t, []string{"a", "b"}, got.Policies)
	assert.Equal(t, v.Message, got.Message)
	assert.Equal(t, "sha256:abc", got.PoliciesDigest)
	require.Len(t, got.Violations, 1)
	assert.Equal(t, magosv1.PolicyViolation{Policy: "a", Validation: 2, Message: "no", Action: "Deny"}, got.Violations[0])
}

// TestDigest: the digest ignores order and follows names and specs.
func TestDigest(t *testing.T) {
	a := policytest.JSONPolicy(t, "a", policytest.SpecAlwaysPass)
	b := policytest.JSONPolicy(t, "b", policytest.SpecAlwaysPass)
	b2 := policytest.JSONPolicy(t, "b", policytest.SpecRuntimeError)
	assert.Equal(t, policy.Digest([]policy.Policy{a, b}), policy.Digest([]policy.Policy{b, a}))
	assert.NotEqual(t, policy.Digest([]policy.Policy{a, b}), policy.Digest([]policy.Policy{a, b2}))
	assert.NotEqual(t, policy.Digest([]policy.Policy{a}), policy.Digest([]policy.Policy{a, b}))
	assert.True(t, strings.HasPrefix(policy.Digest(nil), "sha256:"))
}
