package realnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// magosNamespace is where the tests install the chart.
const magosNamespace = "magos-system"

// controllerNames are the chart's five controllers.
var controllerNames = []string{"workspace", "project", "rollout", "variableset", "workspaceset"}

var (
	installOnce sync.Once
	installErr  error
)

// requireMagos skips or fails t without a node, and installs Magos on the
// node with the project's helm the first time a test needs it.
func requireMagos(t testing.TB) {
	t.Helper()
	requireNode(t)
	installOnce.Do(func() { installErr = installMagos() })
	if installErr != nil {
		t.Fatalf("installing Magos on the node: %v", installErr)
	}
}

// installMagos installs Flux's and Kyverno's CRDs (what a cluster with Flux
// and Kyverno has), then both charts as docs/installation.md says, with the
// images `make images` built (imported, never pulled).
func installMagos() error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(node.Config, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(root, "tools", "testdata", "crds", "flux"), filepath.Join(root, "tools", "testdata", "crds", "kyverno")},
		ErrorIfPathMissing: true,
	}); err != nil {
		return fmt.Errorf("installing Flux's and Kyverno's CRDs: %w", err)
	}
	began := time.Now()
	if _, err := runHelm(root, "install", "magos-crds", "charts/magos-crds", "--wait"); err != nil {
		return err
	}
	if err := installMagosChart(root); err != nil {
		return err
	}
	fmt.Printf("realnode: Magos installed and its controllers Ready in %s\n", time.Since(began).Round(time.Millisecond))
	return nil
}

// installMagosChart installs the controllers' chart with the tier's
// settings.
func installMagosChart(root string) error {
	_, err := runHelm(root, "install", "magos", "charts/magos", "--namespace", magosNamespace, "--create-namespace",
		"--wait", "--timeout", "5m",
		"--set", "global.image.pullPolicy=Never",
		"--set", "workspace-controller.runner.retryInterval=10s",
		"--set", "workspace-controller.runs.minInterval=10s",
		"--set", "workspace-controller.guards.allowedRunnerImages={ghcr.io/magos-dev/*:*,magos.test/*:*}",
		"--set", "workspace-controller.guards.allowedTolerationKeys={"+runnerPoolTaint.Key+"}",
		"--set", "global.artifactHosts={"+sourceControllerHost+"}")
	if err != nil {
		return errors.Join(err, describePods(magosNamespace))
	}
	return nil
}

// runHelm runs bin/helm in the node's network namespace against its
// apiserver, with helm's own files in a temporary directory.
func runHelm(root string, args ...string) ([]byte, error) {
	home, err := os.MkdirTemp("", "magos-realnode-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	cmd := node.Command(filepath.Join(root, "bin", "helm"), append(args, "--kubeconfig", node.Kubeconfig)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("helm %s: %w: %s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out, nil
}

// TestControllersRunOnTheNode: the chart's five controllers run as Pods from
// their images under the runtime's enforcement of their security context,
// become Ready through their probes and each holds its leader Lease.
func TestControllersRunOnTheNode(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	for _, name := range controllerNames {
		deploy := "magos-" + name + "-controller"
		var d appsv1.Deployment
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: magosNamespace, Name: deploy}, &d))
		assert.EqualValues(t, 1, d.Status.ReadyReplicas, "%s has a Ready replica", deploy)

		var lease coordinationv1.Lease
		testenv.WaitFor(t, k8s, client.ObjectKey{Namespace: magosNamespace, Name: deploy}, &lease, time.Minute, 250*time.Millisecond,
			func(l *coordinationv1.Lease) bool {
				return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
			},
			deploy+" holds no leader Lease")
		var pods corev1.PodList
		require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(magosNamespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)))
		require.Len(t, pods.Items, 1, "%s runs one Pod", deploy)
		pod := pods.Items[0]
		assert.True(t, strings.HasPrefix(*lease.Spec.HolderIdentity, pod.Name), "the leader of %s is its Pod %s, not %s", deploy, pod.Name, *lease.Spec.HolderIdentity)
		assert.Equal(t, "ghcr.io/magos-dev/"+name+"-controller:"+mustVersion(t), pod.Spec.Containers[0].Image, "%s runs the image make images built", deploy)
		require.Len(t, pod.Status.ContainerStatuses, 1)
		assertHardened(t, pod.Status.ContainerStatuses[0].ContainerID, deploy)
	}

	// The pre-flight check sees the same: every CRD served, every
	// controller available and leading.
	out := magosCLI(t, "check", "--install-namespace", magosNamespace)
	for _, name := range controllerNames {
		assert.Regexp(t, `(?m)^ok\s+`+name+`-controller\s+Deployment magos-`+name+`-controller: 1/1 available; leader magos-`+name+`-controller-`, out)
	}
	assert.NotRegexp(t, `(?m)^(fail|warn)\s`, out)
}

// assertHardened checks what the runtime enforces for a running or finished
// container: user 65532, a read-only root filesystem, no new privileges, no
// capabilities.
func assertHardened(t *testing.T, containerID, what string) {
	t.Helper()
	spec, err := node.ContainerSpec(context.Background(), containerID)
	require.NoError(t, err, "reading the runtime spec of %s", what)
	assert.EqualValues(t, 65532, spec.UID, "%s runs as 65532", what)
	assert.EqualValues(t, 65532, spec.GID, "%s runs in group 65532", what)
	assert.True(t, spec.ReadonlyRoot, "%s has a read-only root filesystem", what)
	assert.True(t, spec.NoNewPrivileges, "%s cannot gain privileges", what)
	assert.Empty(t, spec.Capabilities, "%s has no capabilities", what)
}

func mustVersion(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	v, err := magosVersion(root)
	require.NoError(t, err)
	return v
}

// waitWorkspace polls a Workspace until ok holds.
func waitWorkspace(t testing.TB, ns, name string, timeout time.Duration, what string, ok func(*magosv1.Workspace) bool) *magosv1.Workspace {
	t.Helper()
	return testenv.WaitFor(t, k8s, client.ObjectKey{Namespace: ns, Name: name}, &magosv1.Workspace{}, timeout, 250*time.Millisecond,
		ok, "Workspace "+name+": "+what)
}

// applied is a wait condition: the Workspace applied rev and is Ready.
func applied(rev string) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.Revision == rev &&
			ws.Status.Phase == magosv1.PhaseIdle && ws.Status.ObservedGeneration == ws.Generation
	}
}

// TestWorkspaceAppliesOnTheNode: a Workspace from source-controller's
// artifact is planned and applied by runner Jobs that the real
// job-controller runs, with the engine copied from the engine image by the init container, the
// hardened security context enforced by the runtime, and state, plan and
// outputs in Secrets. A secret input never reaches a container log.
// Deleting the Workspace lets the real garbage collector remove what it
// owned; the state Secret, which has no owner, stays.
func TestWorkspaceAppliesOnTheNode(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns := newNamespace(t)
	src := newGitSource(t, ns)
	sentinel := fmt.Sprintf("sentinel-%d", time.Now().UnixNano())
	require.NoError(t, k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
		StringData: map[string]string{"word": sentinel},
	}))
	rev := src.Publish(ctx, "infra", "../testdata/hello")

	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Outputs:   &magosv1.OutputsSpec{SecretName: "hello-outputs"},
			Vars: []magosv1.Variable{{Name: "secret_word", ValueFrom: &magosv1.VariableSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "word"},
			}}},
		},
	}
	created := time.Now()
	require.NoError(t, k8s.Create(ctx, ws))
	ws = waitWorkspace(t, ns, "hello", 5*time.Minute, "applies on the node", applied(rev))
	t.Logf("realnode: Workspace applied %s after creation", time.Since(created).Round(time.Millisecond))

	var outputs corev1.Secret
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-outputs"}, &outputs))
	assert.Equal(t, "hello", string(outputs.Data["message"]), "the outputs Secret holds the applied output")
	var state corev1.Secret
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: magosv1.StateSecretName("hello")}, &state))
	assert.NotEmpty(t, state.Data, "the runner wrote the state Secret")

	// The run (nothing decides on its plan: one Pod plans and applies) ran
	// in hardened containers with the engine from the engine image's init
	// container.
	var pods corev1.PodList
	require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(ns)))
	runs := 0
	for _, p := range pods.Items {
		if _, ok := p.Labels["batch.kubernetes.io/job-name"]; !ok {
			continue
		}
		runs++
		require.Equal(t, corev1.PodSucceeded, p.Status.Phase, "run Pod %s", p.Name)
		require.Len(t, p.Status.InitContainerStatuses, 1, "run Pod %s has the engine init container", p.Name)
		engine := p.Status.InitContainerStatuses[0]
		assert.Equal(t, magosv1.EngineInitContainer, engine.Name)
		assert.Equal(t, "ghcr.io/magos-dev/magos-engine-opentofu:1.10.6", engine.Image)
		require.NotNil(t, engine.State.Terminated)
		assert.Zero(t, engine.State.Terminated.ExitCode, "the engine was copied into the Pod")
		assertHardened(t, engine.ContainerID, p.Name+"/"+engine.Name)
		require.Len(t, p.Status.ContainerStatuses, 1)
		assertHardened(t, p.Status.ContainerStatuses[0].ContainerID, p.Name+"/runner")
	}
	assert.Equal(t, 1, runs, "one Pod planned and applied")

	// No container log of the node holds the secret: not the runners', not
	// the controllers'.
	logs := readLogs(t, node.PodLogsDir())
	require.Contains(t, logs, "terraform_data.greeting", "the runner Pods' logs were read")
	assert.NotContains(t, logs, sentinel, "the secret input leaked into a container log")

	// kubectl magos logs streams the runner's output from the kubelet: the
	// newest run and, by history index, the same run; masked.
	runLogs := magosCLI(t, "logs", "hello", "-n", ns)
	assert.Contains(t, runLogs, "terraform_data.greeting", "the run's output, read through the kubelet")
	assert.Contains(t, runLogs, "Apply complete", "the plan and its apply in one run")
	byIndex := magosCLI(t, "logs", "hello", "-n", ns, "--run", "0")
	assert.Contains(t, byIndex, "terraform_data.greeting", "--run 0 is the newest run")
	assert.NotContains(t, runLogs+byIndex, sentinel, "the secret input is masked in the runner output")

	// Deleting the Workspace: the garbage collector removes what it owned.
	require.NoError(t, k8s.Delete(ctx, ws))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(ws), &magosv1.Workspace{}))
	}, time.Minute, 250*time.Millisecond, "the Workspace was not deleted")
	deleted := time.Now()
	leftovers := func() []string {
		var left []string
		// Jobs and their Pods: the Workspace was the namespace's only one.
		lists := map[string]client.ObjectList{
			"Job": &batchv1.JobList{}, "Pod": &corev1.PodList{}, "Secret": &corev1.SecretList{}, "Lease": &coordinationv1.LeaseList{},
			"ServiceAccount": &corev1.ServiceAccountList{}, "Role": &rbacv1.RoleList{}, "RoleBinding": &rbacv1.RoleBindingList{},
		}
		for kind, list := range lists {
			require.NoError(t, k8s.List(ctx, list, client.InNamespace(ns)))
			objs, err := meta.ExtractList(list)
			require.NoError(t, err)
			for _, o := range objs {
				obj := o.(client.Object)
				if kind == "Job" || kind == "Pod" || ownedBy(obj, ws.UID) {
					left = append(left, kind+"/"+obj.GetName())
				}
			}
		}
		return left
	}
	require.Eventually(t, func() bool { return len(leftovers()) == 0 }, 2*time.Minute, 500*time.Millisecond,
		"the garbage collector left objects the Workspace owned: %v", leftovers())
	t.Logf("realnode: garbage collector removed the Workspace's objects %s after it was deleted", time.Since(deleted).Round(time.Millisecond))
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: magosv1.StateSecretName("hello")}, &state),
		"the state Secret outlives its Workspace")
}

// magosCLI runs kubectl-magos in the node's network namespace against its
// apiserver, and returns its output.
func magosCLI(t *testing.T, args ...string) string {
	t.Helper()
	cliPath := testenv.CLI.Build(t)
	cmd := node.Command(cliPath, append(args, "--kubeconfig", node.Kubeconfig)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "kubectl magos %s: %s%s", strings.Join(args, " "), out, stderr.String())
	return string(out)
}

// ownedBy says whether uid is among obj's owners.
func ownedBy(obj client.Object, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// readLogs concatenates every file under dir.
func readLogs(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b.Write(data)
		return nil
	}))
	return b.String()
}

// TestRunnerPodDeletedMidApplyRecovers: deleting the runner Pod mid-apply
// (what an eviction or a drained node does) leaves a Workspace that says
// what happened and reaches the applied revision again: either the runner
// saved the state and released the lock on SIGTERM, and the failed run is
// retried; or the lock was left held, the Workspace stalls on it and a
// user's unlock recovers it.
func TestRunnerPodDeletedMidApplyRecovers(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns, rev, pod := slowApply(t, "slow")
	job := pod.Labels["batch.kubernetes.io/job-name"]
	require.NoError(t, k8s.Delete(ctx, &pod))
	t.Logf("deleted runner Pod %s mid-apply", pod.Name)

	ws := waitWorkspace(t, ns, "slow", 3*time.Minute, "reports the interrupted apply", func(ws *magosv1.Workspace) bool {
		return ws.Status.CurrentRun == nil && ws.Status.Phase == magosv1.PhaseFailed
	})
	ready := readyCondition(ws)
	t.Logf("after the kill: phase %s, reason %s: %s", ws.Status.Phase, ready.Reason, ready.Message)
	require.NotEmpty(t, ws.Status.History)
	assert.Equal(t, job, ws.Status.History[0].Job, "the killed run is in the history")
	assert.NotEqual(t, magosv1.ResultSucceeded, ws.Status.History[0].Result, "the killed run did not succeed")
	// Either the runner released the lock on SIGTERM and the failed run is
	// retried after the retry interval (10 s in this install), or the lock
	// stayed held and survives unlocks it as a user would.
	survives(t, ns, "slow", rev)
}

// readyCondition is the Workspace's Ready condition, or an empty one.
func readyCondition(ws *magosv1.Workspace) metav1.Condition {
	for _, c := range ws.Status.Conditions {
		if c.Type == magosv1.ReadyCondition {
			return c
		}
	}
	return metav1.Condition{}
}

// magosContainers reads a metric of the kubelet's cAdvisor (through the
// apiserver's node proxy) for the containers in Magos's namespace, by Pod.
func magosContainers(t testing.TB, metric string) map[string]float64 {
	t.Helper()
	cs, err := kubernetes.NewForConfig(node.Config)
	require.NoError(t, err)
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", realnode.NodeName, "proxy", "metrics", "cadvisor").DoRaw(context.Background())
	require.NoError(t, err, "reading the kubelet's cAdvisor metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	require.NoError(t, err)
	family := families[metric]
	require.NotNil(t, family, "the kubelet reports %s", metric)
	byPod := map[string]float64{}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] == magosNamespace && labels["container"] != "" && labels["container"] != "POD" {
			v := m.GetGauge().GetValue()
			if c := m.GetCounter(); c != nil {
				v = c.GetValue()
			}
			byPod[labels["pod"]] += v
		}
	}
	return byPod
}

// TestControllerPeakMemory reports each controller's peak memory as the
// kubelet measures it (cAdvisor's container_memory_max_usage_bytes, through
// the apiserver's node proxy), after the tests above ran their Workspaces:
// a figure for docs/installation.md's sizing, checked only against the
// chart's memory limit, and logs each controller's process RSS (the policy
// engine's, if a policy started it).
func TestControllerPeakMemory(t *testing.T) {
	requireMagos(t)
	peaks := magosContainers(t, "container_memory_max_usage_bytes")
	for _, name := range controllerNames {
		deploy := "magos-" + name + "-controller"
		found := false
		for pod, peak := range peaks {
			if strings.HasPrefix(pod, deploy+"-") {
				found = true
				t.Logf("realnode: %s peak memory %.1f MiB", deploy, peak/(1<<20))
				assert.Less(t, peak, float64(512<<20), "%s stays under the chart's memory limit", deploy)
			}
		}
		assert.True(t, found, "the kubelet reports %s's memory", deploy)
		if rss, n, err := node.ProcessRSS(name + "-controller"); err == nil && n > 0 {
			t.Logf("realnode: %s process RSS %.1f MiB", deploy, float64(rss)/(1<<20))
		}
	}
	if rss, n, err := node.ProcessRSS("policy-engine"); err == nil {
		t.Logf("realnode: %d policy-engine processes, RSS %.1f MiB", n, float64(rss)/(1<<20))
	}
}
