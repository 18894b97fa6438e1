package metrics_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const (
	alertsPath     = "../../../deploy/prometheus/alerts.yaml"
	alertTestsPath = "../../../deploy/prometheus/alerts_test.yaml"
	promtoolPath   = "../../../bin/promtool"
)

// shippedAlerts are the alerts alerts.yaml defines, in order.
var shippedAlerts = []string{
	"MagosWorkspaceNotReady", "MagosWorkspaceStalled", "MagosWorkspaceDrifted", "MagosWorkspaceAwaitingApproval",
	"MagosStateLockHeld", "MagosRunFailureRatioHigh", "MagosRolloutHalted", "MagosWorkspaceSetStalled", "MagosEventsDropped", "MagosControllerNoLeader", "MagosControllerDown",
	"MagosControllerMetricsAbsent",
}

var severities = []string{"critical", "warning", "info"}

type ruleFile struct {
	Groups []struct {
		Name  string      `json:"name"`
		Rules []alertRule `json:"rules"`
	} `json:"groups"`
}

type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ruleTests is the part of a promtool unit-test file these tests read.
type ruleTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name      string `json:"name"`
		AlertTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func loadAlerts(t *testing.T) []alertRule {
	t.Helper()
	raw, err := os.ReadFile(alertsPath)
	require.NoError(t, err)
	var f ruleFile
	require.NoError(t, yaml.UnmarshalStrict(raw, &f), "alerts.yaml is not a rule file")
	var rules []alertRule
	for _, g := range f.Groups {
		require.NotEmpty(t, g.Name, "a rule group has no name")
		rules = append(rules, g.Rules...)
	}
	return rules
}

// perObject matches an aggregation that keeps one series per object.
var perObject = regexp.MustCompile(`by \(namespace, name\)`)

func TestAlertsSayWhatAndWhere(t *testing.T) {
	rules := loadAlerts(t)
	var names []string
	for _, r := range rules {
		names = append(names, r.Alert)
		assert.NotEmpty(t, r.Expr, "%s has no expr", r.Alert)
		assert.Contains(t, severities, r.Labels["severity"], "%s severity", r.Alert)
		if r.For != "" {
			_, err := time.ParseDuration(r.For)
			assert.NoError(t, err, "%s for", r.Alert)
		}
		summary, description := r.Annotations["summary"], r.Annotations["description"]
		assert.NotEmpty(t, summary, "%s has no summary", r.Alert)
		assert.NotEmpty(t, description, "%s has no description", r.Alert)
		if perObject.MatchString(r.Expr) {
			where := "{{ $labels.namespace }}/{{ $labels.name }}"
			assert.Contains(t, summary, where, "%s is per object: its summary names the object", r.Alert)
			assert.Contains(t, description, where, "%s is per object: its description names the object", r.Alert)
		}
	}
	assert.Equal(t, shippedAlerts, names, "alerts")
}

func TestAlertExpressionsNameExportedMetrics(t *testing.T) {
	types := exportedTypes(t)
	for _, r := range loadAlerts(t) {
		names := metricNames(r.Expr)
		assert.NotEmpty(t, names, "%s: %q names no metric", r.Alert, r.Expr)
		for _, name := range names {
			checkExported(t, types, name, r.Alert)
		}
	}
}

// TestAlertUnitTestsCoverEveryAlert pins that alerts_test.yaml says, for
// every alert, both when it fires and when it does not.
func TestAlertUnitTestsCoverEveryAlert(t *testing.T) {
	raw, err := os.ReadFile(alertTestsPath)
	require.NoError(t, err)
	var tests ruleTests
	require.NoError(t, yaml.Unmarshal(raw, &tests))
	assert.Equal(t, []string{filepath.Base(alertsPath)}, tests.RuleFiles)
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertTest {
			assert.Contains(t, shippedAlerts, at.Alertname, "test %q", tc.Name)
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				silent[at.Alertname] = true
			}
		}
	}
	for _, alert := range shippedAlerts {
		assert.True(t, fires[alert], "no test in alerts_test.yaml expects %s to fire", alert)
		assert.True(t, silent[alert], "no test in alerts_test.yaml expects %s not to fire", alert)
	}
}

// promtool runs bin/promtool (built by `make tools`) and fails the test
// when it is missing or exits non-zero.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: promtool runs from bin/")
	}
	path, err := filepath.Abs(promtoolPath)
	require.NoError(t, err)
	_, err = os.Stat(path)
	require.NoError(t, err, "bin/promtool is missing: run `make tools`")
	out, err := exec.Command(path, args...).CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

func TestAlertRulesPassPromtoolCheck(t *testing.T) {
	out := promtool(t, "check", "rules", alertsPath)
	assert.Contains(t, out, "SUCCESS: "+strconv.Itoa(len(shippedAlerts))+" rules found", "promtool checked every rule")
}

func TestAlertRulesPassTheirUnitTests(t *testing.T) {
	out := promtool(t, "test", "rules", alertTestsPath)
	assert.Contains(t, out, "SUCCESS")
	assert.False(t, slices.Contains(strings.Fields(out), "FAILED:"), "%s", out)
}
