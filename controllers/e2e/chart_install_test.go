package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// everyOption is a values file that turns on every per-controller option
// the apiserver can hold (monitors need the Prometheus Operator's CRDs).
const everyOption = `
global:
  log: {level: debug, encoding: console}
workspace-controller:
  replicas: 2
  shards: [a]
  priorityClassName: system-cluster-critical
  podLabels: {team: platform}
  extraEnv: [{name: HTTPS_PROXY, value: "http://proxy:3128"}]
  extraVolumes: [{name: ca, configMap: {name: corp-ca}}]
  extraVolumeMounts: [{name: ca, mountPath: /etc/ssl/corp}]
  podSecurityContext: {fsGroup: 65532}
  networkPolicy:
    enabled: true
    egress: {enabled: true}
    metricsFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]
    apiServer: {cidrs: [10.0.0.1/32]}
project-controller:
  serviceAccount: {name: magos-projects}
  podDisruptionBudget: {enabled: true, maxUnavailable: 1}
rollout-controller:
  networkPolicy: {enabled: true}
`

// workspaceCRD reads the Workspace CRD from the test apiserver.
func workspaceCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: "workspaces.magos.dev"}, u))
	crd := &apiextensionsv1.CustomResourceDefinition{}
	data, err := u.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, crd))
	return crd
}

// printerColumns are the names of the CRD's first version's printer columns.
func printerColumns(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var names []string
	for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		names = append(names, c.Name)
	}
	return names
}

// chartWithChangedCRD copies charts/magos with one more printer column in
// its templated Workspace CRD: what a release that changes a CRD ships.
func chartWithChangedCRD(t *testing.T, column string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "magos")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(env.Root, "charts", "magos"))))
	file := filepath.Join(dir, "files", "crds", "magos.dev_workspaces.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(data, crd))
	v := &crd.Spec.Versions[0]
	v.AdditionalPrinterColumns = append(v.AdditionalPrinterColumns, apiextensionsv1.CustomResourceColumnDefinition{
		Name: column, Type: "string", JSONPath: ".spec.terraform.engine",
	})
	data, err = yaml.Marshal(crd)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, data, 0o644))
	return dir
}

// TestHelmChartInstallAndCRDUpgrade installs the chart with helm into the
// test apiserver with every option and crds.enabled (taking over the CRDs
// the test environment created), upgrades it to a chart whose Workspace
// CRD changed, and uninstalls it: the apiserver accepts every object, the
// plain `helm upgrade` updates the CRD, and crds.keep leaves the CRDs.
func TestHelmChartInstallAndCRDUpgrade(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	release := "m" + rand.String(5)
	values := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(values, []byte(everyOption), 0o644))
	before := printerColumns(workspaceCRD(t))
	require.NotContains(t, before, "EngineName")

	out := helmOnCluster(t, "install", release, "charts/magos", "--namespace", ns, "--values", values,
		"--set", "crds.enabled=true", "--take-ownership")
	t.Cleanup(func() { helmOnCluster(t, "uninstall", release, "--namespace", ns, "--ignore-not-found") })
	assert.Contains(t, string(out), "kubectl wait deployment --namespace "+ns, "the notes say how to check the controllers")
	assert.Contains(t, string(out), "CRDs: installed by this release (crds.enabled, kept on uninstall)")

	crd := workspaceCRD(t)
	assert.Equal(t, "keep", crd.Annotations["helm.sh/resource-policy"])
	assert.Equal(t, release, crd.Annotations["meta.helm.sh/release-name"], "the release owns the CRDs")
	manifest := decodeObjects(t, helmOnCluster(t, "get", "manifest", release, "--namespace", ns))
	for _, want := range [][2]string{
		{"PodDisruptionBudget", release + "-workspace-controller"},
		{"PodDisruptionBudget", release + "-project-controller"},
		{"NetworkPolicy", release + "-workspace-controller"},
		{"Deployment", release + "-workspace-controller-shard-a"},
		{"NetworkPolicy", release + "-workspace-controller-shard-a"},
		{"NetworkPolicy", release + "-rollout-controller"},
		{"ServiceAccount", "magos-projects"},
		{"CustomResourceDefinition", "rollouts.magos.dev"},
	} {
		assert.NotNil(t, chartObject(manifest, want[0], want[1]), "the release installed %s %s", want[0], want[1])
	}

	t.Run("helm upgrade applies a changed CRD", func(t *testing.T) {
		helmOnCluster(t, "upgrade", release, chartWithChangedCRD(t, "EngineName"), "--namespace", ns, "--values", values,
			"--set", "crds.enabled=true")
		assert.Equal(t, append(before, "EngineName"), printerColumns(workspaceCRD(t)))

		helmOnCluster(t, "upgrade", release, "charts/magos", "--namespace", ns, "--values", values, "--set", "crds.enabled=true")
		assert.Equal(t, before, printerColumns(workspaceCRD(t)), "upgrading back restores the CRD")
	})

	t.Run("uninstall keeps the CRDs", func(t *testing.T) {
		helmOnCluster(t, "uninstall", release, "--namespace", ns, "--wait")
		assert.Equal(t, before, printerColumns(workspaceCRD(t)))
		assert.NotNil(t, workspaceCRD(t))
		assert.Empty(t, helmOnCluster(t, "list", "--namespace", ns, "--short"))
	})
}

// TestHelmChartCRDTemplates: crds.enabled renders exactly the CRDs of the
// magos-crds chart with the release's labels; crds.keep adds Helm's keep
// policy; off by default.
func TestHelmChartCRDTemplates(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	assert.Nil(t, chartObject(renderChart(t, release, "magos-system"), "CustomResourceDefinition", "workspaces.magos.dev"), "off by default")

	files, err := filepath.Glob(filepath.Join(env.Root, "charts", "magos-crds", "crds", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 5, "one CRD per kind")
	for _, keep := range []bool{true, false} {
		objs := renderChart(t, release, "magos-system", "--set", "crds.enabled=true", "--set", "crds.keep="+map[bool]string{true: "true", false: "false"}[keep])
		for _, file := range files {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			want := decodeObjects(t, data)[0]
			got := chartObject(objs, "CustomResourceDefinition", want.GetName())
			require.NotNil(t, got, "the chart renders %s", want.GetName())
			assert.Equal(t, want.Object["spec"], got.Object["spec"], "%s is the magos-crds chart's", want.GetName())
			assert.Equal(t, "magos", got.GetLabels()["app.kubernetes.io/part-of"])
			assert.Equal(t, release, got.GetLabels()["app.kubernetes.io/instance"])
			policy, set := got.GetAnnotations()["helm.sh/resource-policy"]
			assert.Equal(t, keep, set && policy == "keep", "crds.keep=%t", keep)
		}
	}
}
