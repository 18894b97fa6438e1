package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// helm runs bin/helm (built by `make tools`) and returns its stdout.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	return runHelm(t, exec.Command(filepath.Join(env.Root, "bin", "helm"), args...))
}

// helmOnCluster runs bin/helm against the test apiserver, with helm's own
// files in a temporary directory, and returns its stdout.
func helmOnCluster(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(env.Root, "bin", "helm"), append(args, "--kubeconfig", env.Kubeconfig)...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	return runHelm(t, cmd)
}

func runHelm(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	cmd.Dir = env.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%v: %s%s", cmd.Args, out, stderr.String())
	return out
}

// renderChart renders charts/magos as release in namespace with extra
// helm arguments (such as --set) and returns its objects.
func renderChart(t *testing.T, release, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return decodeObjects(t, renderChartOutput(t, release, namespace, args...))
}

// renderChartOutput is the YAML `helm template` renders for charts/magos,
// for the test apiserver's Kubernetes version (the chart's kubeVersion is
// checked against it).
func renderChartOutput(t *testing.T, release, namespace string, args ...string) []byte {
	t.Helper()
	return helm(t, append([]string{"template", release, "charts/magos", "--namespace", namespace, "--kube-version", serverVersion(t)}, args...)...)
}

// renderChartError renders charts/magos as renderChart does, requires it
// to fail and returns helm's output.
func renderChartError(t *testing.T, release, namespace string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(env.Root, "bin", "helm"),
		append([]string{"template", release, "charts/magos", "--namespace", namespace, "--kube-version", serverVersion(t)}, args...)...)
	cmd.Dir = env.Root
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "helm template %v renders:\n%s", args, out)
	return string(out)
}

// serverVersion is the test apiserver's Kubernetes version, e.g. v1.36.4.
func serverVersion(t *testing.T) string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	v, err := dc.ServerVersion()
	require.NoError(t, err)
	return v.GitVersion
}

// decodeObjects decodes the objects of a multi-document YAML stream,
// skipping empty documents.
func decodeObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		require.NoError(t, err)
		data, err := yaml.YAMLToJSON(doc)
		require.NoError(t, err)
		if string(data) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(data), "%s", doc)
		objs = append(objs, u)
	}
}

// installChart creates the rendered objects, except those of the kinds in
// skip, and deletes the cluster-scoped ones after the test.
func installChart(t *testing.T, objs []*unstructured.Unstructured, skip ...string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if slices.Contains(skip, o.GetKind()) {
			continue
		}
		require.NoError(t, env.Client.Create(ctx, o.DeepCopy()), "creating %s %s", o.GetKind(), o.GetName())
		if o.GetNamespace() == "" {
			obj := o.DeepCopy()
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}
}

// chartObject finds the rendered object of kind and name.
func chartObject(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}
