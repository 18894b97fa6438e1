package decide

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decisionRow is one row of the decision tables of docs/architecture.md,
// rendered from decisionTable and deletionTable. Its phase and stalled
// columns are checked against Decide: each case the row names is a row of
// TestDecide, whose decision's phase (and reason) the phase column names,
// and the row stalls when its cases' decisions do (they must agree).
type decisionRow struct {
	// rule is the number of the rule in Decide's doc comment.
	rule string
	// facts, phase and action are the row's columns, in Markdown.
	facts, phase, action string
	// runReason: the phase column says the reason is the failed run's; the
	// cases' reasons are not looked for in it.
	runReason bool
	// cases are the TestDecide rows the row stands for.
	cases []string
}

// decisionTable is docs/architecture.md's decision table, first match
// wins. Rule 5 points to deletionTable.
var decisionTable = []decisionRow{
	{rule: "1", facts: "a run is in progress", phase: "`Planning`, `Applying` or `Destroying`", action: "none: the Job's end wakes it",
		cases: []string{"a plan in progress", "an apply in progress", "a destroy apply in progress in mode Destroy: nothing is deleted"}},
	{rule: "1", facts: "a runner Pod of an earlier run has not ended", phase: "the Pod's run phase (`Planning`, `Applying` or `Destroying`)", action: "none: the Pod's end wakes it",
		cases: []string{"a runner Pod of an earlier run still runs"}},
	{rule: "2", facts: "a run could not write its state back", phase: "`Failed` (`StateNotSaved`)", action: "none, until `magos.dev/state-restored` names the run's Job",
		cases: []string{"state not saved stalls", "state not saved holds a deletion too"}},
	{rule: "2", facts: "… and `magos.dev/state-restored` names the run's Job", phase: "`Planning` (`StateRestored`)", action: "clear the errored state; then plan",
		cases: []string{"restored state plans again"}},
	{rule: "3", facts: "a stuck state lock", phase: "`Failed` (`StateLocked`)", action: "none, until `magos.dev/unlock` names the holder and no run of the Workspace is running",
		cases: []string{"a held lock stalls", "unlock while a run still runs is refused", "unlock of a lock now held by another is refused", "a reconcile request does not release a lock"}},
	{rule: "3", facts: "… `magos.dev/unlock` names its holder, no run of the Workspace is running and the Lease still has that holder", phase: "`Planning` (`Unlocked`)", action: "release the Lease; then plan",
		cases: []string{"unlock releases the lock"}},
	{rule: "4", facts: "a reconcile request (`reconcile.fluxcd.io/requestedAt`: `kubectl magos replan` or `retry`) not handled yet", phase: "`Planning`",
		action: "start a plan now, whatever the rules below would decide (with the pending plan request's addresses); while deleted, rule 5 with a failed run retried now. `status.lastHandledReconcileAt` records the request once the run starts",
		cases: []string{"a reconcile request retries a stalled failure now", "a reconcile request retries now", "a reconcile request plans again although applied",
			"a reconcile request plans whatever the revision changes", "a reconcile request plans with the pending plan request"}},
	{rule: "4", facts: "the newest run failed for this revision and inputs, with a stalling reason", phase: "`Failed` (the run's reason)", runReason: true,
		action: "none, until the revision, inputs or spec change, or a reconcile request",
		cases:  []string{"engine not found stalls", "a rejected artifact stalls"}},
	{rule: "4", facts: "… `spec.retry.maxAttempts` runs failed in a row", phase: "`Failed` (`RetriesExhausted`)",
		action: "none, until the revision, inputs or spec change, or a reconcile request",
		cases:  []string{"retries exhausted stall"}},
	{rule: "4", facts: "… with any other reason", phase: "`Failed` (the run's reason)", runReason: true, action: "wait until `status.retry.nextTime`, then plan",
		cases: []string{"a retried failure waits for its retry time", "a failure without a reason is RunFailed and retried"}},
	{rule: "5", facts: "the Workspace is deleted with `destroyOnDelete`", phase: "see below"},
	{rule: "6", facts: "no current plan (`Facts.PlanCurrent`): none for this revision and inputs, or not in the mode's plan mode (a destroy plan in `mode: Destroy`, a normal plan otherwise), or not made for a pending `spec.planRequest`",
		phase: "`Planning`", action: "start a plan (a destroy plan in `mode: Destroy`; with the pending plan request's `-target`/`-replace` addresses)",
		cases: []string{"no plan: plan", "a plan of another revision: plan", "a plan of other inputs: plan", "destroy mode: a normal plan is replaced by a destroy plan",
			"back to mode Apply: a destroy plan is replaced by a normal plan", "a plan request plans with its addresses", "a revision that changes a file read: plan"}},
	{rule: "6", facts: "… but only the revision stands between the plan, applied or pending, and a current one (`Facts.MayCarry`), and the new revision changes none of the bytes the plan can depend on (`Content`, docs/flux.md)",
		phase:  "`Idle`, then as decided again on the carried plan",
		action: "carry the plan over to the revision (status only: `status.plan.plannedRevision`, a `RevisionUnchanged` event), keeping its approvals and verdict; then decide again",
		cases: []string{"a revision that changes nothing read carries the applied plan", "a pending plan of the earlier revision is carried with its approvals",
			"a pending plan of a PlanOnly Workspace is carried"}},
	{rule: "6", facts: "… a plan would start, and a configuration file the Workspace reads is beyond what the controller parses (`Content.Refused`)", phase: "`Failed` (`ConfigurationRefused`)",
		action: "none, until a revision changes the file",
		cases:  []string{"a configuration file read is refused: stalled, no plan", "a refused configuration stalls a drift re-plan too"}},
	{rule: "6", facts: "… and nothing decides on the plan (`gatedBy` in `decide/fastpath_rule.go`: approval Auto, no policy selects the Workspace, no Rollout governs it, `mode: Apply`, no addresses requested, no `--always-separate-plan-identity`)",
		phase: "`Applying`", action: "start the fast path: plan and apply in one `plan-apply` Job; every plan of rules 4 and 7 is chosen the same way",
		cases: []string{"nothing decides: plan and apply in one run", "nothing decides on a drift re-plan: plan and apply in one run", "a full plan request takes the fast path"}},
	{rule: "7", facts: "the plan has no changes", phase: "`Idle`, or (`mode: Apply` only) `AwaitingPromotion` until the Rollout admits the revision", action: "record it as applied",
		cases: []string{"a plan without changes is recorded as applied", "a plan without changes awaits promotion", "plan-only: no Rollout holds a plan without changes"}},
	{rule: "7", facts: "the plan is applied", phase: "`Idle`", action: "a drift plan once `interval` has passed since the plan, else wait",
		cases: []string{"applied: idle", "applied: drift check not due"}},
	{rule: "8", facts: "the policy gate blocks the plan", phase: "`Failed` (`PolicyViolation`, `PlanTooLarge`)", action: "none, until a policy or the plan changes",
		cases: []string{"a violation stalls", "a plan too large to evaluate stalls", "destroy mode: the destroy plan is blocked by policy"}},
	{rule: "8", facts: "the gate could not evaluate", phase: "`Failed` (`PolicyError`)", action: "evaluate again after 30 s",
		cases: []string{"a policy error is evaluated again, not stalled", "plan-only: a policy error is evaluated again"}},
	{rule: "8", facts: "the stored plan is not the plan in status", phase: "`Planning`", action: "start a plan",
		cases: []string{"a stored plan that is not the one in status is planned again", "plan-only: a stale stored plan is planned again", "a stale stored plan of a request is planned again with it"}},
	{rule: "8", facts: "`mode: PlanOnly`, the gate passed or blocked the plan", phase: "`Idle` (`PlanOnly`; Ready, `Drifted=True`, the verdict in `status.plan.policy`)",
		action: "a plan once `interval` has passed, else wait; never an apply, approved or not",
		cases: []string{"plan-only: a plan with changes is reported, not applied", "plan-only: an approved plan is not applied", "plan-only: a blocked plan is reported, not stalled",
			"plan-only: the drift check waits for the interval"}},
	{rule: "8", facts: "the gate passed the plan only through a waiver, and the plan waits for a person (rules 9 and 10)", phase: "`AwaitingPromotion` or `AwaitingApproval`",
		action: "evaluate it again when the waiver expires",
		cases:  []string{"a plan a waiver passed waits for approval until the waiver expires", "a plan a waiver passed waits for promotion until the waiver expires"}},
	{rule: "9", facts: "`mode: Apply` and the governing Rollout has not admitted the revision", phase: "`AwaitingPromotion`", action: "none: the Rollout's change wakes it",
		cases: []string{"not admitted by the Rollout"}},
	{rule: "10", facts: "`approval: Manual` and an approval the plan needed is older than `spec.approvalMaxAge`", phase: "`Planning` (`ApprovalExpired`)",
		action: "start a plan, to be approved anew",
		cases:  []string{"an approval the plan needed expired: plan again"}},
	{rule: "10", facts: "`approval: Manual` and the plan lacks approvals: none names it (`spec.approvedPlan`, or a `spec.approvals` entry with its digest), or fewer people than its approval rule asks",
		phase: "`AwaitingApproval`", action: "none (wait until the first approval counted expires, under `spec.approvalMaxAge`)",
		cases: []string{"manual approval pending", "a rule asks two approvals from a group: one counts", "an entry naming the plan with another digest approves nothing",
			"awaiting approvals wakes when the first one counted expires", "destroy mode: the destroy plan awaits approval"}},
	{rule: "11", facts: "otherwise", phase: "`Applying`, or `Destroying` for a destroy plan", action: "apply exactly that plan",
		cases: []string{"approved: apply", "approved by a user's entry: apply", "a rule asks two approvals: both given, apply", "a rule approves the plan: apply without an approval",
			"auto approval: apply", "destroy mode: apply exactly the approved destroy plan (no Rollout gates it)"}},
}

// deletionTable is rule 5: a Workspace deleted with destroyOnDelete, after
// rules 1–4.
var deletionTable = []decisionRow{
	{rule: "5", facts: "a destroy run succeeded", phase: "`Destroying` (`Destroyed`)", action: "remove the finalizer",
		cases: []string{"deletion: destroyed"}},
	{rule: "5", facts: "no artifact, a guard refuses the Workspace, or its inputs cannot be resolved", phase: "`Destroying` (`DestroySkipped`)",
		action: "remove the finalizer; resources and state stay (warning event)",
		cases:  []string{"deletion: no artifact skips the destroy"}},
	{rule: "5", facts: "the destroy gate is skipped and the cluster allows it", phase: "`Destroying`", action: "destroy without a plan",
		cases: []string{"deletion: skip the gate where allowed", "deletion: a reconcile request retries a failed destroy now"}},
	{rule: "5", facts: "no destroy plan for this revision and inputs", phase: "`Planning`",
		action: "start a destroy plan (a `DestroyGateEnforced` warning when `spec.destroy.gate: Skip` is not allowed)",
		cases:  []string{"deletion: plan the destroy (skip refused)", "deletion: a stalled failure from before the deletion does not hold it"}},
	{rule: "5", facts: "the destroy plan has no changes", phase: "`Destroying` (`Destroyed`)", action: "remove the finalizer",
		cases: []string{"deletion: nothing left to destroy"}},
	{rule: "5", facts: "the gate blocks or errs on the destroy plan", phase: "`Failed`, as rule 8", runReason: true, action: "as rule 8",
		cases: []string{"deletion: the destroy plan is blocked by policy"}},
	{rule: "5", facts: "`approval: Manual` and the destroy plan is not approved", phase: "`AwaitingApproval` (`DestroyAwaitingApproval`)", action: "none",
		cases: []string{"deletion: the destroy plan awaits approval"}},
	{rule: "5", facts: "otherwise", phase: "`Destroying`", action: "apply the destroy plan (no Rollout gates a destroy)",
		cases: []string{"deletion: apply the destroy plan (no Rollout gates it)", "a destroy plan approved by a user's entry while deleted: destroy"}},
}

// The markers around each rendered table in docs/architecture.md.
const (
	decisionTableBegin = "<!-- decision table: rendered from decisionTable (controllers/internal/workspace/decide/decision_doc_test.go) by make generate -->\n"
	deletionTableBegin = "<!-- deletion table: rendered from deletionTable (controllers/internal/workspace/decide/decision_doc_test.go) by make generate -->\n"
	tableEnd           = "<!-- end of table -->\n"
)

// TestDecisionTableDoc: docs/architecture.md's decision tables are
// decisionTable and deletionTable, rendered; every row stands for TestDecide
// cases whose decisions its phase and stalled columns describe, and its
// rules are those of Decide's doc comment. MAGOS_UPDATE_DOCS=1 (make
// generate) writes the tables.
func TestDecisionTableDoc(t *testing.T) {
	cases := map[string]decideCase{}
	for _, c := range decideCases() {
		require.NotContains(t, cases, c.name, "TestDecide's case names are unique")
		cases[c.name] = c
	}
	main := renderDecisionTable(t, decisionTable, cases, true)
	deletion := renderDecisionTable(t, deletionTable, cases, false)

	var rules []string
	for _, r := range append(slices.Clone(decisionTable), deletionTable...) {
		if !slices.Contains(rules, r.rule) {
			rules = append(rules, r.rule)
		}
	}
	assert.Equal(t, decideDocRules(t), rules, "the tables have rows for the rules of Decide's doc comment, in its order")

	path := filepath.Join("..", "..", "..", "..", "docs", "architecture.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := replaceBetween(t, string(b), decisionTableBegin, tableEnd, main)
	doc = replaceBetween(t, doc, deletionTableBegin, tableEnd, deletion)
	if os.Getenv("MAGOS_UPDATE_DOCS") != "" {
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		return
	}
	assert.Equal(t, doc, string(b), "docs/architecture.md's decision tables are out of date: run make generate")
}

// renderDecisionTable checks rows against the TestDecide cases they name
// and renders them: with the rule number and the stalled column for the
// decision table, without for the deletion table.
func renderDecisionTable(t *testing.T, rows []decisionRow, cases map[string]decideCase, numbered bool) string {
	t.Helper()
	var b strings.Builder
	if numbered {
		b.WriteString("| # | Facts | Phase (reason) | Stalled | Action |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| Facts | Phase (reason) | Action |\n|---|---|---|\n")
	}
	for _, r := range rows {
		stalled := ""
		if len(r.cases) == 0 {
			assert.Equal(t, "5", r.rule, "row %q names no TestDecide case; only rule 5 points to the deletion table", r.facts)
		}
		for i, name := range r.cases {
			c, ok := cases[name]
			if !assert.True(t, ok, "row %q names %q, which is no TestDecide case", r.facts, name) {
				continue
			}
			d := c.decide(t)
			assert.Contains(t, r.phase, "`"+string(d.Phase)+"`", "row %q: case %q decides phase %s", r.facts, name, d.Phase)
			if !r.runReason && d.Reason != "" && d.Reason != string(d.Phase) {
				assert.Contains(t, r.phase, "`"+d.Reason+"`", "row %q: case %q decides reason %s", r.facts, name, d.Reason)
			}
			s := map[bool]string{true: "yes", false: "no"}[d.Stalled]
			if i == 0 {
				stalled = s
			}
			assert.Equal(t, stalled, s, "row %q: its cases disagree on stalling (%q); split the row", r.facts, name)
		}
		cells := []string{r.facts, r.phase, r.action}
		if numbered {
			cells = []string{r.rule, r.facts, r.phase, stalled, r.action}
		}
		b.WriteString(strings.ReplaceAll("| "+strings.Join(cells, " | ")+" |\n", "|  |", "| |"))
	}
	return b.String()
}

// decideDocRules are the numbers of the rules Decide's doc comment lists,
// in its order.
func decideDocRules(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "decide.go", nil, parser.ParseComments)
	require.NoError(t, err)
	var doc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Decide" && fn.Recv == nil {
			doc = fn.Doc.Text()
		}
	}
	require.NotEmpty(t, doc, "Decide has a doc comment")
	var rules []string
	for _, m := range regexp.MustCompile(`(?m)^\s*(\d+)\.\s`).FindAllStringSubmatch(doc, -1) {
		rules = append(rules, m[1])
	}
	return rules
}

// replaceBetween is doc with what lies between begin and end replaced by
// content.
func replaceBetween(t *testing.T, doc, begin, end, content string) string {
	t.Helper()
	before, rest, ok := strings.Cut(doc, begin)
	require.True(t, ok, "docs/architecture.md has the marker %q", begin)
	_, after, ok := strings.Cut(rest, end)
	require.True(t, ok, "docs/architecture.md has the marker %q after %q", end, begin)
	return before + begin + content + end + after
}
