package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policyengine"
)

func newPolicyCommand(f *factory) *cobra.Command {
	group := &cobra.Command{
		Use:     "policy",
		Short:   "Test ValidatingPolicies against plans offline",
		Example: "  kubectl magos policy test plan.json --policy policies/",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("policy needs a subcommand: policy test PLAN.json --policy FILE")
		},
	}
	var files []string
	test := &cobra.Command{
		Use:   "test PLAN.json --policy FILE...",
		Short: "Evaluate ValidatingPolicies against a plan JSON, as the policy gate does",
		Long: `Evaluate Kyverno ValidatingPolicy and NamespacedValidatingPolicy files
against a plan JSON (the engine's show -json output, or kubectl magos plan
show --json) with the engine the workspace-controller's policy gate uses; no
cluster is needed. Prints the verdict and violations; exits 1 when the plan
would be blocked.`,
		Example: `  tofu show -json plan.out > plan.json
  kubectl magos policy test plan.json --policy required-tags.yaml --policy no-destroy.yaml
  kubectl magos plan show hello --json > plan.json && kubectl magos policy test plan.json --policy policy.yaml`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(files) == 0 {
				return usageError("policy test needs at least one --policy FILE")
			}
			return testPolicies(cmd, f, a[0], files)
		},
	}
	test.Flags().StringArrayVar(&files, "policy", nil, "a YAML or JSON file of ValidatingPolicies (repeatable)")
	group.AddCommand(test)
	return group
}

func testPolicies(cmd *cobra.Command, f *factory, planFile string, files []string) error {
	plan, err := os.ReadFile(planFile)
	if err != nil {
		return usageError("reading the plan: %v", err)
	}
	var policies []policy.Policy
	for _, file := range files {
		ps, err := readPolicies(file)
		if err != nil {
			return usageError("%s: %v", file, err)
		}
		policies = append(policies, ps...)
	}
	if len(policies) == 0 {
		return usageError("no ValidatingPolicy found in %v", files)
	}
	e, err := policyengine.NewEvaluator()
	if err != nil {
		return err
	}
	v := e.Evaluate(cmd.Context(), policies, plan)
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
		return failed("the plan would be blocked by the policy gate (%d policies evaluated)", len(policies))
	}
	return nil
}

// readPolicies decodes every document of a YAML or JSON file into a
// policy; empty documents are skipped.
func readPolicies(file string) ([]policy.Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return policy.DecodeYAML(data)
}
