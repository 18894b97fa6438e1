package realnode

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// TestFluxInstallsAReleaseFromItsManifests: the plain install manifests of
// `make release` (manifests/magos.yaml), pushed with `flux push artifact`
// to a registry that refuses anonymous requests, are installed by Flux:
// an OCIRepository with the registry's pull Secret and a Kustomization
// with prune and wait, which is Ready once every controller is; a
// Workspace then applies. The tier's Helm install is uninstalled first and
// reinstalled afterwards, once the Kustomization's deletion pruned what it
// applied. (The CRDs stay the magos-crds chart's: a Kustomization that
// prunes CRDs deletes every Magos object with them.)
func TestFluxInstallsAReleaseFromItsManifests(t *testing.T) {
	requireMagos(t)
	requireKustomizeController(t)
	ctx := context.Background()
	root, version, release := releaseDir(t)

	const user = "flux"
	password := rand.Text()
	reg := newPrivateRegistry(t, user, password)
	manifests := t.TempDir()
	data, err := os.ReadFile(filepath.Join(release, "manifests", "magos.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(manifests, "magos.yaml"), data, 0o644))
	runFlux(t, "push", "artifact", "oci://"+reg.host+"/magos/manifests:"+version, "--path="+manifests,
		"--source=https://github.com/magos-dev/magos", "--revision="+version+"@sha1:0123456789abcdef0123456789abcdef01234567",
		"--insecure-registry", "--creds="+user+":"+password)

	ns := newNamespace(t)
	createPullSecret(t, ns, "registry-pull", reg.host, user, password)

	_, err = runHelm(root, "uninstall", "magos", "--namespace", magosNamespace, "--wait")
	require.NoError(t, err)
	t.Cleanup(func() {
		// Deleting the Kustomization prunes what it applied; then the
		// tier's own install comes back for the tests after this one.
		ks := newKustomization(ns, "magos")
		if err := k8s.Delete(context.Background(), ks); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the Kustomization: %v", err)
		}
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			err := k8s.Get(context.Background(), client.ObjectKeyFromObject(ks), ks)
			var d appsv1.Deployment
			gone := k8s.Get(context.Background(), client.ObjectKey{Namespace: magosNamespace, Name: "magos-workspace-controller"}, &d)
			if apierrors.IsNotFound(err) && apierrors.IsNotFound(gone) {
				break
			}
			time.Sleep(time.Second)
		}
		if err := installMagosChart(root); err != nil {
			t.Errorf("reinstalling the tier's Magos: %v", err)
		}
	})

	repo := &unstructured.Unstructured{}
	repo.SetGroupVersionKind(fluxsource.GroupVersion.WithKind("OCIRepository"))
	repo.SetNamespace(ns)
	repo.SetName("magos")
	require.NoError(t, unstructured.SetNestedMap(repo.Object, map[string]any{
		"url": "oci://" + reg.host + "/magos/manifests", "ref": map[string]any{"tag": version}, "interval": "1h",
		"insecure": true, "secretRef": map[string]any{"name": "registry-pull"},
	}, "spec"))
	require.NoError(t, k8s.Create(ctx, repo))
	ks := newKustomization(ns, "magos")
	require.NoError(t, unstructured.SetNestedMap(ks.Object, map[string]any{
		"sourceRef": map[string]any{"kind": "OCIRepository", "name": "magos"},
		"path":      "./",
		"prune":     true,
		"wait":      true,
		"timeout":   "5m",
		"interval":  "1h",
	}, "spec"))
	began := time.Now()
	require.NoError(t, k8s.Create(ctx, ks))
	require.Eventually(t, func() bool {
		s, _ := kustomizationReady(t, ns, "magos")
		return s == "True"
	}, 6*time.Minute, time.Second, "the Kustomization is Ready once every controller is")
	t.Logf("realnode: Flux installed Magos %s from the release's manifests in %s", version, time.Since(began).Round(time.Millisecond))
	for _, name := range controllerNames {
		var d appsv1.Deployment
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: magosNamespace, Name: "magos-" + name + "-controller"}, &d))
		require.Equal(t, int32(1), d.Status.AvailableReplicas, "%s-controller", name)
		require.Equal(t, "magos", d.Labels["kustomize.toolkit.fluxcd.io/name"], "%s-controller was applied by the Kustomization", name)
	}

	tenant := newNamespace(t)
	src := newGitSource(t, tenant)
	rev := src.Publish(ctx, "infra", "../testdata/hello")
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: tenant},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Vars:      []magosv1.Variable{{Name: "secret_word", Value: new("flux")}},
		},
	}))
	before := waitWorkspace(t, tenant, "hello", 5*time.Minute, "applies under the Magos Flux installed", applied(rev))
	var jobs batchv1.JobList
	require.NoError(t, k8s.List(ctx, &jobs, client.InNamespace(tenant)))
	jobsBefore := len(jobs.Items)

	// An upgrade, as Flux delivers one: a second version of the manifests
	// (every controller's Pod template changes, so each Deployment rolls
	// out), pushed under a new tag and selected by the OCIRepository. The
	// applied Workspace is not planned again, and no Job starts.
	upgraded := upgradeManifests(t, data)
	require.NoError(t, os.WriteFile(filepath.Join(manifests, "magos.yaml"), upgraded, 0o644))
	tag := version + "-2"
	runFlux(t, "push", "artifact", "oci://"+reg.host+"/magos/manifests:"+tag, "--path="+manifests,
		"--source=https://github.com/magos-dev/magos", "--revision="+tag+"@sha1:89abcdef0123456789abcdef0123456789abcdef",
		"--insecure-registry", "--creds="+user+":"+password)
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(repo), repo))
	patch := client.MergeFrom(repo.DeepCopy())
	require.NoError(t, unstructured.SetNestedField(repo.Object, tag, "spec", "ref", "tag"))
	require.NoError(t, k8s.Patch(ctx, repo, patch))
	require.Eventually(t, func() bool {
		s, msg := kustomizationReady(t, ns, "magos")
		return s == "True" && strings.Contains(msg, tag+"@")
	}, 6*time.Minute, time.Second, "the Kustomization applies the second version and is Ready once every controller rolled out")
	for _, name := range controllerNames {
		var d appsv1.Deployment
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: magosNamespace, Name: "magos-" + name + "-controller"}, &d))
		require.Equal(t, "2", d.Spec.Template.Annotations["magos.dev/test-upgrade"], "%s-controller runs the second version", name)
	}
	// The new workspace-controller has read every Workspace by now; give it
	// a drift interval's worth of nothing to do.
	time.Sleep(15 * time.Second)
	after := waitWorkspace(t, tenant, "hello", time.Second, "still applied after the upgrade", applied(rev))
	require.Equal(t, before.Status.Runs, after.Status.Runs, "the upgrade planned nothing again")
	require.NoError(t, k8s.List(ctx, &jobs, client.InNamespace(tenant)))
	require.Len(t, jobs.Items, jobsBefore, "the upgrade started no Job")
}

// upgradeManifests is a second version of the rendered manifests: every
// Deployment's Pod template carries one more annotation.
func upgradeManifests(t *testing.T, data []byte) []byte {
	t.Helper()
	var docs []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.GetKind() != "Deployment" {
			docs = append(docs, doc)
			continue
		}
		require.NoError(t, unstructured.SetNestedField(u.Object, "2", "spec", "template", "metadata", "annotations", "magos.dev/test-upgrade"))
		b, err := yaml.Marshal(u.Object)
		require.NoError(t, err)
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "\n---\n"))
}

// newKustomization is an empty Kustomization ns/name.
func newKustomization(ns, name string) *unstructured.Unstructured {
	ks := &unstructured.Unstructured{}
	ks.SetGroupVersionKind(kustomizationGVK)
	ks.SetNamespace(ns)
	ks.SetName(name)
	return ks
}
