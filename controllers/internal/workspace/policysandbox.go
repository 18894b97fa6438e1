package workspace

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// checkPolicySandbox asks the policy engine what its sandbox takes from it
// on this kernel, exports it (magos_policy_sandbox_enforced), logs it and
// refuses to start with less than files and TCP unless the options allow
// it (config.Options.CheckPolicySandbox).
func checkPolicySandbox(ctx context.Context, o config.Options) error {
	log := ctrl.Log.WithName("policy-engine")
	path := o.PolicyEngine()
	log.Info("Checking the policy engine's sandbox", "path", path)
	s, err := policy.ProbeSandbox(ctx, path)
	metrics.SetPolicySandbox(s.Files, s.Network)
	switch {
	case err != nil:
		log.Error(err, "Cannot check the policy engine's sandbox", "allowIncomplete", o.AllowIncompletePolicySandbox)
	case s.Complete():
		log.Info("Policy engine sandboxed: it can open no file and reach no TCP socket")
	default:
		log.Info("Policy engine sandbox is incomplete", "files", s.Files, "network", s.Network, "missing", s.Missing,
			"allowIncomplete", o.AllowIncompletePolicySandbox)
	}
	return o.CheckPolicySandbox(s, err)
}
