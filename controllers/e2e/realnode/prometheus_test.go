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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// prometheusAddr is where the test's Prometheus listens, inside the
// node's network namespace.
const prometheusAddr = "127.0.0.1:19090"

// TestPrometheusScrapesMagos: a real Prometheus (built by `make node` from
// its Go module, run in the node's network namespace) scrapes the four
// controller Pods of the chart under the job names the chart's monitors
// give them, and loads the shipped alert rules. Every target is up, the
// run metrics count the Workspace's plan and apply, every alert rule
// evaluates without error against the real series, a stalled Workspace
// makes MagosWorkspaceStalled pending, and every query of the shipped
// Grafana dashboards runs.
func TestPrometheusScrapesMagos(t *testing.T) {
	ctx := context.Background()
	requireSourceController(t)
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	ns := newNamespace(t)
	content := t.TempDir()
	writeRelease(t, content, "metrics")
	rev := newGitSource(t, ns).Publish(ctx, "infra", content)
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Outputs:   &magosv1.OutputsSpec{SecretName: "release-outputs"},
		},
	}))
	waitWorkspace(t, ns, "release", 5*time.Minute, "applies", applied(rev))
	// A Workspace the guards refuse (a source in another namespace): Stalled.
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: ns},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra", Namespace: fluxNamespace}},
	}))

	prom := startPrometheus(t, root)
	// The chart's ServiceMonitors name each job after the metrics Service.
	require.Eventually(t, func() bool {
		up := prom.query(t, `up{job=~"magos-.+-controller-metrics"} == 1`)
		return len(up) == len(controllerNames)
	}, 2*time.Minute, time.Second, "Prometheus scrapes the four controllers")

	runs := prom.query(t, `sum by (phase) (magos_workspace_runs_total{result="Succeeded"}) > 0`)
	phases := map[string]bool{}
	for _, s := range runs {
		phases[s.Metric["phase"]] = true
	}
	assert.True(t, phases["plan"] && phases["apply"], "the plan and the apply are counted: %v", runs)
	assert.Len(t, prom.query(t, fmt.Sprintf(`magos_workspace_last_applied_timestamp_seconds{namespace=%q, name="release"}`, ns)), 1,
		"the Workspace's last apply")
	assert.NotEmpty(t, prom.query(t, `magos_artifact_proxy_requests_total{result="served"} > 0`), "the artifact proxy served the runs")

	require.Eventually(t, func() bool {
		for _, a := range prom.alerts(t) {
			if a.Labels["alertname"] == "MagosWorkspaceStalled" && a.Labels["name"] == "elsewhere" && a.Labels["namespace"] == ns {
				return true
			}
		}
		return false
	}, time.Minute, time.Second, "MagosWorkspaceStalled is pending for the refused Workspace")

	rules := prom.rules(t)
	require.NotEmpty(t, rules)
	for _, r := range rules {
		assert.Equal(t, "ok", r.Health, "rule %s: %s", r.Name, r.LastError)
	}

	exprs := dashboardQueries(t, root)
	require.NotEmpty(t, exprs)
	for _, e := range exprs {
		prom.query(t, e)
	}
	t.Logf("realnode: Prometheus scraped 4 controllers, evaluated %d alert rules and ran %d dashboard queries", len(rules), len(exprs))
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
	fmt.Fprintf(&b, "global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [%q]\nscrape_configs:\n",
		filepath.Join(root, "deploy", "prometheus", "alerts.yaml"))
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

// dashboardQueries are the queries of deploy/grafana's dashboards, with
// Grafana's variables replaced by what a user's selection would give.
func dashboardQueries(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "deploy", "grafana", "*.json"))
	require.NoError(t, err)
	variable := regexp.MustCompile(`\$\{?(__rate_interval|__range|__interval|[a-z_]+)\}?`)
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["expr"].(string); ok && e != "" {
				out = append(out, variable.ReplaceAllStringFunc(e, func(m string) string {
					switch name := strings.Trim(m, "${}"); name {
					case "__rate_interval", "__range", "__interval":
						return "1m"
					default:
						return ".*"
					}
				}))
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var d any
		require.NoError(t, json.Unmarshal(b, &d))
		walk(d)
	}
	return out
}
