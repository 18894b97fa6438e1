package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var (
	enforcerOnce sync.Once
	enforcerErr  error
	// enforcer is kube-router's process, stopped with the node.
	enforcer *exec.Cmd
)

// requireNetworkPolicies starts a NetworkPolicy enforcer on the node the
// first time a test needs NetworkPolicies enforced: kube-router's firewall
// (its router and service proxy off), built by `make node` from its Go
// module, run as kube-proxy is, a process in the node's network namespace
// programming its iptables and ipsets from the apiserver's Pods,
// Namespaces and NetworkPolicies.
func requireNetworkPolicies(t *testing.T) {
	t.Helper()
	requireNode(t)
	enforcerOnce.Do(func() { enforcerErr = startEnforcer() })
	if enforcerErr != nil {
		t.Fatalf("starting kube-router on the node: %v", enforcerErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(enforcerLog)
			t.Logf("kube-router:\n%s", b)
		}
	})
}

// enforcerLog is where kube-router's output goes.
var enforcerLog = filepath.Join(os.TempDir(), "magos-realnode-kube-router.log")

func startEnforcer() error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	version, err := testenv.MakeVariable(root, "NETPOL_VERSION")
	if err != nil {
		return err
	}
	out, err := os.Create(enforcerLog)
	if err != nil {
		return err
	}
	enforcer = node.Command(filepath.Join(root, "bin", "netpol", "kube-router-"+version),
		"--kubeconfig="+node.Kubeconfig, "--hostname-override="+realnode.NodeName,
		"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
		"--enable-cni=false", "--health-port=0", "--metrics-port=0", "--v=1")
	enforcer.Stdout, enforcer.Stderr = out, out
	began := time.Now()
	if err := enforcer.Start(); err != nil {
		return err
	}
	// kube-router's firewall chain is in place once it synced.
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := node.Command("iptables", "-S", "KUBE-ROUTER-FORWARD").CombinedOutput()
		if strings.Contains(string(b), "KUBE-ROUTER-FORWARD") {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(enforcerLog)
			return fmt.Errorf("kube-router set up no firewall chain in a minute: %s", log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("realnode: kube-router v%s enforcing NetworkPolicies %s after it started\n", version, time.Since(began).Round(time.Millisecond))
	return nil
}

// stopEnforcer stops kube-router, if a test started it.
func stopEnforcer() {
	if enforcer != nil && enforcer.Process != nil {
		_ = enforcer.Process.Kill()
		_ = enforcer.Wait()
	}
}

// TestNetworkPolicyKeepsRunnersFromSourceController: with a NetworkPolicy
// enforcer on the node, the chart's default policy already keeps a Pod
// carrying the runner labels from the controller's metrics, which another
// Pod still reads. With Flux's own default policies, the chart's
// fluxSourceAccess and the workspace-controller's egress policy, such a
// Pod in team-a no longer reaches source-controller either (before the
// policies it downloaded team-b's artifact), while team-a's Workspace
// still applies: its runs fetch through the workspace-controller's
// artifact proxy, which the policies admit, and the controller reaches the
// apiserver and source-controller.
func TestNetworkPolicyKeepsRunnersFromSourceController(t *testing.T) {
	ctx := context.Background()
	requireSourceController(t)
	requireNetworkPolicies(t)
	teamA, teamB := newNamespace(t), newNamespace(t)
	content := t.TempDir()
	writeRelease(t, content, "team")
	newGitSource(t, teamB).Publish(ctx, "secret-infra", content)
	theirs, err := fluxsource.Fetch(ctx, k8s, &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: teamB},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "secret-infra"}}})
	require.NoError(t, err)

	before := probeURL(t, teamA, "before", theirs.URL)
	require.False(t, strings.HasPrefix(before, "Get "), "without the policy a runner-labelled Pod downloads team-b's artifact: %s", before)

	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	var pods corev1.PodList
	require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(magosNamespace), client.MatchingLabels{"app.kubernetes.io/name": "workspace-controller"}))
	require.NotEmpty(t, pods.Items)
	metrics := "http://" + pods.Items[0].Status.PodIP + ":8080/metrics"
	scrape := probeURL(t, teamA, "metrics-default", metrics)
	assert.True(t, strings.HasPrefix(scrape, "Get "), "the chart's default policy keeps a runner Pod from the controller's metrics: %s", scrape)
	// The enforcer admits a new Pod once it has seen its address: a
	// scraper is long-lived, a probe asks at once, so it asks again.
	other := probeURLAs(t, teamA, "metrics-other", metrics, map[string]string{"app": "monitoring-agent"}, 30*time.Second)
	assert.False(t, strings.HasPrefix(other, "Get "), "another Pod reads the metrics: %s", other)

	// Flux's own default policies, as `flux install` applies them: its
	// namespace admits only itself (and scraping, and webhooks)...
	applyFluxNetworkPolicies(t, root)
	// ...and the chart's add to them: source-controller admits the
	// workspace-controller only; the workspace-controller admits its
	// metrics port from the monitoring namespace only, the artifact proxy
	// from runner Pods, and reaches the apiserver and source-controller's
	// artifact port.
	_, err = runHelm(root, "upgrade", "magos", "charts/magos", "--namespace", magosNamespace, "--reuse-values", "--wait",
		"--set", "workspace-controller.fluxSourceAccess.enabled=true",
		"--set", "workspace-controller.fluxSourceAccess.namespace="+fluxNamespace,
		"--set", "workspace-controller.networkPolicy.egress.enabled=true",
		"--set", "workspace-controller.networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring",
		"--set", "workspace-controller.networkPolicy.extraEgress[0].ports[0].port=9090")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = runHelm(root, "upgrade", "magos", "charts/magos", "--namespace", magosNamespace, "--reuse-values", "--wait",
			"--set", "workspace-controller.fluxSourceAccess.enabled=false", "--set", "workspace-controller.networkPolicy.egress.enabled=false",
			"--set", "workspace-controller.networkPolicy.metricsFrom=null")
	})

	after := probeURL(t, teamA, "after", theirs.URL)
	t.Logf("realnode: a runner-labelled Pod fetching team-b's artifact from source-controller, under the policy: %s", after)
	assert.True(t, strings.HasPrefix(after, "Get "), "the policy keeps a runner-labelled Pod from source-controller: %s", after)
	scrape = probeURL(t, teamA, "metrics-after", metrics)
	assert.True(t, strings.HasPrefix(scrape, "Get "), "the policy keeps a tenant's Pod from the controller's metrics: %s", scrape)

	// The pre-flight check, from a runner-labelled Pod of team-a: under the
	// policies a runner still reaches the artifact proxy.
	check := magosCLI(t, "check", "--images", "-n", teamA)
	assert.Regexp(t, `ok\s+artifact path\s+a runner in `+teamA+` reaches the artifact proxy`, check)

	revA := newGitSource(t, teamA).Publish(ctx, "infra", content)
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: teamA},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Outputs:   &magosv1.OutputsSpec{SecretName: "release-outputs"},
		},
	}))
	waitWorkspace(t, teamA, "release", 5*time.Minute, "applies through the artifact proxy under the policy", applied(revA))
}

// applyFluxNetworkPolicies applies the NetworkPolicies flux2 ships for its
// namespace (manifests/policies of the module the flux CLI is built from:
// allow-egress, allow-scraping, allow-webhooks) to the Flux namespace, and
// deletes them when the test ends.
func applyFluxNetworkPolicies(t *testing.T, root string) {
	t.Helper()
	version, err := testenv.MakeVariable(root, "FLUX_CLI_VERSION")
	require.NoError(t, err)
	module, err := moduleDir("github.com/fluxcd/flux2/v2@v" + version)
	require.NoError(t, err)
	kubectl := filepath.Join(root, "bin", "k8s", "kubectl")
	policies := filepath.Join(module, "manifests", "policies")
	out, err := node.Command(kubectl, "apply", "--kubeconfig", node.Kubeconfig, "-n", fluxNamespace, "-k", policies).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("realnode: Flux's own NetworkPolicies applied: %s", strings.TrimSpace(string(out)))
	t.Cleanup(func() {
		out, err := node.Command(kubectl, "delete", "--kubeconfig", node.Kubeconfig, "-n", fluxNamespace, "-k", policies).CombinedOutput()
		if err != nil {
			t.Logf("deleting Flux's NetworkPolicies: %v: %s", err, out)
		}
	})
}

// probeURL runs the probe image in ns as a Pod labelled like a runner and
// returns what it got from url: the start of the body, or the error
// (starting "Get ").
func probeURL(t *testing.T, ns, name, url string) string {
	t.Helper()
	return probeURLAs(t, ns, name, url, map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "release"}, 0)
}

// probeURLAs is probeURL from a Pod with podLabels, trying for up to retry.
func probeURLAs(t *testing.T, ns, name, url string, podLabels map[string]string, retry time.Duration) string {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe-" + name, Namespace: ns, Labels: podLabels},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "probe", Image: probeImage, ImagePullPolicy: corev1.PullNever,
				Env: []corev1.EnvVar{{Name: "PROBE_URL", Value: url}, {Name: "PROBE_URL_RETRY", Value: retry.String()}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
			}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	require.NoError(t, k8s.Create(ctx, pod))
	testenv.WaitFor(t, k8s, client.ObjectKeyFromObject(pod), pod, 2*time.Minute, 200*time.Millisecond, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	}, "the probe did not finish")
	require.Len(t, pod.Status.ContainerStatuses, 1)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term)
	var report probeReport
	require.NoError(t, json.Unmarshal([]byte(term.Message), &report), "termination message %q", term.Message)
	return report.URL
}

// writeRelease writes the release configuration with release.txt v.
func writeRelease(t *testing.T, dir, v string) {
	t.Helper()
	mainTF, err := os.ReadFile("../testdata/release/main.tf")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), mainTF, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release.txt"), []byte(v+"\n"), 0o644))
}
