package policyengine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// benchPolicies are 20 policies: the 6 of the cookbook, 7 Audit policies
// requiring a tag (3 of those tags are on every synthetic resource, 4 are
// not) and 7 Deny policies forbidding an attribute value nothing has.
func benchPolicies(tb testing.TB) (policies []policy.Policy, docs [][]byte) {
	tb.Helper()
	for _, file := range cookbookFiles(tb) {
		data, err := os.ReadFile(file)
		require.NoError(tb, err)
		docs = append(docs, data)
	}
	for _, tag := range []string{"owner", "env", "cost-center", "team", "service", "data-classification", "backup"} {
		docs = append(docs, []byte(fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: require-tag-%[1]s
spec:
  evaluation:
    mode: JSON
  validationActions: [Audit]
  variables:
  - name: missing
    expression: >-
      object.?resource_changes.orValue([]).filter(rc,
        'create' in rc.change.actions && !rc.change.after.?tags[?'%[1]s'].hasValue())
  validations:
  - expression: size(variables.missing) == 0
    messageExpression: "'tag %[1]s missing on ' + string(size(variables.missing)) + ' resources'"
`, tag)))
	}
	for i, forbidden := range []struct{ key, value string }{
		{"instance_type", "x1e.32xlarge"}, {"location", "US"}, {"ami", "ami-00000000"},
		{"bucket", "public-www"}, {"name", "default"}, {"subnet_id", "subnet-public"}, {"protocol", "-1"},
	} {
		docs = append(docs, []byte(fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: forbid-value-%d
spec:
  evaluation:
    mode: JSON
  validationActions: [Deny]
  validations:
  - expression: >-
      object.?resource_changes.orValue([]).all(rc,
        rc.change.after.?%s.orValue('') != '%s')
    message: forbidden value
`, i, forbidden.key, forbidden.value)))
	}
	for _, doc := range docs {
		policies = append(policies, policytest.DecodePolicies(tb, doc)...)
	}
	require.Len(tb, policies, 20)
	return policies, docs
}

// BenchmarkEvaluate1000Resources20Policies: one plan of 1,000 resource
// changes against 20 compiled (cached) policies, as every re-plan after the
// first does.
func BenchmarkEvaluate1000Resources20Policies(b *testing.B) {
	planJSON := syntheticPlan(1000)
	policies, _ := benchPolicies(b)
	e, err := NewEvaluator()
	require.NoError(b, err)
	v := e.Evaluate(context.Background(), policies, planJSON)
	require.False(b, v.Errored, v.Message)
	require.Len(b, v.Policies, 20)
	b.ReportAllocs()
	for b.Loop() {
		e.Evaluate(context.Background(), policies, planJSON)
	}
	// Metrics reported before b.Loop are reset by it.
	b.ReportMetric(float64(len(planJSON))/(1<<20), "plan-MiB")
}

// BenchmarkCompileAndEvaluate1000Resources20Policies: the same with a new
// Evaluator each time, so compiling the 20 policies is included (the first
// plan after a controller start or a policy change).
func BenchmarkCompileAndEvaluate1000Resources20Policies(b *testing.B) {
	planJSON := syntheticPlan(1000)
	policies, _ := benchPolicies(b)
	b.ReportAllocs()
	for b.Loop() {
		e, err := NewEvaluator()
		require.NoError(b, err)
		e.Evaluate(context.Background(), policies, planJSON)
	}
}

// BenchmarkEngineRSS reports this process's resident memory before and
// after creating an Evaluator and evaluating the 1,000-resource plan
// against 20 policies once. The test binary has Kyverno linked and
// initialised already, and its own heap makes the delta noisy (a few MiB
// either way); BenchmarkProcessRSS gives the figure to quote.
func BenchmarkEngineRSS(b *testing.B) {
	planJSON := syntheticPlan(1000)
	policies, _ := benchPolicies(b)
	runtime.GC()
	before := vmKiB(b, "VmRSS")
	e, err := NewEvaluator()
	require.NoError(b, err)
	e.Evaluate(context.Background(), policies, planJSON)
	runtime.GC()
	after := vmKiB(b, "VmRSS")
	for b.Loop() {
		e.Evaluate(context.Background(), policies, planJSON)
	}
	b.ReportMetric(float64(before)/1024, "rss-before-MiB")
	b.ReportMetric(float64(after)/1024, "rss-after-MiB")
	b.ReportMetric(float64(after-before)/1024, "rss-delta-MiB")
}

// BenchmarkProcessRSS builds testdata/rssprobe without and with the policy
// engine (-tags policyengine) and reports each process's resident memory:
// at start (packages initialised), and at the end (base: plan parsed;
// engine: Evaluator created and the 1,000-resource plan evaluated against
// 20 policies), what the engine adds at start in the binary's own pages
// (file) and in heap and stacks (anon), and the binaries' sizes.
func BenchmarkProcessRSS(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("the go command is needed to build the probe: %v", err)
	}
	dir := b.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	require.NoError(b, os.WriteFile(planFile, syntheticPlan(1000), 0o600))
	_, docs := benchPolicies(b)
	args := []string{planFile}
	for i, doc := range docs {
		f := filepath.Join(dir, fmt.Sprintf("policy-%02d.yaml", i))
		require.NoError(b, os.WriteFile(f, doc, 0o600))
		args = append(args, f)
	}

	type probe struct {
		RSSStartKiB int `json:"rssStartKiB"`
		RSSEndKiB   int `json:"rssEndKiB"`
		RSSPeakKiB  int `json:"rssPeakKiB"`
		// RSSFileStartKiB is the binary's own pages, RSSAnonStartKiB the
		// heap and stacks, at start.
		RSSFileStartKiB int `json:"rssFileStartKiB"`
		RSSAnonStartKiB int `json:"rssAnonStartKiB"`
	}
	run := func(tags string) (probe, int64) {
		bin := filepath.Join(dir, "rssprobe-"+strings.TrimPrefix(tags, "-tags="))
		build := exec.Command(goBin, "build", "-buildvcs=false", "-o", bin)
		if tags != "" {
			build.Args = append(build.Args, tags)
		}
		build.Args = append(build.Args, "./testdata/rssprobe")
		out, err := build.CombinedOutput()
		require.NoError(b, err, "building the probe: %s", out)
		fi, err := os.Stat(bin)
		require.NoError(b, err)
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(b, cmd.Run(), stderr.String())
		var p probe
		require.NoError(b, json.Unmarshal(stdout.Bytes(), &p), stdout.String())
		b.Logf("probe %q: %s", tags, strings.TrimSpace(stdout.String()))
		return p, fi.Size()
	}
	base, baseSize := run("")
	engine, engineSize := run("-tags=policyengine")
	for b.Loop() {
	}
	mib := func(kib int) float64 { return float64(kib) / 1024 }
	b.ReportMetric(mib(base.RSSStartKiB), "base-start-MiB")
	b.ReportMetric(mib(base.RSSEndKiB), "base-end-MiB")
	b.ReportMetric(mib(engine.RSSStartKiB), "engine-start-MiB")
	b.ReportMetric(mib(engine.RSSFileStartKiB-base.RSSFileStartKiB), "engine-start-extra-file-MiB")
	b.ReportMetric(mib(engine.RSSAnonStartKiB-base.RSSAnonStartKiB), "engine-start-extra-anon-MiB")
	b.ReportMetric(mib(engine.RSSEndKiB), "engine-end-MiB")
	b.ReportMetric(mib(engine.RSSPeakKiB), "engine-peak-MiB")
	b.ReportMetric(mib(engine.RSSEndKiB-base.RSSEndKiB), "engine-extra-MiB")
	b.ReportMetric(float64(baseSize)/(1<<20), "base-binary-MiB")
	b.ReportMetric(float64(engineSize)/(1<<20), "engine-binary-MiB")
}

// vmKiB reads a KiB figure of /proc/self/status.
func vmKiB(tb testing.TB, field string) int {
	tb.Helper()
	return testenv.ProcStatusKiB(tb, os.Getpid(), field)
}

// BenchmarkEngineProcessRSS runs the policy-engine binary as the
// workspace-controller does and reports its resident memory at start
// (Kyverno linked and initialised, nothing evaluated) and after it
// evaluated the 1,000-resource plan against 20 policies (VmRSS and the
// peak VmHWM), with the time of that first evaluation (compiling the 20
// policies included) and of the next (compiled policies cached).
func BenchmarkEngineProcessRSS(b *testing.B) {
	planJSON := syntheticPlan(1000)
	policies, _ := benchPolicies(b)
	cmd := exec.Command(testenv.PolicyEngine.Build(b))
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	out := bufio.NewReader(stdout)
	evaluate := func() time.Duration {
		start := time.Now()
		require.NoError(b, policy.WriteEngineRequest(stdin, policies, planJSON, time.Minute))
		v, err := policyprotocol.ReadResponse(out)
		require.NoError(b, err)
		require.False(b, v.Errored, v.Message)
		require.Len(b, v.Policies, 20)
		return time.Since(start)
	}
	// A request with no policy answers once the engine has initialised.
	require.NoError(b, policy.WriteEngineRequest(stdin, nil, []byte(`{"format_version":"1.2"}`), time.Minute))
	_, err = policyprotocol.ReadResponse(out)
	require.NoError(b, err)
	atStart := testenv.ProcStatusKiB(b, cmd.Process.Pid, "VmRSS")
	first := evaluate()
	second := evaluate()
	for b.Loop() {
	}
	mib := func(kib int) float64 { return float64(kib) / 1024 }
	b.ReportMetric(mib(atStart), "engine-start-MiB")
	b.ReportMetric(mib(testenv.ProcStatusKiB(b, cmd.Process.Pid, "VmRSS")), "engine-after-20-policies-MiB")
	b.ReportMetric(mib(testenv.ProcStatusKiB(b, cmd.Process.Pid, "VmHWM")), "engine-peak-MiB")
	b.ReportMetric(first.Seconds()*1000, "first-evaluation-ms")
	b.ReportMetric(second.Seconds()*1000, "cached-evaluation-ms")
}
