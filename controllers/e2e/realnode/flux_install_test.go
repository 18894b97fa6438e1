package realnode

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/tools/harness/testenv"
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
		// The manifests download artifacts from source-controller's
		// Service name in flux-system; the node's source-controller is
		// at a ClusterIP (sourceControllerHost).
		"patches": artifactHostPatches(),
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
	jobsBefore := map[string]bool{}
	for _, j := range jobs.Items {
		jobsBefore[j.Name] = true
	}

	// An upgrade, as Flux delivers one: the next version of Magos (its
	// controller and runner images, built from this commit as VERSION-next
	// by `make images-next`), in manifests pushed under the next version's
	// tag and selected by the OCIRepository. Every controller rolls out to
	// the new version; the applied Workspace is not planned again, and no
	// Job starts.
	next := version + "-next"
	importNextImages(t)
	upgraded := nextVersionManifests(t, data, version, next)
	require.NoError(t, os.WriteFile(filepath.Join(manifests, "magos.yaml"), upgraded, 0o644))
	runFlux(t, "push", "artifact", "oci://"+reg.host+"/magos/manifests:"+next, "--path="+manifests,
		"--source=https://github.com/magos-dev/magos", "--revision="+next+"@sha1:89abcdef0123456789abcdef0123456789abcdef",
		"--insecure-registry", "--creds="+user+":"+password)
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(repo), repo))
	patch := client.MergeFrom(repo.DeepCopy())
	require.NoError(t, unstructured.SetNestedField(repo.Object, next, "spec", "ref", "tag"))
	require.NoError(t, k8s.Patch(ctx, repo, patch))
	upgradeBegan := time.Now()
	require.Eventually(t, func() bool {
		s, msg := kustomizationReady(t, ns, "magos")
		return s == "True" && strings.Contains(msg, next+"@")
	}, 6*time.Minute, time.Second, "the Kustomization applies the next version and is Ready once every controller rolled out")
	t.Logf("realnode: Flux upgraded Magos to %s in %s", next, time.Since(upgradeBegan).Round(time.Millisecond))
	logs := readLogs(t, node.PodLogsDir())
	for _, name := range controllerNames {
		var d appsv1.Deployment
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: magosNamespace, Name: "magos-" + name + "-controller"}, &d))
		require.True(t, strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, "/"+name+"-controller:"+next),
			"%s-controller's Deployment names the next version: %s", name, d.Spec.Template.Spec.Containers[0].Image)
		require.True(t, startedAs(logs, name, next), "a %s-controller of version %s started", name, next)
	}
	// The new workspace-controller has read every Workspace by now; give it
	// a drift interval's worth of nothing to do.
	time.Sleep(15 * time.Second)
	after := waitWorkspace(t, tenant, "hello", time.Second, "still applied after the upgrade", applied(rev))
	require.Equal(t, before.Status.Runs, after.Status.Runs, "the upgrade planned nothing again")
	require.NoError(t, k8s.List(ctx, &jobs, client.InNamespace(tenant)))
	require.Len(t, jobs.Items, len(jobsBefore), "the upgrade started no Job")

	// The next version's runner plans and applies the next commit.
	changed := t.TempDir()
	require.NoError(t, os.CopyFS(changed, os.DirFS("../testdata/hello")))
	require.NoError(t, os.WriteFile(filepath.Join(changed, "upgraded.tf"), []byte("# after the upgrade\n"), 0o644))
	rev = src.Publish(ctx, "infra", changed)
	waitWorkspace(t, tenant, "hello", 5*time.Minute, "applies a new commit under the next version", applied(rev))
	require.NoError(t, k8s.List(ctx, &jobs, client.InNamespace(tenant)))
	var runners []string
	for _, j := range jobs.Items {
		if !jobsBefore[j.Name] {
			runners = append(runners, j.Spec.Template.Spec.Containers[0].Image)
		}
	}
	require.NotEmpty(t, runners, "the new commit ran")
	for _, image := range runners {
		assert.True(t, strings.HasSuffix(image, "/magos-runner:"+next), "the run uses the next version's runner: %s", image)
	}
}

// importNextImages puts the images of `make images-next` in the node's
// image store, as a registry would serve them to the kubelet.
func importNextImages(t *testing.T) {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	archives, err := filepath.Glob(filepath.Join(root, "bin", "images-next", "*.tar"))
	require.NoError(t, err)
	if len(archives) != len(controllerNames)+1 {
		t.Fatalf("%d image archives in bin/images-next, not the %d of `make images-next`: run it", len(archives), len(controllerNames)+1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, a := range archives {
		require.NoError(t, node.ImportImage(ctx, a), "importing %s", a)
	}
}

// nextVersionManifests is the release's manifests of version with every
// Magos controller and runner image at version next: what the next
// release renders. The engine image keeps its own version.
func nextVersionManifests(t *testing.T, data []byte, version, next string) []byte {
	t.Helper()
	images := regexp.MustCompile(`/([a-z]+-controller|magos-runner):` + regexp.QuoteMeta(version) + `\b`)
	changed := map[string]bool{}
	for _, m := range images.FindAllSubmatch(data, -1) {
		changed[string(m[1])] = true
	}
	for _, name := range controllerNames {
		require.True(t, changed[name+"-controller"], "the manifests name the %s-controller image of %s", name, version)
	}
	require.True(t, changed["magos-runner"], "the manifests name the runner image of %s", version)
	return images.ReplaceAll(data, []byte("/${1}:"+next))
}

// startedAs tells whether the Pod logs show a controller name of version
// starting its manager.
func startedAs(logs, name, version string) bool {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "Starting manager") && strings.Contains(line, `"controller":"`+name+`"`) &&
			strings.Contains(line, `"version":"`+version+`"`) {
			return true
		}
	}
	return false
}

// artifactHostPatches are Kustomization patches that add the node's
// source-controller to the artifact hosts of the controllers that download
// artifacts.
func artifactHostPatches() []any {
	var patches []any
	for _, name := range []string{"workspace", "workspaceset"} {
		patches = append(patches, map[string]any{
			"target": map[string]any{"kind": "Deployment", "name": "magos-" + name + "-controller"},
			"patch":  "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --artifact-hosts=" + sourceControllerHost + "\n",
		})
	}
	return patches
}

// newKustomization is an empty Kustomization ns/name.
func newKustomization(ns, name string) *unstructured.Unstructured {
	ks := &unstructured.Unstructured{}
	ks.SetGroupVersionKind(kustomizationGVK)
	ks.SetNamespace(ns)
	ks.SetName(name)
	return ks
}
