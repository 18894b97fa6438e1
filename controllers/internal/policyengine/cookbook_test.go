package policyengine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// cookbookDir holds the policies docs/policies.md publishes, one per file.
const cookbookDir = "testdata/cookbook"

// cookbookCase is one real plan a cookbook policy is run against.
type cookbookCase struct {
	name string
	plan func(testing.TB) []byte
	// violated is whether the policy reports a violation for the plan.
	violated bool
	// message is a part of the violation's message.
	message string
}

// cookbook says, for every file of cookbookDir, the action its
// violations carry and the plans that pass and fail it.
var cookbook = map[string]struct {
	action string
	cases  []cookbookCase
}{
	"no-destroy-protected.yaml": {policyprotocol.ActionDeny, []cookbookCase{
		{name: "creating protected resources", plan: planOf(tfTagged)},
		{name: "destroying unprotected resources", plan: destroyPlanOf(tfUnprotected)},
		{name: "destroying a protected-tagged resource", plan: destroyPlanOf(tfTagged), violated: true,
			message: "refusing to destroy protected resources: terraform_data.db"},
		{name: "destroying a protected-labelled resource", plan: destroyPlanOf(tfProtectedLabel), violated: true,
			message: "terraform_data.bucket"},
		{name: "replacing a protected resource", plan: changePlanOf(tfTrigger("v1"), tfTrigger("v2")), violated: true,
			message: "terraform_data.db"},
	}},
	"required-tags.yaml": {policyprotocol.ActionDeny, []cookbookCase{
		{name: "all resources tagged", plan: planOf(tfTagged)},
		{name: "destroying untagged resources", plan: destroyPlanOf(tfUntagged)},
		{name: "a missing tag and a resource without input", plan: planOf(tfUntagged), violated: true,
			message: "resources must carry the tags owner, env; missing on: terraform_data.bare, terraform_data.web"},
		{name: "null tags", plan: planOf(tfNullTags), violated: true, message: "terraform_data.web"},
	}},
	"forbidden-resource-types.yaml": {policyprotocol.ActionDeny, []cookbookCase{
		{name: "outputs and locals only", plan: planOf(tfOutputsOnly)},
		{name: "destroying a forbidden resource", plan: destroyPlanOf(tfUnprotected)},
		{name: "creating terraform_data", plan: planOf(tfTagged), violated: true,
			message: "resource types not allowed here: terraform_data.db, terraform_data.web"},
	}},
	"max-changes-per-run.yaml": {policyprotocol.ActionDeny, []cookbookCase{
		{name: "ten changes", plan: planOf(tfCount(10))},
		{name: "no change", plan: planOf(tfOutputsOnly)},
		{name: "eleven changes", plan: planOf(tfCount(11)), violated: true,
			message: "the plan changes 11 resources; at most 10 are allowed per run"},
		{name: "eleven destroys", plan: destroyPlanOf(tfCount(11)), violated: true, message: "11 resources"},
	}},
	"no-public-endpoints.yaml": {policyprotocol.ActionDeny, []cookbookCase{
		{name: "private resources", plan: planOf(tfTagged)},
		{name: "resources without input", plan: planOf(tfUntagged)},
		{name: "public = true", plan: planOf(tfPublic), violated: true,
			message: "public endpoints are not allowed: terraform_data.lb"},
		{name: "ingress from 0.0.0.0/0", plan: planOf(tfOpenIngress), violated: true, message: "terraform_data.sg"},
		{name: "cidr_blocks with ::/0", plan: planOf(tfOpenCIDRBlocks), violated: true, message: "terraform_data.sg"},
	}},
	"audit-replacements.yaml": {policyprotocol.ActionAudit, []cookbookCase{
		{name: "creating resources", plan: planOf(tfTagged)},
		{name: "destroying resources", plan: destroyPlanOf(tfTagged)},
		{name: "replacing a resource", plan: changePlanOf(tfTrigger("v1"), tfTrigger("v2")), violated: true,
			message: "the plan replaces terraform_data.db"},
	}},
}

// cookbookFiles lists the YAML files of cookbookDir.
func cookbookFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(cookbookDir, "*.yaml"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	return files
}

// TestCookbook runs every cookbook policy against real plans that must
// pass it and plans that must violate it.
func TestCookbook(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	files := cookbookFiles(t)
	require.GreaterOrEqual(t, len(files), 5, "the cookbook has at least five policies")
	for _, file := range files {
		base := filepath.Base(file)
		entry, ok := cookbook[base]
		require.Truef(t, ok, "cookbook policy %s has no test cases: add them to the cookbook table", base)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		policies := policytest.DecodePolicies(t, data)
		require.Len(t, policies, 1, base)
		pol := policies[0]
		require.True(t, pol.JSONMode(), "%s must use spec.evaluation.mode: JSON", base)
		require.True(t, slices.ContainsFunc(entry.cases, func(c cookbookCase) bool { return c.violated }), "%s needs a violating plan", base)
		require.True(t, slices.ContainsFunc(entry.cases, func(c cookbookCase) bool { return !c.violated }), "%s needs a passing plan", base)

		t.Run(strings.TrimSuffix(base, ".yaml"), func(t *testing.T) {
			for _, c := range entry.cases {
				t.Run(c.name, func(t *testing.T) {
					v := e.Evaluate(context.Background(), []policy.Policy{pol}, c.plan(t))
					require.False(t, v.Errored, v.Message)
					assert.Equal(t, []string{pol.Name()}, v.Policies)
					if !c.violated {
						assert.True(t, v.Passed, v.Message)
						assert.Empty(t, v.Violations)
						return
					}
					require.Len(t, v.Violations, 1, v.Message)
					viol := v.Violations[0]
					assert.Equal(t, entry.action, viol.Action)
					assert.Equal(t, pol.Name(), viol.Policy)
					assert.Contains(t, viol.Message, c.message)
					assert.Equal(t, entry.action != policyprotocol.ActionDeny, v.Passed, v.Message)
				})
			}
		})
	}
}

// TestCookbookIsDocumented pins docs/policies.md to the tested policies:
// every cookbook file appears there verbatim.
func TestCookbookIsDocumented(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	docs, err := os.ReadFile(filepath.Join(root, "docs", "policies.md"))
	require.NoError(t, err)
	for _, file := range cookbookFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Containsf(t, string(docs), strings.TrimSpace(string(data)),
			"docs/policies.md must carry %s verbatim", filepath.Base(file))
	}
}
