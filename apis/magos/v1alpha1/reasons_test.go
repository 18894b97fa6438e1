package v1alpha1_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestReasonTableIsComplete: every reason constant of the API is in the
// table once, with a class, the kinds that carry it and a meaning.
func TestReasonTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range magosv1.ReasonTable() {
		assert.False(t, seen[r.Reason], "%s is in the table twice", r.Reason)
		seen[r.Reason] = true
		assert.Contains(t, []magosv1.ReasonClass{magosv1.ReasonStalls, magosv1.ReasonRetries, magosv1.ReasonWaits, magosv1.ReasonProgresses, magosv1.ReasonSettles}, r.Class, r.Reason)
		assert.NotEmpty(t, r.Kinds, r.Reason)
		assert.True(t, strings.HasSuffix(r.Meaning, "."), "%s: a meaning is a sentence", r.Reason)
	}
	for name, value := range reasonConstants(t) {
		assert.True(t, seen[value], "%s (%q) is missing from the reason table", name, value)
		switch {
		case name == "ReasonKubernetesClient" || name == "ReconciliationSucceededReason":
		case strings.HasPrefix(name, "Reason"):
			assert.Equal(t, "Reason"+value, name, "a reason constant is named Reason<value> (the controllers' checks read it so)")
		default:
			assert.Equal(t, value+"Reason", name, "a shared reason constant is named <value>Reason")
		}
	}
}

// TestStallingRunReasons pins which run failures stall a Workspace instead
// of being retried: only those a retry with the same revision and inputs
// cannot fix.
func TestStallingRunReasons(t *testing.T) {
	runFailures := []string{
		magosv1.ReasonRunFailed, magosv1.ReasonInvalidConfig, magosv1.ReasonKubernetesClient, magosv1.ReasonArtifactFetchFailed,
		magosv1.ReasonArtifactDigestMismatch, magosv1.ReasonArtifactRejected, magosv1.ReasonPathNotFound, magosv1.ReasonEngineNotFound,
		magosv1.ReasonBackendFailed, magosv1.ReasonInitFailed, magosv1.ReasonPlanFailed, magosv1.ReasonPlanStoreFailed,
		magosv1.ReasonPlanNotFound, magosv1.ReasonPlanCorrupt, magosv1.ReasonPlanDigestMismatch, magosv1.ReasonPlanBinaryMismatch,
		magosv1.ReasonPlanStale, magosv1.ReasonApplyFailed, magosv1.ReasonDestroyFailed, magosv1.ReasonOutputsFailed,
		magosv1.ReasonStateLocked, magosv1.ReasonCanceled, magosv1.ReasonStateNotSaved, magosv1.ReasonStateTooLarge,
		magosv1.ReasonJobMissing, magosv1.ReasonDeadlineExceeded, magosv1.ReasonOOMKilled, magosv1.ReasonEvicted,
		magosv1.ReasonImagePullFailed, magosv1.ReasonRunStartFailed, magosv1.ReasonPlanStorageLimitExceeded, magosv1.ReasonRunnerVersionMismatch,
		magosv1.ReasonPolicyViolation, magosv1.ReasonPlanTooLarge, magosv1.ReasonPolicyError, magosv1.ReasonNoReport,
	}
	var stalling []string
	for _, r := range runFailures {
		if magosv1.ReasonStallsRecovery(r) {
			stalling = append(stalling, r)
		}
	}
	assert.ElementsMatch(t, []string{
		magosv1.ReasonStateLocked, magosv1.ReasonStateNotSaved, magosv1.ReasonStateTooLarge,
		magosv1.ReasonArtifactRejected, magosv1.ReasonArtifactDigestMismatch, magosv1.ReasonEngineNotFound, magosv1.ReasonPathNotFound,
		magosv1.ReasonPolicyViolation, magosv1.ReasonPlanTooLarge,
	}, stalling)
	assert.False(t, magosv1.ReasonStallsRecovery("SomethingNew"), "an unknown reason is retried")
}

// TestReasonsDoc: docs/reasons.md is the table, rendered. MAGOS_UPDATE_DOCS=1
// (make generate) writes it.
func TestReasonsDoc(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "reasons.md")
	want := renderReasons()
	if os.Getenv("MAGOS_UPDATE_DOCS") != "" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "docs/reasons.md is out of date: run make generate")
}

// TestAlertsAndDashboardsNameKnownReasons: a reason an alert or a
// dashboard selects on is one the controllers set.
func TestAlertsAndDashboardsNameKnownReasons(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "deploy", "grafana", "*.json"))
	require.NoError(t, err)
	files = append(files, filepath.Join("..", "..", "..", "deploy", "prometheus", "alerts.yaml"))
	selector := regexp.MustCompile(`reason\s*(?:=~|!~|=|!=)\s*\\?"([^"\\]*)\\?"`)
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range selector.FindAllStringSubmatch(string(b), -1) {
			for _, reason := range strings.Split(m[1], "|") {
				found++
				_, ok := magosv1.LookupReason(reason)
				assert.True(t, ok, "%s selects on reason %q, which no controller sets", filepath.Base(f), reason)
			}
		}
	}
	assert.NotZero(t, found, "the alerts select on reasons")
}

func renderReasons() string {
	var b strings.Builder
	b.WriteString(`# Reasons

<!-- Generated from apis/magos/v1alpha1/reasons.go by make generate; do not edit. -->

Every reason a Magos object's conditions, events or runs carry, what it
means and how the object recovers. The recovery class decides what
` + "`kubectl wait`" + `, Flux health checks and kstatus read:

| Recovery | Conditions | kstatus | What helps |
|---|---|---|---|
| Stalls | ` + "`Stalled=True`" + `, ` + "`Ready=False`" + ` | Failed | a person, a new revision, or a change of the spec or of what it references; nothing is retried |
| Retries | ` + "`Reconciling=True`" + ` (` + "`ProgressingWithRetry`" + ` for a Workspace's run), ` + "`Ready=False`" + ` | InProgress | nothing: the controller retries with backoff (a Workspace's ` + "`spec.retry`" + `) |
| Waits | ` + "`Ready=False`" + `, ` + "`Reconciling=True`" + ` while waiting for an object, neither while waiting for a person | InProgress or Current | the object waited for, a free slot, or a person's approval or promotion |
| Progresses | ` + "`Reconciling=True`" + ` | InProgress | nothing: work in progress |
| Settles | ` + "`Ready=True`" + `, or only an event | Current | nothing to recover from |

| Reason | Kinds | Recovery | Meaning |
|---|---|---|---|
`)
	for _, r := range magosv1.ReasonTable() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Reason, strings.Join(r.Kinds, ", "), r.Class, r.Meaning)
	}
	return b.String()
}

// reasonConstants are the API's string constants named Reason… or …Reason,
// by name, read from its source.
func reasonConstants(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	matches, err := filepath.Glob("*.go")
	require.NoError(t, err)
	consts := map[string]string{}
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					n := name.Name
					if (!strings.HasPrefix(n, "Reason") && !strings.HasSuffix(n, "Reason")) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || slices.Contains([]string{"ReasonStalls", "ReasonRetries", "ReasonWaits", "ReasonProgresses", "ReasonSettles"}, n) {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					consts[n] = v
				}
			}
		}
	}
	require.NotEmpty(t, consts)
	return consts
}
