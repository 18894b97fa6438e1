package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// prometheusAddr is where the test's Prometheus listens, inside the
// node's network namespace.
const prometheusAddr = "127.0.0.1:19090"

// TestPrometheusScrapesMagos: a real Prometheus (built by `make node` from
// its Go module, run in the node's network namespace) scrapes the five
// controller Pods of the chart under the job names the chart's monitors
// give them, and loads the shipped alert rules (their `for` durations cut
// to seconds, their expressions as shipped). After a journey through the
// states the dashboards show (an apply, a refused Workspace, a failing
// one, a denied plan, a held state lock, a Rollout waiting for and then
// given a promotion, a drifting Workspace, a VariableSet read), every
// target is up, every alert rule evaluates without error, the alerts the
// journey calls for fire and the others do not, and every query of every
// panel of the shipped Grafana dashboards returns data.
func TestPrometheusScrapesMagos(t *testing.T) {
	requireSourceController(t)
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	ns := newNamespace(t)
	j := startJourney(t, ns)

	prom := startPrometheus(t, root)
	// The chart's ServiceMonitors name each job after the metrics Service.
	require.Eventually(t, func() bool {
		up := prom.query(t, `up{job=~"magos-.+-controller-metrics"} == 1`)
		return len(up) == len(controllerNames)
	}, 2*time.Minute, time.Second, "Prometheus scrapes every controller")
	j.finish(t)

	runs := prom.query(t, `sum by (phase) (magos_workspace_runs_total{result="Succeeded"}) > 0`)
	phases := map[string]bool{}
	for _, s := range runs {
		phases[s.Metric["phase"]] = true
	}
	assert.True(t, phases["plan"] && phases["apply"], "the gated plan and apply are counted: %v", runs)
	assert.True(t, phases["plan-apply"], "the fast path's runs are counted: %v", runs)
	assert.Len(t, prom.query(t, fmt.Sprintf(`magos_workspace_last_applied_timestamp_seconds{namespace=%q, name="release"}`, ns)), 1,
		"the Workspace's last apply")
	assert.NotEmpty(t, prom.query(t, `magos_artifact_proxy_requests_total{result="served"} > 0`), "the artifact proxy served the runs")

	// What the journey calls for fires; what it does not, does not.
	firing := map[string]bool{
		"MagosWorkspaceStalled/elsewhere": true, "MagosWorkspaceNotReady/broken": true, "MagosWorkspaceNotReady/denied": true,
		"MagosStateLockHeld/locked": true,
	}
	active := map[string]bool{}
	require.Eventually(t, func() bool {
		clear(active)
		for _, a := range prom.alerts(t) {
			if a.State == "firing" && a.Labels["namespace"] == ns {
				active[a.Labels["alertname"]+"/"+a.Labels["name"]] = true
			}
		}
		for want := range firing {
			if !active[want] {
				return false
			}
		}
		return true
	}, 2*time.Minute, time.Second, "the journey's alerts fire: want %v, firing %v", firing, active)
	quiet := []string{"MagosControllerDown", "MagosControllerNoLeader", "MagosControllerMetricsAbsent", "MagosEventsDropped",
		"MagosWorkspaceAwaitingApproval", "MagosRolloutHalted", "MagosWorkspaceSetStalled"}
	for _, a := range prom.alerts(t) {
		assert.NotContains(t, quiet, a.Labels["alertname"], "alert %v (%s) has no cause in the journey", a.Labels, a.State)
		if a.Labels["alertname"] == "MagosWorkspaceStalled" && a.State == "firing" {
			ws := &magosv1.Workspace{}
			require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: a.Labels["name"]}, ws))
			assert.True(t, meta.IsStatusConditionTrue(ws.Status.Conditions, magosv1.StalledCondition), "%s is Stalled, as its alert says", ws.Name)
		}
	}

	rules := prom.rules(t)
	require.NotEmpty(t, rules)
	for _, r := range rules {
		assert.Equal(t, "ok", r.Health, "rule %s: %s", r.Name, r.LastError)
	}

	panels := dashboardQueries(t, root)
	require.NotEmpty(t, panels)
	var dead []string
	for _, p := range panels {
		// A per-Workspace panel shows data for some Workspace a user
		// selects: one of the journey's.
		got := false
		for _, ws := range j.workspaces {
			got = got || len(prom.query(t, p.with(ns, ws))) > 0
		}
		if !got {
			dead = append(dead, p.title+": "+p.expr)
		}
	}
	assert.Empty(t, dead, "dashboard panels without data after the journey")
	t.Logf("realnode: Prometheus scraped %d controllers, evaluated %d alert rules, saw %d alerts fire and %d dashboard queries return data",
		len(controllerNames), len(rules), len(firing), len(panels)-len(dead))
}

// prometheus is the test's Prometheus server.
type prometheus struct{ http *http.Client }

// startPrometheus runs bin/prometheus in the node's network namespace,
// scraping each controller Pod's metrics port every second under the job
// its metrics Service gives it, with deploy/prometheus/alerts.yaml.
func startPrometheus(t *testing.T, root string) *prometheus {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var b strings.Builder
	// The shipped rules with their `for` durations cut to seconds: the
	// expressions are what is tested, against the real series.
	alerts, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "alerts.yaml"))
	require.NoError(t, err)
	rules := filepath.Join(dir, "alerts.yaml")
	require.NoError(t, os.WriteFile(rules, regexp.MustCompile(`(?m)^(\s+for:) \S+$`).ReplaceAll(alerts, []byte("$1 5s")), 0o644))
	fmt.Fprintf(&b, "global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [%q]\nscrape_configs:\n", rules)
	for _, c := range controllerNames {
		var pods corev1.PodList
		require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(magosNamespace), client.MatchingLabels{"app.kubernetes.io/name": c + "-controller"}))
		require.NotEmpty(t, pods.Items, "%s-controller Pods", c)
		fmt.Fprintf(&b, "  - job_name: magos-%s-controller-metrics\n    static_configs: [{targets: [%q]}]\n", c, pods.Items[0].Status.PodIP+":8080")
	}
	config := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(config, []byte(b.String()), 0o644))
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	require.NoError(t, err)
	cmd := node.Command(filepath.Join(root, "bin", "prometheus"), "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+prometheusAddr)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("prometheus:\n%s", out)
		}
	})
	p := &prometheus{http: &http.Client{Transport: &http.Transport{DialContext: node.DialContext}, Timeout: 30 * time.Second}}
	require.Eventually(t, func() bool {
		resp, err := p.http.Get("http://" + prometheusAddr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 200*time.Millisecond, "Prometheus is ready")
	return p
}

// sample is one series of an instant query.
type sample struct {
	Metric map[string]string `json:"metric"`
}

// query runs an instant query and fails t when Prometheus refuses it.
func (p *prometheus) query(t *testing.T, expr string) []sample {
	t.Helper()
	var data struct {
		Result []sample `json:"result"`
	}
	p.api(t, "/api/v1/query?query="+url.QueryEscape(expr), &data)
	return data.Result
}

// alert is one active (pending or firing) alert.
type alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func (p *prometheus) alerts(t *testing.T) []alert {
	t.Helper()
	var data struct {
		Alerts []alert `json:"alerts"`
	}
	p.api(t, "/api/v1/alerts", &data)
	return data.Alerts
}

// rule is one loaded rule and how its last evaluation went.
type rule struct {
	Name      string `json:"name"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
}

// rules are the loaded rules, once each has been evaluated.
func (p *prometheus) rules(t *testing.T) []rule {
	t.Helper()
	var out []rule
	require.Eventually(t, func() bool {
		var data struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		}
		p.api(t, "/api/v1/rules", &data)
		out = nil
		for _, g := range data.Groups {
			for _, r := range g.Rules {
				if r.Health == "unknown" {
					return false
				}
				out = append(out, r)
			}
		}
		return len(out) > 0
	}, 30*time.Second, time.Second, "Prometheus evaluates every rule")
	return out
}

// api GETs a Prometheus API path and decodes its data into out.
func (p *prometheus) api(t *testing.T, path string, out any) {
	t.Helper()
	resp, err := p.http.Get("http://" + prometheusAddr + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var envelope struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &envelope), "%s", body)
	require.Equal(t, "success", envelope.Status, "%s: %s", path, envelope.Error)
	require.NoError(t, json.Unmarshal(envelope.Data, out))
}

// panel is one query of a dashboard panel, its Grafana variables still in.
type panel struct{ title, expr string }

// grafanaVariable matches a Grafana variable in a query.
var grafanaVariable = regexp.MustCompile(`\$\{?(__rate_interval|__range|__interval|[a-z_]+)\}?`)

// with is the panel's query as Grafana runs it with namespace and
// workspace selected.
func (p panel) with(namespace, workspace string) string {
	return grafanaVariable.ReplaceAllStringFunc(p.expr, func(m string) string {
		switch name := strings.Trim(m, "${}"); name {
		case "__rate_interval", "__interval":
			return "1m"
		case "__range":
			return "1h"
		case "namespace":
			return namespace
		case "workspace":
			return workspace
		default:
			return ".*"
		}
	})
}

// dashboardQueries are the queries of deploy/grafana's dashboards.
func dashboardQueries(t *testing.T, root string) []panel {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "deploy", "grafana", "*.json"))
	require.NoError(t, err)
	var out []panel
	var walk func(v any, title string)
	walk = func(v any, title string) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["title"].(string); ok {
				title = s
			}
			if e, ok := v["expr"].(string); ok && e != "" {
				out = append(out, panel{title: title, expr: e})
			}
			for _, x := range v {
				walk(x, title)
			}
		case []any:
			for _, x := range v {
				walk(x, title)
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var d any
		require.NoError(t, json.Unmarshal(b, &d))
		walk(d, "")
	}
	return out
}
