package command

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
)

func newPolicyCommand(f *factory) *cobra.Command {
	group := &cobra.Command{
		Use:     "policy",
		Short:   "Test ValidatingPolicies against plans offline",
		Example: "  kubectl magos policy test plan.json --policy policies/",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return failure.Usage("policy needs a subcommand: policy test PLAN.json --policy FILE")
		},
	}
	var files []string
	var engine string
	test := &cobra.Command{
		Use:   "test PLAN.json --policy FILE...",
		Short: "Evaluate ValidatingPolicies against a plan JSON, as the policy gate does",
		Long: `Evaluate Kyverno ValidatingPolicy and NamespacedValidatingPolicy files
against a plan JSON (the engine's show -json output, or kubectl magos plan
show --json) with the engine the workspace-controller's policy gate uses; no
cluster is needed. Prints the verdict and violations; exits 1 when the plan
would be blocked.

The evaluation runs in the policy engine, magos-policy-engine, which the
release ships beside kubectl-magos: --engine names it, else
$MAGOS_POLICY_ENGINE, else magos-policy-engine in the directory of
kubectl-magos, else on the PATH.`,
		Example: `  tofu show -json plan.out > plan.json
  kubectl magos policy test plan.json --policy required-tags.yaml --policy no-destroy.yaml
  kubectl magos plan show hello --json > plan.json && kubectl magos policy test plan.json --policy policy.yaml`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(files) == 0 {
				return failure.Usage("policy test needs at least one --policy FILE")
			}
			return testPolicies(cmd, f, a[0], files, engine)
		},
	}
	test.Flags().StringArrayVar(&files, "policy", nil, "a YAML or JSON file of ValidatingPolicies (repeatable)")
	test.Flags().StringVar(&engine, "engine", "", "the policy engine binary (default: $MAGOS_POLICY_ENGINE, else magos-policy-engine beside kubectl-magos or on the PATH)")
	group.AddCommand(test)
	return group
}

func testPolicies(cmd *cobra.Command, f *factory, planFile string, files []string, engine string) error {
	plan, err := os.ReadFile(planFile)
	if err != nil {
		return failure.Usage("reading the plan: %v", err)
	}
	var policies []json.RawMessage
	for _, file := range files {
		ps, err := ops.ReadPolicies(file)
		if err != nil {
			return failure.Usage("%s: %v", file, err)
		}
		policies = append(policies, ps...)
	}
	if len(policies) == 0 {
		return failure.Usage("no ValidatingPolicy found in %v", files)
	}
	if engine == "" {
		if engine, err = ops.FindPolicyEngine(); err != nil {
			return err
		}
	}
	v, err := ops.Evaluate(cmd.Context(), engine, policyprotocol.Request{Policies: policies}, plan)
	if err != nil {
		return err
	}
	out := f.streams.Out
	result := "PASSED"
	if !v.Passed {
		result = "FAILED"
	}
	fmt.Fprintf(out, "%s: %s\n", result, v.Message)
	for _, vi := range v.Violations {
		fmt.Fprintf(out, "  - %s validation %d\n", vi, vi.Validation)
	}
	if !v.Passed {
		return failure.Failed("the plan would be blocked by the policy gate (%d policies evaluated)", len(policies))
	}
	return nil
}
