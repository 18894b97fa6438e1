package metrics_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// scrapeLabels are the labels Prometheus adds to every series it scrapes.
var scrapeLabels = []string{"job", "instance"}

// controllerRuntimeLabels are the labels of the series of controller-runtime
// and client-go metrics the queries use whose Vecs have no series before a
// controller runs, so Gather cannot list them.
var controllerRuntimeLabels = map[string][]string{
	"controller_runtime_reconcile_errors_total":        {"controller"},
	"controller_runtime_reconcile_time_seconds_bucket": {"controller", "le"},
	"workqueue_depth":               {"controller", "name"},
	"leader_election_master_status": {"name"},
}

// exportedLabels returns the label names of every series name the queries
// may select: each gathered family's metrics' labels (plus le on a
// histogram's _bucket series), controllerRuntimeLabels, and the scrape's
// job and instance on all of them.
func exportedLabels(t *testing.T) map[string][]string {
	t.Helper()
	exportedTypes(t)
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	labels := map[string][]string{"up": slices.Clone(scrapeLabels)}
	add := func(series string, names ...string) {
		for _, n := range append(names, scrapeLabels...) {
			if !slices.Contains(labels[series], n) {
				labels[series] = append(labels[series], n)
			}
		}
	}
	for name, names := range controllerRuntimeLabels {
		add(name, names...)
	}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			var names []string
			for _, lp := range m.GetLabel() {
				names = append(names, lp.GetName())
			}
			if strings.ToLower(mf.GetType().String()) == "histogram" {
				add(mf.GetName()+"_bucket", append(names, "le")...)
				add(mf.GetName()+"_sum", names...)
				add(mf.GetName()+"_count", names...)
				continue
			}
			add(mf.GetName(), names...)
		}
	}
	return labels
}

var (
	// selector matches a series name and its label matchers, name{...}.
	selector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}`)
	// matcherLabel matches the label name of a matcher in a selector.
	matcherLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	// grouping matches the label list of a by (...) or on (...) clause.
	grouping = regexp.MustCompile(`\b(?:by|on)\s*\(([^)]*)\)`)
)

// labelUses lists, per series name expr selects, the label names its
// selectors match on, and the label names of expr's by and on clauses,
// which every series expr names must have. Label values are not looked at.
func labelUses(expr string) (matched map[string][]string, grouped []string) {
	expr = quoted.ReplaceAllString(expr, `""`)
	matched = map[string][]string{}
	for _, s := range selector.FindAllStringSubmatch(expr, -1) {
		for _, m := range matcherLabel.FindAllStringSubmatch(s[2], -1) {
			matched[s[1]] = append(matched[s[1]], m[1])
		}
	}
	for _, g := range grouping.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				grouped = append(grouped, l)
			}
		}
	}
	return matched, grouped
}

func TestLabelUses(t *testing.T) {
	matched, grouped := labelUses(`max by (namespace, name) (magos_resource_info{kind="Workspace", ready!="True"}) unless on (namespace,name) magos_workspace_awaiting_since_timestamp_seconds`)
	assert.Equal(t, map[string][]string{"magos_resource_info": {"kind", "ready"}}, matched)
	assert.Equal(t, []string{"namespace", "name", "namespace", "name"}, grouped)

	matched, grouped = labelUses(`sum(rate(x_total{result=~"a{b}=c|d"}[5m]))`)
	assert.Equal(t, map[string][]string{"x_total": {"result"}}, matched, "label values are not labels")
	assert.Empty(t, grouped)
}

// labelsT is the part of *testing.T checkLabels uses.
type labelsT interface {
	Helper()
	Errorf(format string, args ...any)
}

// checkLabels fails unless every label expr matches on or groups by is a
// label of the series it applies to.
func checkLabels(t labelsT, labels map[string][]string, expr, where string) {
	t.Helper()
	matched, grouped := labelUses(expr)
	for series, names := range matched {
		for _, n := range names {
			assert.Contains(t, labels[series], n, "%s: %s has no label %s", where, series, n)
		}
	}
	for _, series := range metricNames(expr) {
		have, known := labels[series]
		if !known {
			t.Errorf("%s: cannot tell the labels of %s: record a series of it in exportedTypes or list it in controllerRuntimeLabels", where, series)
			continue
		}
		for _, n := range grouped {
			assert.Contains(t, have, n, "%s: groups or matches %s by %s, a label it does not have", where, series, n)
		}
	}
}

func TestAlertExpressionsUseExportedLabels(t *testing.T) {
	labels := exportedLabels(t)
	for _, r := range loadAlerts(t) {
		checkLabels(t, labels, r.Expr, r.Alert)
	}
}

func TestDashboardQueriesUseExportedLabels(t *testing.T) {
	labels := exportedLabels(t)
	forEachDashboard(t, func(t *testing.T, _ string, d dashboard) {
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				checkLabels(t, labels, v.Query, "variable "+v.Name)
			}
		}
		for _, p := range flatten(d.Panels) {
			for _, tg := range p.Targets {
				checkLabels(t, labels, tg.Expr, p.Title+" "+tg.RefID)
			}
		}
	})
}

func TestCheckLabelsFindsAMissingLabel(t *testing.T) {
	labels := exportedLabels(t)
	for expr, why := range map[string]string{
		`sum by (namespace) (magos_workspace_runs_total)`:                                        "magos_workspace_runs_total has no namespace label",
		`magos_workspace_runs_total{phse="plan"}`:                                                "a misspelt matcher",
		`up and on (name) magos_build_info`:                                                      "up has no name label",
		`sum by (le) (rate(magos_workspace_runs_total[5m]))`:                                     "only a histogram's _bucket series has le",
		`sum by (phase) (rate(magos_workspace_runs_total[5m]))`:                                  "",
		`histogram_quantile(0.5, sum by (le) (rate(magos_rollout_duration_seconds_bucket[5m])))`: "",
	} {
		rec := &failures{}
		checkLabels(rec, labels, expr, "probe")
		assert.Equal(t, why != "", rec.n > 0, "%s: %s", expr, why)
	}
}

// failures counts the errors checkLabels reports.
type failures struct{ n int }

func (*failures) Helper()                 {}
func (f *failures) Errorf(string, ...any) { f.n++ }
