package policy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

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
