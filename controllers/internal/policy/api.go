package policy

import (
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
)

// APIVerdict renders a verdict as Workspace status.plan.policy, with the
// Digest of the policies it was evaluated against.
func APIVerdict(v policyprotocol.Verdict, policiesDigest string) *magosv1.PolicyVerdict {
	out := &magosv1.PolicyVerdict{
		Passed:         v.Passed,
		Policies:       v.Policies,
		Message:        v.Message,
		PoliciesDigest: policiesDigest,
	}
	for _, viol := range v.Violations {
		out.Violations = append(out.Violations, magosv1.PolicyViolation{
			Policy:     viol.Policy,
			Validation: int32(viol.Validation),
			Message:    viol.Message,
			Action:     viol.Action,
			WaivedBy:   viol.WaivedBy,
		})
	}
	return out
}
