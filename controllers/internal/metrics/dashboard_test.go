package metrics_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"

	// The packages the five controller binaries (controllers/*/main.go)
	// import. Their init()s, and those of the packages they link (policy,
	// observe, controller-runtime's controller and workqueue metrics),
	// register every metric the binaries export.
	_ "github.com/magos-dev/magos/controllers/internal/project"
	_ "github.com/magos-dev/magos/controllers/internal/rollout"
	_ "github.com/magos-dev/magos/controllers/internal/setup"
	_ "github.com/magos-dev/magos/controllers/internal/variableset"
	_ "github.com/magos-dev/magos/controllers/internal/workspace"
	_ "github.com/magos-dev/magos/controllers/internal/workspaceset"
)

const dashboardsDir = "../../../deploy/grafana"

// dashboardRows are the rows of each dashboard in deploy/grafana, in order.
var dashboardRows = map[string][]string{
	"magos.json":           {"Overview", "Runs", "Policy", "Controllers", "Rollouts"},
	"magos-workspace.json": {"Workspace", "Runs (all Workspaces)"},
}

// dashboardVariables are the variables of each dashboard besides datasource.
var dashboardVariables = map[string][]string{
	"magos.json":           nil,
	"magos-workspace.json": {"namespace", "workspace"},
}

// controllerRuntimeMetrics are the metrics controller-runtime v0.24 registers
// with its registry, and their types: pkg/internal/controller/metrics/metrics.go
// (controller_runtime_*) and pkg/internal/metrics/workqueue.go (workqueue_*).
// Their Vecs have no series until a controller starts, so Gather cannot tell
// their types; registration itself is checked against the registry.
var controllerRuntimeMetrics = map[string]string{
	"controller_runtime_reconcile_total":                 "counter",
	"controller_runtime_reconcile_errors_total":          "counter",
	"controller_runtime_terminal_reconcile_errors_total": "counter",
	"controller_runtime_reconcile_panics_total":          "counter",
	"controller_runtime_reconcile_time_seconds":          "histogram",
	"controller_runtime_max_concurrent_reconciles":       "gauge",
	"controller_runtime_active_workers":                  "gauge",
	"controller_runtime_reconcile_timeouts_total":        "counter",
	"workqueue_depth":                             "gauge",
	"workqueue_adds_total":                        "counter",
	"workqueue_queue_duration_seconds":            "histogram",
	"workqueue_work_duration_seconds":             "histogram",
	"workqueue_unfinished_work_seconds":           "gauge",
	"workqueue_longest_running_processor_seconds": "gauge",
	"workqueue_retries_total":                     "counter",
	// pkg/metrics/leaderelection.go: 1 on the leader, 0 on a standby.
	"leader_election_master_status": "gauge",
}

// scrapeSeries are the series Prometheus itself records for every target.
var scrapeSeries = []string{"up"}

type dashboard struct {
	Title         string     `json:"title"`
	UID           string     `json:"uid"`
	SchemaVersion int        `json:"schemaVersion"`
	Panels        []panel    `json:"panels"`
	Templating    templating `json:"templating"`
}

type templating struct {
	List []variable `json:"list"`
}

type variable struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Query string `json:"query"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource *datasourceRef `json:"datasource"`
	GridPos    *struct {
		X int `json:"x"`
		Y int `json:"y"`
		W int `json:"w"`
		H int `json:"h"`
	} `json:"gridPos"`
	Targets []target `json:"targets"`
	// Panels holds the panels of a collapsed row.
	Panels []panel `json:"panels"`
}

type target struct {
	RefID      string         `json:"refId"`
	Expr       string         `json:"expr"`
	Datasource *datasourceRef `json:"datasource"`
}

var promDatasource = datasourceRef{Type: "prometheus", UID: "${datasource}"}

// forEachDashboard runs test as a subtest for every dashboard in
// deploy/grafana, and fails if the directory holds one dashboardRows does
// not know.
func forEachDashboard(t *testing.T, test func(t *testing.T, file string, d dashboard)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dashboardsDir, "*.json"))
	require.NoError(t, err)
	var names []string
	for _, path := range files {
		names = append(names, filepath.Base(path))
	}
	require.ElementsMatch(t, slices.Collect(maps.Keys(dashboardRows)), names, "dashboards in deploy/grafana")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dashboardsDir, name))
			require.NoError(t, err)
			var d dashboard
			require.NoError(t, json.Unmarshal(raw, &d), "the dashboard is not valid JSON")
			test(t, name, d)
		})
	}
}

// flatten lists every panel, rows first and the panels of collapsed rows
// after their row.
func flatten(panels []panel) []panel {
	var all []panel
	for _, p := range panels {
		all = append(all, p)
		all = append(all, flatten(p.Panels)...)
	}
	return all
}

func TestDashboardsAreGrafanaDashboards(t *testing.T) {
	uids := map[string]string{}
	forEachDashboard(t, func(t *testing.T, file string, d dashboard) {
		checkDashboard(t, file, d)
		if other, dup := uids[d.UID]; dup {
			t.Errorf("%s and %s share uid %s", other, file, d.UID)
		}
		uids[d.UID] = file
	})
}

// checkDashboard checks the structure of dashboard file: ids, grid,
// datasources, queries, rows and variables.
func checkDashboard(t *testing.T, file string, d dashboard) {
	t.Helper()
	assert.NotEmpty(t, d.Title, "title")
	assert.NotEmpty(t, d.UID, "uid")
	assert.LessOrEqual(t, len(d.UID), 40, "Grafana uids are at most 40 characters")
	assert.GreaterOrEqual(t, d.SchemaVersion, 36, "datasources are referenced by uid from schema 36 on")

	assert.Contains(t, d.Templating.List, variable{Name: "datasource", Type: "datasource", Query: "prometheus"},
		"templating needs a variable datasource of type datasource over prometheus")

	panels := flatten(d.Panels)
	require.NotEmpty(t, panels, "panels")
	ids := map[int]string{}
	var rows []string
	for _, p := range panels {
		assert.NotEmpty(t, p.Title, "panel %d has no title", p.ID)
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if assert.NotNil(t, p.GridPos, "panel %q has no gridPos", p.Title) {
			assert.Positive(t, p.GridPos.W, "panel %q width", p.Title)
			assert.Positive(t, p.GridPos.H, "panel %q height", p.Title)
			assert.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, "panel %q is wider than the grid", p.Title)
		}
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		if assert.NotNil(t, p.Datasource, "panel %q has no datasource", p.Title) {
			assert.Equal(t, promDatasource, *p.Datasource, "panel %q datasource", p.Title)
		}
		assert.NotEmpty(t, p.Targets, "panel %q has no queries", p.Title)
		refIDs := map[string]bool{}
		for _, tg := range p.Targets {
			assert.NotEmpty(t, tg.Expr, "panel %q query %s has no expr", p.Title, tg.RefID)
			assert.NotEmpty(t, tg.RefID, "panel %q has a query without refId", p.Title)
			assert.False(t, refIDs[tg.RefID], "panel %q repeats refId %s", p.Title, tg.RefID)
			refIDs[tg.RefID] = true
			if tg.Datasource != nil {
				assert.Equal(t, promDatasource, *tg.Datasource, "panel %q query %s datasource", p.Title, tg.RefID)
			}
		}
	}
	assert.Equal(t, dashboardRows[file], rows, "rows")

	var vars []string
	for _, v := range d.Templating.List {
		if v.Name == "datasource" {
			continue
		}
		vars = append(vars, v.Name)
		assert.Equal(t, "query", v.Type, "variable %s", v.Name)
		assert.NotEmpty(t, v.Query, "variable %s has no query", v.Name)
	}
	assert.Equal(t, dashboardVariables[file], vars, "variables")
}

var (
	// quoted matches PromQL string literals (label values), which are not
	// metric names even when they look like one.
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	// metricName matches the identifiers the dashboard queries metrics by:
	// everything Magos and controller-runtime export starts with one of
	// these prefixes, and no PromQL function, keyword or label the
	// dashboard uses does. Prometheus's own up is matched where it is
	// selected with braces.
	metricName = regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:])((?:magos|controller_runtime|workqueue|leader_election)_[a-zA-Z0-9_:]*|up\s*\{)`)
)

// metricNames lists the metric (series) names expr selects.
func metricNames(expr string) []string {
	var names []string
	for _, m := range metricName.FindAllStringSubmatch(quoted.ReplaceAllString(expr, `""`), -1) {
		names = append(names, strings.TrimRight(m[1], " \t{"))
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (phase) (magos_workspaces)`: {"magos_workspaces"},
		`histogram_quantile(0.95, sum by (le) (rate(magos_policy_evaluation_duration_seconds_bucket[$__rate_interval])))`: {"magos_policy_evaluation_duration_seconds_bucket"},
		`sum(rate(magos_workspace_runs_total{result="Failed"}[5m])) / sum(rate(magos_workspace_runs_total[5m]))`:          {"magos_workspace_runs_total", "magos_workspace_runs_total"},
		`sum by (name) (workqueue_depth{name="magos_lookalike"}) + controller_runtime_active_workers`:                     {"workqueue_depth", "controller_runtime_active_workers"},
		`max by (name) (leader_election_master_status{job=~"magos-.+"}) == 0`:                                             {"leader_election_master_status"},
		`up{job="x"} == 0 or group_left(up) setup_total`:                                                                  {"up"},
		`not_magos_metric`: nil,
	} {
		assert.Equal(t, want, metricNames(expr), expr)
	}
}

// registered reports whether a collector describing a metric called name
// is registered with controller-runtime's registry, the one the binaries
// serve on their metrics endpoint. Unlike Gather it sees Vecs that have no
// series yet: the registry rejects a probe collector of the same name if,
// and only if, the name is taken.
func registered(t *testing.T, name string) bool {
	t.Helper()
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe for " + name})
	require.NoError(t, prometheus.NewRegistry().Register(probe), "probe %s is not a valid metric", name)
	if err := ctrlmetrics.Registry.Register(probe); err != nil {
		return true
	}
	ctrlmetrics.Registry.Unregister(probe)
	return false
}

func TestRegisteredSeesVecsWithoutSeries(t *testing.T) {
	assert.True(t, registered(t, "controller_runtime_reconcile_panics_total"), "a Vec no controller has touched")
	assert.True(t, registered(t, "magos_build_info"))
	assert.False(t, registered(t, "magos_no_such_metric_total"))
	assert.False(t, registered(t, "magos_workspace_run_duration_seconds_bucket"), "a histogram registers its family name only")
}

func TestControllerRuntimeMetricsAreRegistered(t *testing.T) {
	for name := range controllerRuntimeMetrics {
		assert.True(t, registered(t, name), "controller-runtime no longer registers %s; update controllerRuntimeMetrics", name)
	}
}

// addSources adds exportedTypes's object sources once.
var addSources sync.Once

// exportedTypes records one series of every Magos metric through the
// package's helpers, so that Gather lists each family, and returns the type
// of every family it can tell: gathered ones and controller-runtime's.
func exportedTypes(t *testing.T) map[string]string {
	t.Helper()
	metrics.SetBuildInfo("dashboard-test", "", "test")
	metrics.RecordReconcile("Workspace", nil)
	metrics.RecordRun("plan", "Succeeded", 1)
	metrics.RecordDrift()
	metrics.RecordPolicyEvaluation(metrics.PolicyResultPassed, 0.01)
	metrics.RecordPolicyViolation("dashboard-test", "Deny")
	// The sources stay for the rest of the tests: exportedLabels gathers
	// after this returns.
	addSources.Do(func() {
		metrics.AddObjectSource(magosv1.WorkspaceKind, fixedSeries(metrics.ObjectSeries{Kind: magosv1.WorkspaceKind, Namespace: "dashboard-test", Name: "ws",
			Info: metrics.ResourceInfo{Phase: "Idle"}, Workspace: &metrics.WorkspaceState{
				Drifted: true, LastApplied: time.Unix(1, 0), Awaiting: "AwaitingApproval", AwaitingSince: time.Unix(1, 0), LockHeld: true,
			}}), nil)
		metrics.RecordRunFailure("plan", "PlanFailed")
		metrics.RecordRunStep("plan", metrics.StepFetch, 1)
		metrics.RecordStageTransition("Progressing")
		metrics.RecordRolloutDuration(60)
		metrics.AddObjectSource(magosv1.RolloutKind, fixedSeries(metrics.ObjectSeries{Kind: magosv1.RolloutKind, Namespace: "dashboard-test", Name: "ro"}), nil)
	})
	// magos_variableset_* series exist from the variableset package's init.

	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	types := map[string]string{}
	for _, mf := range families {
		types[mf.GetName()] = strings.ToLower(mf.GetType().String())
	}
	for name, typ := range controllerRuntimeMetrics {
		if gathered, ok := types[name]; ok {
			require.Equal(t, typ, gathered, "controllerRuntimeMetrics has the wrong type for %s", name)
		}
		types[name] = typ
	}
	return types
}

// seriesSuffixes are the series a histogram (all three) or a summary (_sum
// and _count) exposes besides its quantiles.
var seriesSuffixes = map[string][]string{
	"_bucket": {"histogram"},
	"_sum":    {"histogram", "summary"},
	"_count":  {"histogram", "summary"},
}

// checkExported fails unless name is a series the binaries export: a
// registered counter or gauge, or a series of a registered histogram or
// summary with a suffix that type has.
func checkExported(t *testing.T, types map[string]string, name, where string) {
	t.Helper()
	if slices.Contains(scrapeSeries, name) {
		return
	}
	if registered(t, name) {
		typ, known := types[name]
		switch {
		case !known:
			t.Errorf("%s: cannot tell the type of %s: record a series of it in exportedTypes", where, name)
		case typ == "histogram" || typ == "summary":
			t.Errorf("%s: %s is a %s; query its _bucket, _sum or _count series", where, name, typ)
		}
		return
	}
	for suffix, fits := range seriesSuffixes {
		family, ok := strings.CutSuffix(name, suffix)
		if !ok || !registered(t, family) {
			continue
		}
		typ, known := types[family]
		switch {
		case !known:
			t.Errorf("%s: cannot tell the type of %s: record a series of it in exportedTypes", where, family)
		case !slices.Contains(fits, typ):
			t.Errorf("%s: %s is a %s, which has no %s series", where, family, typ, suffix)
		}
		return
	}
	t.Errorf("%s: no binary exports %s", where, name)
}

func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	types := exportedTypes(t)
	forEachDashboard(t, func(t *testing.T, _ string, d dashboard) {
		checkDashboardQueries(t, types, d)
	})
}

// checkDashboardQueries fails unless every query and variable of d names
// metrics the binaries export.
func checkDashboardQueries(t *testing.T, types map[string]string, d dashboard) {
	t.Helper()
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		names := metricNames(v.Query)
		assert.NotEmpty(t, names, "variable %s: %q names no metric", v.Name, v.Query)
		for _, name := range names {
			checkExported(t, types, name, "variable "+v.Name)
		}
	}
	queried := 0
	for _, p := range flatten(d.Panels) {
		for _, tg := range p.Targets {
			where := p.Title + " " + tg.RefID
			names := metricNames(tg.Expr)
			assert.NotEmpty(t, names, "%s: %q names no Magos or controller-runtime metric", where, tg.Expr)
			for _, name := range names {
				checkExported(t, types, name, where)
				queried++
			}
		}
	}
	require.Positive(t, queried, "the dashboard queries no metric")
}
