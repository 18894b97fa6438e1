package e2e

import (
	"context"
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
	env.Require(t)
	kube := serverVersion(t)
	helm(t, "lint", "--strict", "--kube-version", kube, "charts/magos")
	helm(t, "lint", "--strict", "--kube-version", kube, "charts/magos-crds")
	// The subcharts render only through the umbrella chart (its templates
	// define magos.controller): lint them there, with every option on.
	options := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(options, []byte(everyOption), 0o644))
	helm(t, "lint", "--strict", "--kube-version", kube, "charts/magos", "--values", options,
		"--set", "crds.enabled=true", "--set", "global.podMonitor.enabled=true")

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

// fluxManifests reads the objects deploy/flux/kustomization.yaml lists.
func fluxManifests(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	dir := filepath.Join(env.Root, "deploy", "flux")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	require.NoError(t, yaml.Unmarshal(data, &kustomization))
	var objs []*unstructured.Unstructured
	for _, file := range kustomization.Resources {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		objs = append(objs, decodeObjects(t, data)...)
	}
	return objs
}

// chartVersions returns the version and appVersion in charts/<chart>/Chart.yaml.
func chartVersions(t *testing.T, chart string) (version, appVersion string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.Root, "charts", chart, "Chart.yaml"))
	require.NoError(t, err)
	var meta struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	require.NoError(t, yaml.Unmarshal(data, &meta))
	return meta.Version, meta.AppVersion
}

func TestFluxInstallManifests(t *testing.T) {
	env.Require(t)
	objs := fluxManifests(t)
	ns := env.NewNamespace(t)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "Namespace" {
			assert.Equal(t, "magos-system", o.GetName())
			continue
		}
		assert.Equal(t, "magos-system", o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
		o.SetNamespace(ns)
		require.NoError(t, env.Client.Create(context.Background(), o), "the apiserver (with Flux's CRDs) accepts %s %s", o.GetKind(), o.GetName())
	}
	assert.Equal(t, map[string]int{"Namespace": 1, "OCIRepository": 2, "HelmRelease": 2}, kinds)

	crds, magos := chartObject(objs, "HelmRelease", "magos-crds"), chartObject(objs, "HelmRelease", "magos")
	require.NotNil(t, crds)
	require.NotNil(t, magos)
	dependsOn, _, _ := unstructured.NestedSlice(magos.Object, "spec", "dependsOn")
	assert.Equal(t, []any{map[string]any{"name": "magos-crds"}}, dependsOn, "the controllers wait for their CRDs")
	for _, hr := range []*unstructured.Unstructured{crds, magos} {
		// Each release installs its chart from the OCI artifact `make push
		// REGISTRY=ghcr.io/magos-dev` publishes: <registry>/charts/<chart>:<version>.
		chartRef, _, _ := unstructured.NestedStringMap(hr.Object, "spec", "chartRef")
		assert.Equal(t, map[string]string{"kind": "OCIRepository", "name": hr.GetName()}, chartRef)
		repo := chartObject(objs, "OCIRepository", hr.GetName())
		require.NotNil(t, repo, "the OCIRepository %s", hr.GetName())
		url, _, _ := unstructured.NestedString(repo.Object, "spec", "url")
		assert.Equal(t, "oci://ghcr.io/magos-dev/charts/"+hr.GetName(), url)
		tag, _, _ := unstructured.NestedString(repo.Object, "spec", "ref", "tag")
		version, _ := chartVersions(t, hr.GetName())
		assert.Equal(t, version, tag, "the source follows the chart's version")
		layer, _, _ := unstructured.NestedStringMap(repo.Object, "spec", "layerSelector")
		assert.Equal(t, map[string]string{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"}, layer,
			"helm-controller gets the chart archive")
		helm(t, "lint", "--strict", "--kube-version", serverVersion(t), "charts/"+hr.GetName())
	}
	policy, _, _ := unstructured.NestedString(crds.Object, "spec", "upgrade", "crds")
	assert.Equal(t, "CreateReplace", policy, "CRD upgrades are applied")

	values, _, _ := unstructured.NestedMap(magos.Object, "spec", "values")
	data, err := yaml.Marshal(values)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	rendered := renderChart(t, "magos", "magos-system", "--values", file)
	for _, c := range controllerNames {
		require.NotNil(t, chartObject(rendered, "Deployment", "magos-"+c+"-controller"), "the release's values render %s-controller", c)
	}
	replicas, _, _ := unstructured.NestedInt64(chartObject(rendered, "Deployment", "magos-workspace-controller").Object, "spec", "replicas")
	assert.Equal(t, int64(2), replicas)
	containers, _, _ := unstructured.NestedSlice(chartObject(rendered, "Deployment", "magos-project-controller").Object, "spec", "template", "spec", "containers")
	require.Len(t, containers, 1)
	_, appVersion := chartVersions(t, "magos")
	assert.Equal(t, "ghcr.io/magos-dev/project-controller:"+appVersion, containers[0].(map[string]any)["image"],
		"the controllers run the images of the chart's release")
}

// TestHelmChartEngineImages: the workspace-controller gets one
// --engine-image per engine from runner.engineImages: OpenTofu's by
// default, Terraform's only when the user names an image they built.
func TestHelmChartEngineImages(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	args := func(objs []*unstructured.Unstructured) []string {
		dep := chartObject(objs, "Deployment", release+"-workspace-controller")
		require.NotNil(t, dep)
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		a, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		return a
	}
	def := args(renderChart(t, release, "magos-system"))
	assert.Contains(t, def, "--engine-image=opentofu=ghcr.io/magos-dev/magos-engine-opentofu:{version}")
	assert.NotContains(t, strings.Join(def, " "), "--engine-image=terraform")

	set := args(renderChart(t, release, "magos-system",
		"--set", "workspace-controller.runner.engineImages.terraform=registry.example.com/magos-engine-terraform:{version}",
		"--set", "workspace-controller.runner.engineImages.opentofu=mirror.example.com/tofu:{version}"))
	assert.Contains(t, set, "--engine-image=terraform=registry.example.com/magos-engine-terraform:{version}")
	assert.Contains(t, set, "--engine-image=opentofu=mirror.example.com/tofu:{version}")
}

// TestHelmChartOneRegistrySetting: global.image.repository and tag move the
// runner and engine images with the controllers' (a private registry is one
// setting), a full runner.image still wins, and runner.imagePullSecrets
// reach the controller as the runner Pods' default pull secrets.
func TestHelmChartOneRegistrySetting(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	workspaceController := func(objs []*unstructured.Unstructured) (image string, args []string) {
		dep := chartObject(objs, "Deployment", release+"-workspace-controller")
		require.NotNil(t, dep)
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		ctr := containers[0].(map[string]any)
		a, _, _ := unstructured.NestedStringSlice(ctr, "args")
		return ctr["image"].(string), a
	}
	image, args := workspaceController(renderChart(t, release, "magos-system",
		"--set", "global.image.repository=registry.internal:5000/platform",
		"--set", "global.image.tag=1.2.3",
		"--set", "workspace-controller.runner.imagePullSecrets={regcred,mirror}"))
	assert.Equal(t, "registry.internal:5000/platform/workspace-controller:1.2.3", image)
	assert.Contains(t, args, "--runner-image=registry.internal:5000/platform/magos-runner:1.2.3")
	assert.Contains(t, args, "--engine-image=opentofu=registry.internal:5000/platform/magos-engine-opentofu:{version}")
	assert.Contains(t, args, "--runner-image-pull-secrets=regcred,mirror")
	assert.Contains(t, args, "--allowed-runner-images=registry.internal:5000/platform/magos-runner:1.2.3,registry.internal:5000/platform/magos-engine-*:*",
		"only this release's runner and Magos's engine images run by default, from the one registry")

	_, args = workspaceController(renderChart(t, release, "magos-system",
		"--set", "global.image.repository=registry.internal:5000/platform",
		"--set", "workspace-controller.runner.image=mirror.example/runner:7"))
	assert.Contains(t, args, "--runner-image=mirror.example/runner:7", "a full reference overrides the registry setting")
	assert.Contains(t, strings.Join(args, " "), "--allowed-runner-images=mirror.example/runner:7,", "the runner image the operator chose is allowed")
	assert.NotContains(t, strings.Join(args, " "), "--runner-image-pull-secrets", "no pull secrets unless named")

	_, appVersion := chartVersions(t, "magos")
	_, args = workspaceController(renderChart(t, release, "magos-system"))
	assert.Contains(t, args, "--runner-image=ghcr.io/magos-dev/magos-runner:"+appVersion)
}
