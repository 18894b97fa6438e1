package policyprotocol

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// TestStatusMessage pins the one-line summaries Workspace conditions and
// events carry.
func TestStatusMessage(t *testing.T) {
	deny := Violation{Policy: "required-tags", Message: "missing on: a, b", Action: ActionDeny}
	audit := Violation{Policy: "audit-replacements", Message: "the plan\nreplaces   c", Action: ActionAudit}
	warn := Violation{Policy: "team/size", Message: "big", Action: ActionWarn}
	tests := []struct {
		name    string
		verdict Verdict
		limit   int
		want    string
	}{
		{
			name:    "no policy",
			verdict: Verdict{Passed: true, Policies: []string{}, Message: "No policy applied: no ValidatingPolicy selected for this Workspace"},
			want:    "No policy applied: no ValidatingPolicy selected for this Workspace",
		},
		{
			name:    "passed",
			verdict: Verdict{Passed: true, Policies: []string{"a", "b"}},
			want:    "Plan passed 2 policies",
		},
		{
			name:    "passed one",
			verdict: Verdict{Passed: true, Policies: []string{"a"}},
			want:    "Plan passed 1 policy",
		},
		{
			name:    "passed with non-blocking violations, on one line",
			verdict: Verdict{Passed: true, Policies: []string{"a", "b", "c"}, Violations: []Violation{warn, audit}},
			want:    "Plan passed 3 policies with 2 non-blocking violations: team/size [Warn]: big; audit-replacements [Audit]: the plan replaces c",
		},
		{
			name:    "denied",
			verdict: Verdict{Policies: []string{"a", "b"}, Violations: []Violation{deny, audit}},
			want:    "Plan denied by 1 of 2 policies: required-tags [Deny]: missing on: a, b; audit-replacements [Audit]: the plan replaces c",
		},
		{
			name:    "denied, cut to the limit with a count of the rest",
			verdict: Verdict{Policies: []string{"a", "b", "c"}, Violations: []Violation{deny, warn, audit}},
			limit:   90,
			want:    "Plan denied by 1 of 3 policies: required-tags [Deny]: missing on: a, b; and 2 more",
		},
		{
			name:    "a first violation longer than the limit is cut",
			verdict: Verdict{Policies: []string{"a"}, Violations: []Violation{deny}},
			limit:   40,
			want:    "Plan denied by 1 of 1 policy: require…",
		},
		{
			name:    "errored",
			verdict: Verdict{Errored: true, Policies: []string{"a"}, Message: `Policy evaluation failed, apply blocked: policy "a": spec.validations[0]: no such key: x`},
			limit:   60,
			want:    `Policy evaluation failed, apply blocked: policy "a": spec…`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StatusMessage(tt.verdict, tt.limit)
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
		got := Truncate(s, limit)
		assert.LessOrEqual(t, len(got), limit, "limit %d", limit)
		assert.True(t, utf8.ValidString(got), "limit %d: %q", limit, got)
	}
	assert.Equal(t, s, Truncate(s, 0))
	assert.Equal(t, s, Truncate(s, 20))
}
