package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/yaml"
)

// generatedClusterRoleRules are the rules controller-gen generated for a
// controller into deploy/rbac/<controller>/role.yaml.
func generatedClusterRoleRules(t *testing.T, controller string) []any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.Root, "deploy", "rbac", controller, "role.yaml"))
	require.NoError(t, err)
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		if obj["kind"] == "ClusterRole" {
			return obj["rules"].([]any)
		}
	}
	t.Fatalf("no ClusterRole in deploy/rbac/%s/role.yaml", controller)
	return nil
}

func TestHelmChart(t *testing.T) {
	helm(t, "lint", "--strict", "charts/magos")
	helm(t, "lint", "--strict", "charts/magos-crds")

	ns := env.NewNamespace(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, ns,
		"--set", "global.serviceMonitor.enabled=true",
		"--set", "global.image.tag=v9.9.9",
		"--set", "workspace-controller.replicas=2",
		"--set", "rollout-controller.resources.limits.memory=1Gi")

	for _, c := range controllerNames {
		name := release + "-" + c + "-controller"
		t.Run(c, func(t *testing.T) {
			for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "ServiceMonitor"} {
				require.NotNil(t, chartObject(objs, kind, name), "%s %s", kind, name)
			}
			require.NotNil(t, chartObject(objs, "Role", name+"-leader-election"))
			require.NotNil(t, chartObject(objs, "Service", name+"-metrics"))

			rules, _, _ := unstructured.NestedSlice(chartObject(objs, "ClusterRole", name).Object, "rules")
			assert.Equal(t, generatedClusterRoleRules(t, c), rules, "the chart grants exactly what controller-gen generated")

			dep := chartObject(objs, "Deployment", name)
			containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
			require.Len(t, containers, 1)
			ctr := containers[0].(map[string]any)
			assert.Equal(t, "ghcr.io/magos-dev/"+c+"-controller:v9.9.9", ctr["image"])
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			assert.Contains(t, args, "--leader-election-namespace="+ns)
			assert.Contains(t, args, "--leader-elect=true")
			sc := ctr["securityContext"].(map[string]any)
			assert.Equal(t, false, sc["allowPrivilegeEscalation"])
			assert.Equal(t, true, sc["readOnlyRootFilesystem"])
			assert.Equal(t, map[string]any{"drop": []any{"ALL"}}, sc["capabilities"])
			podSC, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec", "securityContext")
			assert.Equal(t, true, podSC["runAsNonRoot"])
			sa, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "spec", "serviceAccountName")
			assert.Equal(t, name, sa)
		})
	}
	replicas, _, _ := unstructured.NestedInt64(chartObject(objs, "Deployment", release+"-workspace-controller").Object, "spec", "replicas")
	assert.Equal(t, int64(2), replicas, "controllers scale independently")
	replicas, _, _ = unstructured.NestedInt64(chartObject(objs, "Deployment", release+"-project-controller").Object, "spec", "replicas")
	assert.Equal(t, int64(1), replicas)
	rc, _, _ := unstructured.NestedSlice(chartObject(objs, "Deployment", release+"-rollout-controller").Object, "spec", "template", "spec", "containers")
	limit, _, _ := unstructured.NestedString(rc[0].(map[string]any), "resources", "limits", "memory")
	assert.Equal(t, "1Gi", limit, "resources are set per controller")

	t.Run("the apiserver accepts every rendered object", func(t *testing.T) {
		installChart(t, objs, "ServiceMonitor")
	})

	t.Run("a disabled controller renders nothing", func(t *testing.T) {
		objs := renderChart(t, release, ns, "--set", "rollout-controller.enabled=false")
		assert.Nil(t, chartObject(objs, "Deployment", release+"-rollout-controller"))
		assert.NotNil(t, chartObject(objs, "Deployment", release+"-workspace-controller"))
		assert.Nil(t, chartObject(objs, "ServiceMonitor", release+"-workspace-controller"), "ServiceMonitors are off by default")
	})
}
