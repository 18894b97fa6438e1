package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// namespacedValues are the helm flags of namespaced RBAC for namespaces.
func namespacedValues(namespaces ...string) []string {
	list := "{" + namespaces[0]
	for _, ns := range namespaces[1:] {
		list += "," + ns
	}
	return []string{"--set", "global.rbac.namespaced=true", "--set", "global.watchNamespaces=" + list + "}"}
}

// managerArgs are the args of the manager container of Deployment name.
func managerArgs(objs []*unstructured.Unstructured, name string) []string {
	containers, _, _ := unstructured.NestedSlice(chartObject(objs, "Deployment", name).Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return args
}

// ruleResources maps "<apiGroup>/<resource>" to the sorted verbs rules grant.
func ruleResources(t *testing.T, rules []any) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range rules {
		rule := r.(map[string]any)
		require.NotContains(t, rule, "resourceNames", "controller rules are not name-restricted")
		for _, g := range rule["apiGroups"].([]any) {
			for _, res := range rule["resources"].([]any) {
				key := g.(string) + "/" + res.(string)
				for _, v := range rule["verbs"].([]any) {
					if !slices.Contains(out[key], v.(string)) {
						out[key] = append(out[key], v.(string))
					}
				}
				slices.Sort(out[key])
			}
		}
	}
	return out
}

func TestHelmChartNamespacedRBAC(t *testing.T) {
	env.Require(t)
	a, b := env.NewNamespace(t), env.NewNamespace(t)
	release := "n" + rand.String(5)
	ns := env.NewNamespace(t)
	objs := renderChart(t, release, ns, namespacedValues(a, b)...)

	for _, c := range controllerNames {
		name := release + "-" + c + "-controller"
		t.Run(c, func(t *testing.T) {
			granted := map[string][]string{}
			clusterRole := chartObject(objs, "ClusterRole", name)
			if clusterRole != nil {
				rules, _, _ := unstructured.NestedSlice(clusterRole.Object, "rules")
				cluster := ruleResources(t, rules)
				for res, verbs := range cluster {
					if res == "authentication.k8s.io/tokenreviews" {
						// The artifact proxy reviews runners' tokens.
						assert.Equal(t, []string{"create"}, verbs)
						continue
					}
					assert.Contains(t, []string{"/namespaces", "policies.kyverno.io/validatingpolicies"}, res,
						"the ClusterRole grants cluster-scoped reads only (and token reviews)")
					assert.Subset(t, []string{"get", "list", "watch"}, verbs)
				}
				granted = cluster
			}
			var perNamespace map[string][]string
			for _, watched := range []string{a, b} {
				var role *unstructured.Unstructured
				for _, o := range objs {
					if o.GetKind() == "Role" && o.GetName() == name && o.GetNamespace() == watched {
						role = o
					}
				}
				require.NotNil(t, role, "Role %s in %s", name, watched)
				rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
				perNamespace = ruleResources(t, rules)
			}
			for res, verbs := range perNamespace {
				granted[res] = verbs
			}
			assert.Equal(t, ruleResources(t, generatedClusterRoleRules(t, c)), granted,
				"the ClusterRole and the Roles together grant exactly the generated rules")

			assert.Contains(t, managerArgs(objs, name), "--watch-namespaces="+a+","+b)
		})
	}
	assert.Nil(t, chartObject(objs, "ClusterRole", release+"-variableset-controller"), "the variableset-controller lists no Secrets cluster-wide")
	assert.Nil(t, chartObject(objs, "ClusterRoleBinding", release+"-project-controller"))

	t.Run("the apiserver accepts every rendered object", func(t *testing.T) {
		installChart(t, objs, "ServiceMonitor")
	})

	t.Run("namespaced RBAC without namespaces fails to render", func(t *testing.T) {
		out := renderChartError(t, release, ns, "--set", "global.rbac.namespaced=true")
		assert.Contains(t, out, "rbac.namespaced needs the namespaces to watch")
	})

	t.Run("the guards reach the workspace-controller's flags", func(t *testing.T) {
		_, appVersion := chartVersions(t, "magos")
		objs := renderChart(t, release, ns,
			"--set", "workspace-controller.guards.requireProject=true",
			"--set", "workspace-controller.guards.requireProjectNamespaceSelector=magos.dev/tenant",
			"--set", "workspace-controller.guards.noCrossNamespaceRefs=false",
			"--set", "workspace-controller.guards.allowedRunnerImages={ghcr.io/magos-dev/magos-runner:*,mirror.example/runner:*}",
			"--set", "workspace-controller.guards.clusterPolicySelector=policy.magos.dev/scope=cluster",
			"--set", "workspace-controller.guards.namespacedPoliciesNamespaceSelector=magos.dev/namespaced-policies=true",
			"--set", "workspace-controller.guards.allowDestroySkipGate=true",
			"--set", "workspace-controller.guards.allowedPriorityClasses={tenant-*}",
			"--set", "workspace-controller.guards.allowedTolerationKeys={pool.example/*,dedicated}",
			"--set", "workspace-controller.guards.allowedNodeLabelKeys={pool.example/*}",
			"--set", "workspace-controller.guards.allowedPodLabelKeys={team}",
			"--set", "workspace-controller.guards.allowedPodAnnotationKeys={cost.example/*}")
		args := managerArgs(objs, release+"-workspace-controller")
		for _, want := range []string{
			"--require-project=true",
			"--require-project-namespace-selector=magos.dev/tenant",
			"--no-cross-namespace-refs=false",
			"--allowed-runner-images=ghcr.io/magos-dev/magos-runner:" + appVersion + ",ghcr.io/magos-dev/magos-runner:*,mirror.example/runner:*",
			"--cluster-policy-selector=policy.magos.dev/scope=cluster",
			"--namespaced-policies-namespace-selector=magos.dev/namespaced-policies=true",
			"--allow-destroy-skip-gate=true",
			"--allowed-runner-priority-classes=tenant-*",
			"--allowed-runner-toleration-keys=pool.example/*,dedicated",
			"--allowed-runner-node-label-keys=pool.example/*",
			"--allowed-runner-pod-label-keys=team",
			"--allowed-runner-pod-annotation-keys=cost.example/*",
		} {
			assert.Contains(t, args, want)
		}
		args = managerArgs(renderChart(t, release, ns), release+"-workspace-controller")
		assert.Contains(t, args, "--no-cross-namespace-refs=true", "cross-namespace sources are refused by default")
		assert.Contains(t, args, "--allow-destroy-skip-gate=false", "destroys go through the gate by default")
		assert.NotContains(t, args, "--watch-namespaces=", "all namespaces are watched by default")
		assert.Contains(t, args, "--allowed-runner-images=ghcr.io/magos-dev/magos-runner:"+appVersion+
			",ghcr.io/magos-dev/magos-engine-*:*",
			"only this release's runner and Magos's engine images run by default")
		for _, a := range args {
			if strings.HasPrefix(a, "--allowed-runner-images=") {
				continue
			}
			assert.NotContains(t, a, "--allowed-runner-", "no runner placement or Pod metadata is allowed by default")
		}
	})
}

// TestControllerBinariesNamespacedRBAC runs the five binaries with the RBAC
// the chart renders for rbac.namespaced and one watched namespace: a
// Workspace there applies; one in another namespace is never touched, and
// the controllers could not write there if they tried.
func TestControllerBinariesNamespacedRBAC(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	binDir := buildControllers(t)
	s := newStackWith(t, stackOptions{NoControllers: true})
	ns := s.ns
	release := "r" + rand.String(5)
	installChart(t, renderChart(t, release, ns, namespacedValues(ns)...), "Deployment", "Service")
	procs := startChartControllers(t, binDir, release, ns, "--watch-namespaces="+ns)
	for _, p := range procs {
		p.waitReady(t)
	}

	other := env.NewNamespace(t)
	outside := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "outside", Namespace: other},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}}}
	require.NoError(t, env.Client.Create(ctx, outside))

	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("inside", "infra", nil)
	s.waitWorkspace("inside", 3*time.Minute, "applies with namespaced RBAC", appliedRevision(rev))

	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(outside), outside))
	assert.Empty(t, outside.Status.Conditions, "a Workspace outside the watched namespaces is not reconciled")
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: other, Name: magosv1.RunnerServiceAccountName("outside")}, &corev1.ServiceAccount{})
	assert.True(t, apierrors.IsNotFound(err), "no runner identity is created outside the watched namespaces, got %v", err)

	ctrlClient := impersonate(t, ns, release+"-workspace-controller")
	err = ctrlClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: other}})
	assert.True(t, apierrors.IsForbidden(err), "the workspace-controller cannot write Secrets outside its namespaces, got %v", err)
	err = impersonate(t, ns, release+"-variableset-controller").List(ctx, &corev1.SecretList{}, client.InNamespace(other))
	assert.True(t, apierrors.IsForbidden(err), "the variableset-controller cannot list Secrets outside its namespaces, got %v", err)

	for name, p := range procs {
		assert.NotContains(t, p.logs.String(), "forbidden", "%s-controller was refused something its namespaced RBAC should grant", name)
	}
}
