package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// startedEngine is a client of the real policy-engine binary, closed when
// the test ends.
func startedEngine(t *testing.T) *policy.EngineClient {
	t.Helper()
	c := policy.NewEngineClient(testenv.PolicyEngine.Build(t))
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// planOf is the plan JSON of n created terraform_data resources whose
// input carries tags.
func planOf(n int, tags map[string]string) []byte {
	changes := make([]map[string]any, 0, n)
	for i := range n {
		changes = append(changes, map[string]any{
			"address": fmt.Sprintf("terraform_data.r%d", i), "type": "terraform_data", "name": fmt.Sprintf("r%d", i),
			"change": map[string]any{"actions": []string{"create"}, "before": nil, "after": map[string]any{"input": map[string]any{"tags": tags}}},
		})
	}
	data, err := json.Marshal(map[string]any{"format_version": "1.2", "resource_changes": changes})
	if err != nil {
		panic(err)
	}
	return data
}

// engines are the policy-engine processes this test process started that
// still exist (a zombie included).
func engines(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	require.NoError(t, err)
	if len(tasks) == 0 {
		t.Skip("needs /proc/<pid>/task/<tid>/children")
	}
	var out []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, field := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(field)
			require.NoError(t, err)
			if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(comm)) == "policy-engine" {
				out = append(out, pid)
			}
		}
	}
	return out
}

// statFields are the fields of /proc/<pid>/stat after the command (which
// may hold spaces): state is the 1st, utime the 12th and stime the 13th.
func statFields(t *testing.T, pid int) []string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	return strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
}

// cpuTicks is the CPU time process pid has used, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	fields := statFields(t, pid)
	utime, err := strconv.Atoi(fields[11])
	require.NoError(t, err)
	stime, err := strconv.Atoi(fields[12])
	require.NoError(t, err)
	return utime + stime
}

// TestEngineClientStartsOnFirstPolicy: no engine runs until a plan has a
// policy to pass; then one engine serves every evaluation.
func TestEngineClientStartsOnFirstPolicy(t *testing.T) {
	c := startedEngine(t)
	before := engines(t)
	v := c.Evaluate(context.Background(), "ns", nil, planOf(1, nil))
	assert.True(t, v.Passed, v.Message)
	assert.Equal(t, before, engines(t), "no policy, no engine")

	pass := []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}
	for range 3 {
		v = c.Evaluate(context.Background(), "ns", pass, planOf(2, nil))
		require.True(t, v.Passed, v.Message)
	}
	assert.Len(t, engines(t), len(before)+1, "one engine serves every evaluation")
	require.NoError(t, c.Close())
	assert.Equal(t, before, engines(t), "Close stops the engine and reaps it")
	assert.True(t, c.Evaluate(context.Background(), "ns", pass, planOf(2, nil)).Errored, "a closed client evaluates nothing")
}

// TestEngineClientVerdicts: the engine's verdicts reach the caller as the
// engine gave them.
func TestEngineClientVerdicts(t *testing.T) {
	c := startedEngine(t)
	requireEnv := []policy.Policy{policytest.JSONPolicy(t, "require-env", policytest.SpecRequireEnv)}

	v := c.Evaluate(context.Background(), "ns", requireEnv, planOf(2, map[string]string{"env": "dev"}))
	assert.True(t, v.Passed, v.Message)
	assert.Equal(t, []string{"require-env"}, v.Policies)

	v = c.Evaluate(context.Background(), "ns", requireEnv, planOf(2, map[string]string{"owner": "team-a"}))
	assert.False(t, v.Passed, v.Message)
	assert.False(t, v.Errored, v.Message)
	require.Len(t, v.Violations, 1)
	assert.Equal(t, policyprotocol.Violation{Policy: "require-env", Validation: 1, Message: "every resource needs an env tag", Action: policyprotocol.ActionDeny}, v.Violations[0])

	v = c.Evaluate(context.Background(), "ns", requireEnv, []byte("not json"))
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, "plan JSON cannot be parsed")

	v = c.Evaluate(context.Background(), "ns", []policy.Policy{policytest.JSONPolicy(t, "broken", policytest.SpecBadCEL)}, planOf(1, nil))
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, `policy "broken": does not compile`)
}

// TestEngineClientConcurrently: many reconcilers share one client, each
// getting the verdict it would get alone.
func TestEngineClientConcurrently(t *testing.T) {
	c := startedEngine(t)
	requireEnv := []policy.Policy{policytest.JSONPolicy(t, "require-env", policytest.SpecRequireEnv)}
	tagged, untagged := planOf(3, map[string]string{"env": "dev"}), planOf(3, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 5 {
				if i%2 == 0 {
					v := c.Evaluate(context.Background(), "ns", requireEnv, tagged)
					assert.True(t, v.Passed, v.Message)
				} else {
					v := c.Evaluate(context.Background(), "ns", requireEnv, untagged)
					assert.False(t, v.Passed, v.Message)
					assert.Len(t, v.Violations, 1)
				}
			}
		})
	}
	wg.Wait()
}

// TestEngineClientEngineKilled: an engine killed in the middle of an
// evaluation blocks that plan with an error, never a pass; it is reaped,
// and the next evaluation starts a new engine.
func TestEngineClientEngineKilled(t *testing.T) {
	c := startedEngine(t)
	pass := []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}
	before := engines(t)
	require.True(t, c.Evaluate(context.Background(), "ns", pass, planOf(1, nil)).Passed)
	started := engines(t)
	require.Len(t, started, len(before)+1)
	pid := newest(before, started)

	slow := []policy.Policy{policytest.JSONPolicy(t, "quadratic", policytest.SpecQuadratic)}
	idle := cpuTicks(t, pid)
	verdict := make(chan policyprotocol.Verdict, 1)
	go func() {
		verdict <- c.Evaluate(context.Background(), "ns", slow, planOf(3000, map[string]string{"env": "dev"}))
	}()
	require.Eventually(t, func() bool { return cpuTicks(t, pid) > idle+20 }, 30*time.Second, 10*time.Millisecond,
		"the engine never started evaluating")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	v := <-verdict
	assert.False(t, v.Passed, v.Message)
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, "signal: killed")
	assert.Equal(t, before, engines(t), "the killed engine is reaped")

	require.True(t, c.Evaluate(context.Background(), "ns", pass, planOf(1, nil)).Passed, "the next evaluation starts a new engine")
	again := engines(t)
	require.Len(t, again, len(before)+1)
	assert.NotEqual(t, pid, newest(before, again))
}

// TestEngineClientEngineHangs: an engine that does not answer by the
// deadline and its grace is killed and reaped, and the plan is blocked.
func TestEngineClientEngineHangs(t *testing.T) {
	c := startedEngine(t)
	pass := []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}
	before := engines(t)
	// The engine starts and compiles the policy within the default
	// deadline; only the stopped engine's deadline is short.
	stopEngine(t, c, pass, before)
	c.Timeout = 100 * time.Millisecond

	v := c.Evaluate(context.Background(), "ns", pass, planOf(1, nil))
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, "did not answer within")
	assert.Equal(t, before, engines(t), "the stopped engine is killed and reaped")
	// The next engine starts and loads the policy within the default
	// deadline, not the 100 ms that caught the stopped one.
	c.Timeout = policy.DefaultTimeout
	assert.True(t, c.Evaluate(context.Background(), "ns", pass, planOf(1, nil)).Passed, "a new engine serves the next evaluation")
}

// TestEngineClientMissingBinary: an engine that cannot start blocks the
// plan with an error that names it.
func TestEngineClientMissingBinary(t *testing.T) {
	c := policy.NewEngineClient(filepath.Join(t.TempDir(), "policy-engine"))
	v := c.Evaluate(context.Background(), "ns", []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}, planOf(1, nil))
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, "starting the policy engine")
	require.NoError(t, c.Close())
}

// newest is the one pid of after that is not in before.
func newest(before, after []int) int {
	for _, pid := range after {
		if !slices.Contains(before, pid) {
			return pid
		}
	}
	return 0
}

// TestEngineClientSlotWaitIsBounded: while one evaluation holds the engine
// up to its deadline, another Workspace's evaluation waits for the slot no
// longer than one evaluation may take, and is blocked (then retried)
// rather than queued behind every evaluation that comes.
func TestEngineClientSlotWaitIsBounded(t *testing.T) {
	c := startedEngine(t)
	pass := []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}
	stopEngine(t, c, pass, engines(t))

	c.Timeout = time.Second
	held := make(chan policyprotocol.Verdict, 1)
	go func() { held <- c.Evaluate(context.Background(), "ns", pass, planOf(1, nil)) }()
	// The first evaluation holds the slot until its deadline and the kill
	// grace (6 s); the second gives up after one evaluation's deadline.
	time.Sleep(100 * time.Millisecond)
	v := c.Evaluate(context.Background(), "ns", pass, planOf(1, nil))
	assert.True(t, v.Errored, v.Message)
	assert.Contains(t, v.Message, "the policy engine was busy with other evaluations for 1s")
	first := <-held
	assert.Contains(t, first.Message, "did not answer within", "the held evaluation ended at its own deadline")
}

// stopEngine starts c's engine with an evaluation of pass and stops it
// (SIGSTOP): it neither answers nor exits until SIGCONT. before are the
// engines that ran before it. It returns the engine's pid.
func stopEngine(t *testing.T, c *policy.EngineClient, pass []policy.Policy, before []int) int {
	t.Helper()
	require.True(t, c.Evaluate(context.Background(), "ns", pass, planOf(1, nil)).Passed)
	pid := newest(before, engines(t))
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	// kill returns before a busy machine has stopped the engine, which
	// could still answer the next request.
	require.Eventually(t, func() bool { return statFields(t, pid)[0] == "T" }, 10*time.Second, time.Millisecond, "the engine stops")
	return pid
}

// TestPolicyEngineGoesFirstOnOutOfMemory: the engine shares the
// controller's container and memory limit; it offers itself first to the
// out-of-memory killer, so an evaluation that exhausts the memory ends the
// engine (started again for the next plan), not the controller.
func TestPolicyEngineGoesFirstOnOutOfMemory(t *testing.T) {
	c := startedEngine(t)
	before := engines(t)
	pass := []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}
	require.True(t, c.Evaluate(context.Background(), "ns", pass, planOf(1, nil)).Passed)
	pid := newest(before, engines(t))
	require.NotZero(t, pid)
	score, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid))
	require.NoError(t, err)
	assert.Equal(t, "1000", strings.TrimSpace(string(score)), "the engine goes first")
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	require.NoError(t, err)
	assert.NotEqual(t, "1000", strings.TrimSpace(string(own)), "the controller's own score is left alone")
}

// TestEngineClientNamespacesTakeTurns: evaluations waiting for the engine
// take turns by namespace, so a namespace with many plans waiting holds up
// another namespace's plan for one evaluation, not for all of its own.
func TestEngineClientNamespacesTakeTurns(t *testing.T) {
	c := startedEngine(t)
	c.Timeout = time.Minute
	pass := []policy.Policy{policytest.JSONPolicy(t, "pass", policytest.SpecAlwaysPass)}
	pid := stopEngine(t, c, pass, engines(t))

	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	evaluate := func(name, namespace string) {
		wg.Go(func() {
			v := c.Evaluate(context.Background(), namespace, pass, planOf(1, nil))
			assert.True(t, v.Passed, "%s: %s", name, v.Message)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		})
		// Each waits before the next comes.
		time.Sleep(200 * time.Millisecond)
	}
	evaluate("holder", "team-a") // holds the stopped engine
	for _, name := range []string{"a1", "a2", "a3", "a4"} {
		evaluate(name, "team-a")
	}
	evaluate("b1", "team-b")
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	wg.Wait()

	require.Len(t, order, 6)
	assert.Equal(t, "holder", order[0])
	b := slices.Index(order, "b1")
	assert.Less(t, b, slices.Index(order, "a3"), "team-b's plan is evaluated after one more of team-a's, not after all: %v", order)
}

// TestPolicyEngineSandboxesItself: the engine runs in the controller's
// container, beside its ServiceAccount token. The real binary's sandbox
// check reads a file and dials a listener, sandboxes itself the way the
// engine does before serving, and can do neither after.
func TestPolicyEngineSandboxesItself(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("a ServiceAccount token"), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	out, err := exec.Command(testenv.PolicyEngine.Build(t), "sandbox-check", token, l.Addr().String()).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "read "+token, "the file is readable before")
	assert.Contains(t, string(out), "sandboxed: read: open "+token+": permission denied")
	assert.Contains(t, string(out), "connect: permission denied")
}
