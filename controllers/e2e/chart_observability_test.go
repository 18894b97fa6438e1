package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/yaml"
)

// alertGroups reads the rule groups of deploy/prometheus/alerts.yaml, the
// file the chart's PrometheusRule renders.
func alertGroups(t *testing.T) []any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.Root, "deploy", "prometheus", "alerts.yaml"))
	require.NoError(t, err)
	var file struct {
		Groups []any `json:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(data, &file))
	return file.Groups
}

// renderedRules returns the rules of the PrometheusRule in objs by alert name.
func renderedRules(t *testing.T, rule *unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	groups, _, err := unstructured.NestedSlice(rule.Object, "spec", "groups")
	require.NoError(t, err)
	rules := map[string]map[string]any{}
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			rules[r["alert"].(string)] = r
		}
	}
	return rules
}

func TestHelmChartPrometheusRule(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)

	t.Run("off by default", func(t *testing.T) {
		objs := renderChart(t, "magos", ns)
		assert.Nil(t, chartObject(objs, "PrometheusRule", "magos-alerts"))
	})

	t.Run("with the file's job matcher renders deploy/prometheus/alerts.yaml as it is", func(t *testing.T) {
		objs := renderChart(t, "magos", ns, "--set", "prometheusRule.enabled=true",
			"--set-string", `prometheusRule.controllerJobMatcher=job=~"magos-.+-controller-metrics"`)
		rule := chartObject(objs, "PrometheusRule", "magos-alerts")
		require.NotNil(t, rule)
		assert.Equal(t, ns, rule.GetNamespace())
		groups, _, err := unstructured.NestedSlice(rule.Object, "spec", "groups")
		require.NoError(t, err)
		assert.Equal(t, alertGroups(t), groups, "the chart's files/alerts.yaml is out of date: run `make generate`")
	})

	t.Run("options", func(t *testing.T) {
		release := "m" + rand.String(5)
		objs := renderChart(t, release, ns,
			"--set", "prometheusRule.enabled=true",
			"--set", "prometheusRule.namespace=monitoring",
			"--set", "prometheusRule.labels.release=kube-prometheus-stack",
			"--set", "prometheusRule.additionalRuleLabels.team=platform",
			"--set", "prometheusRule.rules.MagosWorkspaceNotReady.for=30m",
			"--set", "prometheusRule.rules.MagosWorkspaceNotReady.severity=critical",
			"--set", "prometheusRule.rules.MagosWorkspaceDrifted.enabled=false")
		rule := chartObject(objs, "PrometheusRule", release+"-alerts")
		require.NotNil(t, rule)
		assert.Equal(t, "monitoring", rule.GetNamespace())
		assert.Equal(t, "kube-prometheus-stack", rule.GetLabels()["release"])
		assert.Equal(t, release, rule.GetLabels()["app.kubernetes.io/instance"])

		rules := renderedRules(t, rule)
		assert.NotContains(t, rules, "MagosWorkspaceDrifted", "a disabled alert is dropped")
		require.Contains(t, rules, "MagosWorkspaceNotReady")
		assert.Equal(t, "30m", rules["MagosWorkspaceNotReady"]["for"])
		assert.Equal(t, map[string]any{"severity": "critical", "team": "platform"}, rules["MagosWorkspaceNotReady"]["labels"])
		assert.Equal(t, map[string]any{"severity": "critical", "team": "platform"}, rules["MagosControllerDown"]["labels"])
		assert.Equal(t, "5m", rules["MagosWorkspaceStalled"]["for"], "alerts without overrides keep the file's values")
		// A ServiceMonitor's job is the Service's name, a PodMonitor's
		// <namespace>/<name>, whichever of them each controller enables.
		jobs := `job=~"` + release + `-.+-controller-metrics|` + ns + `/` + release + `-.+-controller"`
		for _, alert := range []string{"MagosControllerDown", "MagosControllerMetricsAbsent", "MagosControllerNoLeader"} {
			expr := rules[alert]["expr"].(string)
			assert.Contains(t, expr, jobs, "%s selects the release's ServiceMonitor and PodMonitor jobs", alert)
			assert.NotContains(t, expr, `job=~"magos-`, alert)
		}
		jobRegexp := regexp.MustCompile(`^(?:` + strings.TrimSuffix(strings.TrimPrefix(jobs, `job=~"`), `"`) + `)$`)
		for _, job := range []string{release + "-workspace-controller-metrics", ns + "/" + release + "-workspace-controller"} {
			assert.Regexp(t, jobRegexp, job)
		}
		assert.NotRegexp(t, jobRegexp, "other-"+release+"-workspace-controller-metrics")
		objs = renderChart(t, release, ns, "--set", "prometheusRule.enabled=true",
			"--set-string", `prometheusRule.controllerJobMatcher=job="magos"`)
		assert.Contains(t, renderedRules(t, chartObject(objs, "PrometheusRule", release+"-alerts"))["MagosControllerDown"]["expr"],
			`up{job="magos"}`)
	})

	t.Run("an override of no alert fails the render", func(t *testing.T) {
		out := renderChartError(t, "magos", ns,
			"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.rules.MagosNoSuchAlert.for=1m")
		assert.Contains(t, out, "prometheusRule.rules.MagosNoSuchAlert: no such alert")
	})
}

func TestHelmChartDashboards(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	release := "m" + rand.String(5)

	objs := renderChart(t, release, ns)
	for _, o := range objs {
		assert.NotEqual(t, "ConfigMap", o.GetKind(), "dashboards are off by default: %s", o.GetName())
	}

	objs = renderChart(t, release, ns, "--set", "dashboards.enabled=true",
		"--set", "dashboards.annotations.grafana_folder=Magos")
	files, err := filepath.Glob(filepath.Join(env.Root, "deploy", "grafana", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 2, "the overview and the Workspace drill-down")
	var dashboards []*unstructured.Unstructured
	for _, path := range files {
		file := filepath.Base(path)
		cm := chartObject(objs, "ConfigMap", release+"-dashboard-"+strings.TrimSuffix(file, ".json"))
		require.NotNil(t, cm, "ConfigMap of %s", file)
		dashboards = append(dashboards, cm)
		assert.Equal(t, "1", cm.GetLabels()["grafana_dashboard"], "the label the Grafana sidecar selects")
		assert.Equal(t, "Magos", cm.GetAnnotations()["grafana_folder"])
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		assert.Equal(t, map[string]string{file: strings.TrimRight(string(want), "\n")}, data,
			"the chart's files/dashboards/%s is out of date: run `make generate`", file)
	}
	installChart(t, dashboards)
}
