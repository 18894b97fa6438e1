package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/tools/harness/executor"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// controllerNames are the five controller binaries, by directory.
var controllerNames = []string{"workspace", "project", "rollout", "variableset", "workspaceset"}

// buildControllers compiles the controller binaries, and the policy engine
// the workspace-controller finds next to itself, into a temp dir, without
// cgo as the images are (a policy engine with cgo cannot sandbox itself,
// and the workspace-controller refuses it).
func buildControllers(t testing.TB) string {
	t.Helper()
	env.Require(t)
	out := t.TempDir()
	args := []string{"build", "-ldflags", "-X github.com/magos-dev/magos/controllers/internal/setup.Version=" + testVersion, "-o", out + string(filepath.Separator)}
	for _, n := range controllerNames {
		args = append(args, "./"+n)
	}
	args = append(args, "./"+config.PolicyEngineBinary)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(env.Root, "controllers")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", b)
	return out
}

// testVersion is the version buildControllers stamps on the binaries, as
// `make` stamps the release's.
const testVersion = "v0.0.0-test"

// TestControllerBinariesPrintTheirVersion: each controller says which
// version it is with --version, and exits.
func TestControllerBinariesPrintTheirVersion(t *testing.T) {
	binDir := buildControllers(t)
	for _, name := range controllerNames {
		out, err := exec.Command(filepath.Join(binDir, name), "--version").CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, name+"-controller "+testVersion+"\n", string(out))
	}
}

// handedOut are the ports freeAddr returned, and next the port it tries
// next.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
	next  int
}{ports: map[int]bool{}}

// Ports freeAddr hands out lie below the kernel's ephemeral range (32768
// and up by default), from which every outgoing connection and every
// listener on port 0 takes its port: a port from there, found free and
// released, may be taken by any process before the binary binds it. The
// start within the range differs per test process, as packages' tests run
// at once.
const (
	freePortsFrom = 20000
	freePortsTo   = 32000
)

// freeAddr returns a loopback address with a port that was free just now,
// that no other caller in this process got, and that the kernel gives to
// no connection of its own accord.
func freeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.next == 0 {
		handedOut.next = freePortsFrom + (os.Getpid()*131)%(freePortsTo-freePortsFrom)
	}
	for range freePortsTo - freePortsFrom {
		port := handedOut.next
		handedOut.next++
		if handedOut.next == freePortsTo {
			handedOut.next = freePortsFrom
		}
		if handedOut.ports[port] {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		require.NoError(t, l.Close())
		handedOut.ports[port] = true
		return addr
	}
	t.Fatalf("no free port in %d-%d", freePortsFrom, freePortsTo)
	return ""
}

type controllerProcess struct {
	name, metricsAddr, probeAddr string
	cmd                          *exec.Cmd
	// logs holds the output, unless it goes elsewhere (startControllerTo).
	logs *testenv.LogBuffer
}

// startController runs a controller binary with kubeconfig, its leader
// election Lease in leaseNamespace, and extra flags.
func startController(t testing.TB, binDir, name, kubeconfig, leaseNamespace string, extra ...string) *controllerProcess {
	t.Helper()
	logs := &testenv.LogBuffer{}
	p := startControllerTo(t, logs, binDir, name, kubeconfig, leaseNamespace, extra...)
	p.logs = logs
	return p
}

// startControllerTo is startController writing the output to out.
func startControllerTo(t testing.TB, out io.Writer, binDir, name, kubeconfig, leaseNamespace string, extra ...string) *controllerProcess {
	t.Helper()
	return startControllerWithEnv(t, out, nil, binDir, name, kubeconfig, leaseNamespace, extra...)
}

// artifactReaders are the controllers that download Flux artifacts
// (--artifact-hosts).
var artifactReaders = []string{"workspace", "workspaceset"}

// startControllerWithEnv is startControllerTo with env added to the
// process's environment.
func startControllerWithEnv(t testing.TB, out io.Writer, env []string, binDir, name, kubeconfig, leaseNamespace string, extra ...string) *controllerProcess {
	t.Helper()
	p := &controllerProcess{name: name, metricsAddr: freeAddr(t), probeAddr: freeAddr(t)}
	args := []string{
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", p.metricsAddr,
		"--health-probe-bind-address", p.probeAddr,
		"--leader-elect=true",
		"--leader-election-namespace", leaseNamespace,
	}
	if slices.Contains(artifactReaders, name) {
		// The tests' sources serve their artifacts on loopback, not at
		// source-controller's Service in flux-system.
		args = append(args, "--artifact-hosts=127.0.0.1")
	}
	p.cmd = exec.Command(filepath.Join(binDir, name), append(args, extra...)...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Env = append(os.Environ(), env...)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		if t.Failed() && p.logs != nil {
			t.Logf("%s-controller output:\n%s", name, p.logs.String())
		}
	})
	return p
}

// startChartControllers starts the five binaries, each impersonating the
// ServiceAccount the chart installed as release in ns gives it, with its
// leader election Lease in ns and extra flags.
func startChartControllers(t *testing.T, binDir, release, ns string, extra ...string) map[string]*controllerProcess {
	t.Helper()
	procs := map[string]*controllerProcess{}
	for _, name := range controllerNames {
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		identity := executor.ServiceAccountIdentity(ns, release+"-"+name+"-controller")
		require.NoError(t, executor.WriteKubeconfig(kubeconfig, env.Config, identity, ns))
		procs[name] = startController(t, binDir, name, kubeconfig, ns, extra...)
	}
	return procs
}

// waitReady waits until the controller's readiness probe answers OK.
func (p *controllerProcess) waitReady(t testing.TB) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, _ := httpGet("http://" + p.probeAddr + "/readyz")
		return code == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "%s-controller never became ready", p.name)
}

func httpGet(url string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestControllerBinariesStart runs the five binaries as processes, each
// with the identity and RBAC the Helm chart gives it (its ServiceAccount,
// impersonated), so the chart's RBAC is proven sufficient end to end.
func TestControllerBinariesStart(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	binDir := buildControllers(t)
	s := newStackWith(t, stackOptions{NoControllers: true})
	ns := s.ns
	release := "b" + rand.String(5)
	installChart(t, renderChart(t, release, ns), "Deployment", "Service")

	procs := startChartControllers(t, binDir, release, ns)

	for _, name := range controllerNames {
		p := procs[name]
		t.Run(name, func(t *testing.T) {
			p.waitReady(t)

			require.Eventually(t, func() bool {
				var lease coordinationv1.Lease
				err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "magos-" + name + "-controller"}, &lease)
				return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
			}, 60*time.Second, 200*time.Millisecond, "%s-controller never took its own leader election lease", name)

			require.Eventually(t, func() bool {
				code, body := httpGet("http://" + p.metricsAddr + "/metrics")
				return code == http.StatusOK &&
					bytes.Contains([]byte(body), []byte(fmt.Sprintf(`magos_build_info{controller=%q`, name))) &&
					bytes.Contains([]byte(body), []byte("controller_runtime_reconcile_total"))
			}, 30*time.Second, 200*time.Millisecond, "%s-controller metrics lack magos_build_info or controller-runtime metrics", name)
		})
	}

	t.Run("each controller observes its kind", func(t *testing.T) {
		objs := []interface {
			client.Object
			conditions.Setter
			GetObservedGeneration() int64
		}{
			&magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: ns},
				Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}}},
			&magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "proj", Namespace: ns}},
			&magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "vs", Namespace: ns}},
			&magosv1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "ro", Namespace: ns},
				Spec: magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "proj"},
					Stages: []magosv1.Stage{{Name: "dev"}}}},
		}
		// The Workspace has no source yet, so the workspace-controller waits
		// for it; an empty Project and VariableSet resolve at once; the
		// Rollout waits for Workspaces in its Project.
		want := map[string]metav1.Condition{
			"Workspace":   {Status: metav1.ConditionFalse, Reason: magosv1.ReasonSourceNotReady},
			"Project":     {Status: metav1.ConditionTrue, Reason: magosv1.ReconciliationSucceededReason},
			"VariableSet": {Status: metav1.ConditionTrue, Reason: magosv1.ReconciliationSucceededReason},
			"Rollout":     {Status: metav1.ConditionFalse, Reason: magosv1.ReasonNoWorkspaces},
		}
		for _, obj := range objs {
			require.NoError(t, env.Client.Create(ctx, obj))
			kind := reflect.TypeOf(obj).Elem().Name()
			w := want[kind]
			assert.Eventually(t, func() bool {
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					return false
				}
				ready := conditions.Get(obj, magosv1.ReadyCondition)
				return obj.GetObservedGeneration() == obj.GetGeneration() && ready != nil &&
					ready.Status == w.Status && ready.Reason == w.Reason
			}, 30*time.Second, 200*time.Millisecond, "%s was not reconciled (want Ready=%s/%s): %+v", kind, w.Status, w.Reason, obj.GetConditions())
		}
	})

	t.Run("with the chart's RBAC a Workspace of a Project, with a VariableSet and a Rollout, applies", func(t *testing.T) {
		rev := s.gitRepository("hello-src", copyConfig(t, "hello"))
		require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}}))
		require.NoError(t, env.Client.Create(ctx, &magosv1.VariableSet{
			ObjectMeta: metav1.ObjectMeta{Name: "greetings", Namespace: ns},
			Spec:       magosv1.VariableSetSpec{Variables: []magosv1.Variable{{Name: "greeting", Value: ptr.To("hello from the chart")}}},
		}))
		require.NoError(t, env.Client.Create(ctx, &magosv1.Rollout{
			ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
			Spec: magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "app"},
				Stages: []magosv1.Stage{{Name: "dev", Selector: envSelector("dev")}}},
		}))
		s.newWorkspace("hello", "hello-src", func(ws *magosv1.Workspace) {
			ws.Labels = map[string]string{"env": "dev"}
			ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "app"}
			ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "greetings"}}
		})
		s.waitWorkspace("hello", 3*time.Minute, "applies", appliedRevision(rev))
		var out corev1.Secret
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-outputs"}, &out))
		assert.Equal(t, "hello from the chart", string(out.Data["message"]))
		ro := &magosv1.Rollout{}
		require.Eventually(t, func() bool {
			return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "release"}, ro) == nil && rolledOut(rev)(ro)
		}, time.Minute, 250*time.Millisecond, "the Rollout reports the revision rolled out")
		for name, p := range procs {
			assert.NotContains(t, p.logs.String(), "forbidden", "%s-controller was refused something its chart RBAC should grant", name)
		}
	})

	t.Run("controllers stop cleanly and release their leases", func(t *testing.T) {
		for _, name := range controllerNames {
			p := procs[name]
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			done := make(chan error, 1)
			go func() { done <- p.cmd.Wait() }()
			select {
			case err := <-done:
				assert.NoError(t, err, "%s-controller exited with an error", name)
			case <-time.After(30 * time.Second):
				t.Fatalf("%s-controller did not stop within 30s of SIGTERM", name)
			}
		}
	})
}
