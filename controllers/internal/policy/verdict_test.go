package policy_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// TestStatusMessage pins the one-line summaries Workspace conditions and
// events carry.
func TestStatusMessage(t *testing.T) {
	deny := policy.Violation{Policy: "required-tags", Message: "missing on: a, b", Action: policy.ActionDeny}
	audit := policy.Violation{Policy: "audit-replacements", Message: "the plan\nreplaces   c", Action: policy.ActionAudit}
	warn := policy.Violation{Policy: "team/size", Message: "big", Action: policy.ActionWarn}
	tests := []struct {
		name    string
		verdict policy.Verdict
		limit   int
		want    string
	}{
		{
			name:    "no policy",
			verdict: policy.Verdict{Passed: true, Policies: []string{}, Message: "No policy applied: no ValidatingPolicy selected for this Workspace"},
			want:    "No policy applied: no ValidatingPolicy selected for this Workspace",
		},
		{
			name:    "passed",
			verdict: policy.Verdict{Passed: true, Policies: []string{"a", "b"}},
			want:    "Plan passed 2 policies",
		},
		{
			name:    "passed one",
			verdict: policy.Verdict{Passed: true, Policies: []string{"a"}},
			want:    "Plan passed 1 policy",
		},
		{
			name:    "passed with non-blocking violations, on one line",
			verdict: policy.Verdict{Passed: true, Policies: []string{"a", "b", "c"}, Violations: []policy.Violation{warn, audit}},
			want:    "Plan passed 3 policies with 2 non-blocking violations: team/size [Warn]: big; audit-replacements [Audit]: the plan replaces c",
		},
		{
			name:    "denied",
			verdict: policy.Verdict{Policies: []string{"a", "b"}, Violations: []policy.Violation{deny, audit}},
			want:    "Plan denied by 1 of 2 policies: required-tags [Deny]: missing on: a, b; audit-replacements [Audit]: the plan replaces c",
		},
		{
			name:    "denied, cut to the limit with a count of the rest",
			verdict: policy.Verdict{Policies: []string{"a", "b", "c"}, Violations: []policy.Violation{deny, warn, audit}},
			limit:   90,
			want:    "Plan denied by 1 of 3 policies: required-tags [Deny]: missing on: a, b; and 2 more",
		},
		{
			name:    "a first violation longer than the limit is cut",
			verdict: policy.Verdict{Policies: []string{"a"}, Violations: []policy.Violation{deny}},
			limit:   40,
			want:    "Plan denied by 1 of 1 policy: require…",
		},
		{
			name:    "errored",
			verdict: policy.Verdict{Errored: true, Policies: []string{"a"}, Message: `Policy evaluation failed, apply blocked: policy "a": spec.validations[0]: no such key: x`},
			limit:   60,
			want:    `Policy evaluation failed, apply blocked: policy "a": spec…`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy.StatusMessage(tt.verdict, tt.limit)
			assert.Equal(t, tt.want, got)
			if tt.limit > 0 {
				assert.LessOrEqual(t, len(got), tt.limit)
			}
			assert.NotContains(t, got, "\n")
		})
	}
}

// TestTruncate: cuts fall on rune boundaries and respect the limit.
func TestTruncate(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	for limit := 1; limit <= 25; limit++ {
		got := policy.Truncate(s, limit)
		assert.LessOrEqual(t, len(got), limit, "limit %d", limit)
		assert.True(t, utf8.ValidString(got), "limit %d: %q", limit, got)
	}
	assert.Equal(t, s, policy.Truncate(s, 0))
	assert.Equal(t, s, policy.Truncate(s, 20))
}

// TestAPIVerdict: a verdict maps field by field onto Workspace status.
func TestAPIVerdict(t *testing.T) {
	v := policy.Verdict{
		Policies:   []string{"a", "b"},
		Violations: []policy.Violation{{Policy: "a", Validation: 2, Message: "no", Action: policy.ActionDeny}},
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
