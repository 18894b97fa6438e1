package e2e

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/magos-dev/magos/tools/harness/executor"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// scrape is one scrape of a /metrics endpoint: its metric families by name.
type scrape map[string]*dto.MetricFamily

// parseScrape parses the Prometheus text exposition body.
func parseScrape(body []byte) (scrape, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	return scrape(families), err
}

// sample is one series of a counter, gauge or untyped metric.
type sample struct {
	labels map[string]string
	value  float64
}

// samples are the series of metric name.
func (sc scrape) samples(name string) []sample {
	var out []sample
	for _, m := range sc[name].GetMetric() {
		s := sample{labels: map[string]string{}, value: m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()}
		for _, l := range m.GetLabel() {
			s.labels[l.GetName()] = l.GetValue()
		}
		out = append(out, s)
	}
	return out
}

// sum adds the samples of name whose labels satisfy match (nil: all).
func (sc scrape) sum(name string, match func(map[string]string) bool) float64 {
	var total float64
	for _, s := range sc.samples(name) {
		if match == nil || match(s.labels) {
			total += s.value
		}
	}
	return total
}

// isWrite says whether an HTTP or apiserver verb writes.
func isWrite(verb string) bool {
	switch strings.ToUpper(verb) {
	case "POST", "PUT", "PATCH", "DELETE", "CREATE", "UPDATE", "APPLY", "DELETECOLLECTION":
		return true
	}
	return false
}

// apiserverRequests is what the apiserver counted so far
// (apiserver_request_total): write requests, all requests, and the writes
// by "VERB resource[/subresource]".
type apiserverRequests struct {
	writes, all float64
	byResource  map[string]float64
}

func (a apiserverRequests) minus(b apiserverRequests) apiserverRequests {
	d := apiserverRequests{writes: a.writes - b.writes, all: a.all - b.all, byResource: map[string]float64{}}
	for k, v := range a.byResource {
		if v -= b.byResource[k]; v > 0 {
			d.byResource[k] = v
		}
	}
	return d
}

// plus adds b's counts to a's (a may be the zero value).
func (a apiserverRequests) plus(b apiserverRequests) apiserverRequests {
	s := apiserverRequests{writes: a.writes + b.writes, all: a.all + b.all, byResource: maps.Clone(b.byResource)}
	if s.byResource == nil {
		s.byResource = map[string]float64{}
	}
	for k, v := range a.byResource {
		s.byResource[k] += v
	}
	return s
}

// breakdown is the writes by resource, most first, each divided by n.
func (a apiserverRequests) breakdown(n int) string {
	keys := slices.SortedFunc(maps.Keys(a.byResource), func(x, y string) int {
		return cmp.Or(cmp.Compare(a.byResource[y], a.byResource[x]), cmp.Compare(x, y))
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if v := a.byResource[k] / float64(n); v >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1f", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

// readAPIServerRequests scrapes the apiserver's /metrics.
func readAPIServerRequests(t testing.TB) apiserverRequests {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	resp, err := hc.Get(strings.TrimSuffix(env.Config.Host, "/") + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	sc, err := parseScrape(body)
	require.NoError(t, err)
	a := apiserverRequests{byResource: map[string]float64{}}
	for _, s := range sc.samples("apiserver_request_total") {
		a.all += s.value
		if !isWrite(s.labels["verb"]) {
			continue
		}
		a.writes += s.value
		key := s.labels["verb"] + " " + s.labels["resource"]
		if sub := s.labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		a.byResource[key] += s.value
	}
	return a
}

// controllerFigures are what a controller process reports about itself.
type controllerFigures struct {
	// writes and requests are its API requests (rest_client_requests_total).
	writes, requests float64
	// reconciles of Workspaces (controller_runtime_reconcile_total).
	reconciles float64
	// observed is the Workspaces it exports magos_resource_info for: the
	// ones it reconciled since it started.
	observed int
	// gcCPUSeconds is the CPU time its garbage collector used, as the Go
	// runtime counts it (go_cpu_classes_gc_total_cpu_seconds_total).
	gcCPUSeconds float64
	metrics      scrape
}

// readControllerFigures scrapes the controller's /metrics, trying again
// for a while: a busy machine may answer slowly.
func readControllerFigures(t testing.TB, p *controllerProcess) controllerFigures {
	t.Helper()
	var err error
	for range 10 {
		var f controllerFigures
		if f, err = scrapeController(p); err == nil {
			return f
		}
		time.Sleep(time.Second)
	}
	require.NoError(t, err, "scraping the controller's metrics")
	return controllerFigures{}
}

var scrapeClient = &http.Client{Timeout: 30 * time.Second}

// scrapeController reads the controller's figures from its /metrics.
func scrapeController(p *controllerProcess) (controllerFigures, error) {
	resp, err := scrapeClient.Get("http://" + p.metricsAddr + "/metrics")
	if err != nil {
		return controllerFigures{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return controllerFigures{}, fmt.Errorf("%s: %v", resp.Status, err)
	}
	sc, err := parseScrape(raw)
	if err != nil {
		return controllerFigures{}, err
	}
	f := controllerFigures{metrics: sc}
	f.writes = sc.sum("rest_client_requests_total", func(l map[string]string) bool { return isWrite(l["method"]) })
	f.requests = sc.sum("rest_client_requests_total", nil)
	f.reconciles = sc.sum("controller_runtime_reconcile_total", func(l map[string]string) bool { return l["controller"] == "workspace" })
	f.gcCPUSeconds = sc.sum("go_cpu_classes_gc_total_cpu_seconds_total", nil)
	f.observed = len(slices.DeleteFunc(sc.samples("magos_resource_info"), func(s sample) bool { return s.labels["kind"] != "Workspace" }))
	return f, nil
}

// queueWait is the run queue's wait histogram of one priority.
type queueWait struct {
	count, sum float64
	// max is the upper bound of the bucket of the longest wait (+Inf
	// when beyond the last bucket, 0 with no observation).
	max float64
}

// readQueueWait reads magos_workspace_run_queue_wait_seconds by priority.
func readQueueWait(sc scrape) map[string]queueWait {
	out := map[string]queueWait{}
	for _, m := range sc["magos_workspace_run_queue_wait_seconds"].GetMetric() {
		var priority string
		for _, l := range m.GetLabel() {
			if l.GetName() == "priority" {
				priority = l.GetValue()
			}
		}
		h := m.GetHistogram()
		w := queueWait{count: float64(h.GetSampleCount()), sum: h.GetSampleSum()}
		if w.count > 0 {
			w.max = math.Inf(1)
			for _, b := range h.GetBucket() {
				if float64(b.GetCumulativeCount()) >= w.count && b.GetUpperBound() < w.max {
					w.max = b.GetUpperBound()
				}
			}
		}
		out[priority] = w
	}
	return out
}

// String is the wait as a person reads it.
func (w queueWait) String() string {
	if w.count == 0 {
		return "none waited"
	}
	return fmt.Sprintf("%.0f waited, mean %.1fs, longest ≤ %gs", w.count, w.sum/w.count, w.max)
}

// procFigures are a process's resident memory, now and at its peak, and
// its CPU time so far.
type procFigures struct {
	rssMiB, peakRSSMiB, cpuSeconds float64
}

// readProcFigures reads /proc/<pid>/status (VmRSS, VmHWM) and the
// process's own CPU time from /proc/<pid>/stat.
func readProcFigures(t testing.TB, pid int) procFigures {
	t.Helper()
	f := procFigures{
		rssMiB:     float64(testenv.ProcStatusKiB(t, pid, "VmRSS")) / 1024,
		peakRSSMiB: float64(testenv.ProcStatusKiB(t, pid, "VmHWM")) / 1024,
	}
	stat, err := executor.ReadProcStat(pid)
	require.NoError(t, err)
	f.cpuSeconds = stat.Self.Seconds()
	return f
}
