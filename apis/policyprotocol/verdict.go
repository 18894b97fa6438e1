package policyprotocol

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Validation actions a violation carries, as in a policy's
// spec.validationActions.
const (
	// ActionDeny blocks apply.
	ActionDeny = "Deny"
	// ActionWarn is recorded but does not block.
	ActionWarn = "Warn"
	// ActionAudit is recorded but does not block.
	ActionAudit = "Audit"
)

// MessageLimit bounds each policy message and error kept in a verdict, so
// a policy cannot blow up Workspace status.
const MessageLimit = 512

// VerdictMessageLimit bounds Verdict.Message; the violations carry the
// detail.
const VerdictMessageLimit = 2048

// Errored is the verdict of an evaluation that could not be done, for
// reason (one line, cut to MessageLimit): apply is blocked.
func Errored(reason string) Verdict {
	return Verdict{Errored: true, Message: "Policy evaluation failed, apply blocked: " + Truncate(OneLine(reason), MessageLimit)}
}

// Verdict is the outcome of evaluating one plan against its policies.
type Verdict struct {
	// Passed is true when apply may go on: no Deny violation and no error.
	Passed bool `json:"passed"`
	// Policies names every policy the plan was evaluated against, sorted
	// (name, or namespace/name for a NamespacedValidatingPolicy).
	Policies []string `json:"policies"`
	// Violations are the failed validations, at most one per policy (the
	// first failing validation, as Kyverno reports it), Deny ones first.
	Violations []Violation `json:"violations,omitempty"`
	// Message says in one line what happened; it names policies and
	// carries their messages and errors, never the plan itself.
	Message string `json:"message"`
	// Errored is true when a policy or the plan could not be evaluated;
	// Passed is then false (fail closed).
	Errored bool `json:"errored,omitempty"`
}

// Violation is one failed validation of one policy.
type Violation struct {
	// Policy names the policy (name, or namespace/name).
	Policy string `json:"policy"`
	// Validation is the index of the failed entry of spec.validations.
	Validation int `json:"validation"`
	// Message is the validation's message or messageExpression result.
	Message string `json:"message"`
	// Action is Deny, Audit or Warn: the strongest of the policy's
	// validationActions (Deny > Warn > Audit). Only Deny blocks, unless
	// waived.
	Action string `json:"action"`
	// WaivedBy names the PolicyExceptions (namespace/name) that waive the
	// denial for this plan.
	WaivedBy []string `json:"waivedBy,omitempty"`
}

// String renders the violation for messages and events.
func (v Violation) String() string {
	if len(v.WaivedBy) > 0 {
		return fmt.Sprintf("%s [%s, waived by %s]: %s", v.Policy, v.Action, strings.Join(v.WaivedBy, ", "), v.Message)
	}
	return fmt.Sprintf("%s [%s]: %s", v.Policy, v.Action, v.Message)
}

// Blocking reports whether the violation blocks apply: a denial no
// waiver lifts.
func (v Violation) Blocking() bool { return v.Action == ActionDeny && len(v.WaivedBy) == 0 }

// Waived reports whether a waiver lifts the violation's denial.
func (v Violation) Waived() bool { return len(v.WaivedBy) > 0 }

// Result is the verdict as one word: error, failed or passed (the result
// label of the policy evaluation metrics).
func (v Verdict) Result() string {
	switch {
	case v.Errored:
		return "error"
	case !v.Passed:
		return "failed"
	default:
		return "passed"
	}
}

// StatusMessage renders a verdict as one line of at most limit bytes (no
// limit when limit <= 0) for a condition message or an event: the outcome,
// then as many violations as fit, then how many more there are.
func StatusMessage(v Verdict, limit int) string {
	var head string
	switch {
	case v.Errored:
		return Truncate(OneLine(v.Message), limit)
	case len(v.Policies) == 0:
		return Truncate(OneLine(v.Message), limit)
	case !v.Passed:
		head = fmt.Sprintf("Plan denied by %d of %s", countBlocking(v.Violations), count(len(v.Policies), "policy", "policies"))
	case countWaived(v.Violations) > 0:
		head = fmt.Sprintf("Plan passed %s with %s waived", count(len(v.Policies), "policy", "policies"),
			count(countWaived(v.Violations), "denial", "denials"))
	case len(v.Violations) > 0:
		head = fmt.Sprintf("Plan passed %s with %s", count(len(v.Policies), "policy", "policies"),
			count(len(v.Violations), "non-blocking violation", "non-blocking violations"))
	default:
		return Truncate("Plan passed "+count(len(v.Policies), "policy", "policies"), limit)
	}
	msg := head
	for i, viol := range v.Violations {
		next := msg
		if i == 0 {
			next += ": "
		} else {
			next += "; "
		}
		next += OneLine(viol.String())
		rest := len(v.Violations) - i - 1
		suffix := ""
		if rest > 0 {
			suffix = fmt.Sprintf("; and %d more", rest)
		}
		if limit > 0 && len(next)+len(suffix) > limit {
			if i == 0 {
				return Truncate(next, limit)
			}
			return Truncate(msg+fmt.Sprintf("; and %d more", rest+1), limit)
		}
		msg = next
	}
	return msg
}

// countBlocking counts the distinct policies with a blocking violation.
func countBlocking(vs []Violation) int {
	seen := map[string]bool{}
	for _, v := range vs {
		if v.Blocking() {
			seen[v.Policy] = true
		}
	}
	return len(seen)
}

// countWaived counts the waived denials.
func countWaived(vs []Violation) int {
	n := 0
	for _, v := range vs {
		if v.Waived() {
			n++
		}
	}
	return n
}

// count renders n with the singular or plural noun.
func count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return fmt.Sprintf("%d %s", n, plural)
}

// OneLine collapses whitespace runs, newlines included, into single spaces.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Truncate cuts s to at most limit bytes on a rune boundary, marking the
// cut with an ellipsis; limit <= 0 means no limit.
func Truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	mark := ellipsis
	if limit < len(ellipsis) {
		mark = ""
	}
	cut := limit - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
