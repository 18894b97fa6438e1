package realnode

import (
	"bytes"
	"context"
	"errors"
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
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var (
	kustomizeOnce sync.Once
	kustomizeErr  error
)

// kustomizationGVK is Flux's Kustomization.
var kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}

// requireKustomizeController installs source-controller and then Flux's
// kustomize-controller on the node the first time a test needs them.
func requireKustomizeController(t *testing.T) {
	t.Helper()
	requireSourceController(t)
	kustomizeOnce.Do(func() { kustomizeErr = installKustomizeController() })
	if kustomizeErr != nil {
		t.Fatalf("installing kustomize-controller on the node: %v", kustomizeErr)
	}
}

// installKustomizeController applies kustomize-controller's own
// configuration from its Go module (config/crd, config/rbac and
// config/manager; config/default also pulls source-controller's release
// manifests from the internet), rendered with kubectl kustomize into
// flux-system with the image `make node` built. Its RBAC is the module's:
// the controller's ServiceAccount is bound to cluster-admin, as in Flux's
// installation.
func installKustomizeController() error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	version, err := testenv.MakeVariable(root, "FLUX_KUSTOMIZE_CONTROLLER_VERSION")
	if err != nil {
		return err
	}
	module, err := moduleDir("github.com/fluxcd/kustomize-controller@v" + version)
	if err != nil {
		return err
	}
	overlay, err := os.MkdirTemp("", "magos-realnode-kustomize-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(overlay)
	var bases []string
	for _, dir := range []string{"crd", "rbac", "manager"} {
		rel, err := filepath.Rel(overlay, filepath.Join(module, "config", dir))
		if err != nil {
			return err
		}
		bases = append(bases, "- "+rel)
	}
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
%s
images:
- name: fluxcd/kustomize-controller
  newName: magos.test/fluxcd/kustomize-controller
  newTag: v%s
patches:
- target: {group: apps, version: v1, kind: Deployment, name: kustomize-controller}
  patch: |-
    - op: replace
      path: /spec/template/spec/containers/0/imagePullPolicy
      value: Never
`, fluxNamespace, strings.Join(bases, "\n"), version)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		return err
	}
	kubectl := filepath.Join(root, "bin", "k8s", "kubectl")
	var stderr bytes.Buffer
	render := exec.Command(kubectl, "kustomize", overlay)
	render.Stderr = &stderr
	manifests, err := render.Output()
	if err != nil {
		return fmt.Errorf("kubectl kustomize %s: %w: %s", overlay, err, stderr.String())
	}
	began := time.Now()
	apply := node.Command(kubectl, "apply", "--server-side", "--force-conflicts", "--field-manager=magos-realnode",
		"--kubeconfig", node.Kubeconfig, "-f", "-")
	apply.Stdin = bytes.NewReader(manifests)
	if out, err := apply.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		var d appsv1.Deployment
		err := k8s.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "kustomize-controller"}, &d)
		if err == nil && d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("kustomize-controller is not available: %w", ctx.Err()), describePods(fluxNamespace))
		case <-time.After(250 * time.Millisecond):
		}
	}
	fmt.Printf("realnode: kustomize-controller v%s available %s after it was applied\n", version, time.Since(began).Round(time.Millisecond))
	return nil
}

// runFlux runs the flux CLI `make node` built against the node's
// apiserver and fails t if it fails.
func runFlux(t *testing.T, args ...string) string {
	t.Helper()
	out, err := flux(t, args...)
	require.NoError(t, err, "flux %s: %s", strings.Join(args, " "), out)
	return out
}

// flux runs the flux CLI and returns its output and how it exited.
func flux(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	version, err := testenv.MakeVariable(root, "FLUX_CLI_VERSION")
	require.NoError(t, err)
	cmd := node.Command(filepath.Join(root, "bin", "flux", "flux-"+version), append(args, "--kubeconfig", node.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kustomizationReady is the Ready condition of a Kustomization: its status
// and message, "" while it has none for its current generation.
func kustomizationReady(t *testing.T, ns, name string) (status, message string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kustomizationGVK)
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u))
	if observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); observed != u.GetGeneration() {
		return "", ""
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == "Ready" {
			s, _ := c["status"].(string)
			m, _ := c["message"].(string)
			return s, m
		}
	}
	return "", ""
}

// TestKustomizationAppliesWorkspacesFromGit is the Flux user's journey
// with Flux's own controllers and CLI: the Terraform configuration and the
// Workspace manifest live in Git; a Kustomization applies the Workspace
// with wait (kstatus health checks on the Magos kind) and is Ready once the
// Workspace applied; a commit of a Workspace that cannot apply makes the
// Kustomization fail with the Workspace's reason; after a commit to the
// configuration, `flux reconcile source git` brings the new revision,
// which the Workspace applies; `flux suspend source git` holds the next
// one until `flux resume source git`.
func TestKustomizationAppliesWorkspacesFromGit(t *testing.T) {
	ctx := context.Background()
	requireKustomizeController(t)
	ns := newNamespace(t)
	git := newGitSource(t, ns)
	config := t.TempDir()
	writeRelease(t, config, "v1")
	first := git.Publish(ctx, "infra", config)

	fleet := t.TempDir()
	workspace := func(name, sourceRef string) string {
		return fmt.Sprintf(`apiVersion: magos.dev/v1alpha1
kind: Workspace
metadata:
  name: %s
spec:
  sourceRef: {kind: GitRepository, %s}
  outputs: {secretName: %s-outputs}
`, name, sourceRef, name)
	}
	require.NoError(t, os.WriteFile(filepath.Join(fleet, "release.yaml"), []byte(workspace("release", "name: infra")), 0o644))
	git.Publish(ctx, "fleet", fleet)

	ks := &unstructured.Unstructured{}
	ks.SetGroupVersionKind(kustomizationGVK)
	ks.SetNamespace(ns)
	ks.SetName("workspaces")
	require.NoError(t, unstructured.SetNestedMap(ks.Object, map[string]any{
		"sourceRef":       map[string]any{"kind": "GitRepository", "name": "fleet"},
		"path":            "./",
		"prune":           true,
		"wait":            true,
		"timeout":         "3m",
		"interval":        "1m",
		"targetNamespace": ns,
	}, "spec"))
	require.NoError(t, k8s.Create(ctx, ks))

	began := time.Now()
	require.Eventually(t, func() bool {
		s, _ := kustomizationReady(t, ns, "workspaces")
		return s == "True"
	}, 5*time.Minute, time.Second, "the Kustomization is Ready once the Workspace applied")
	waitWorkspace(t, ns, "release", time.Second, "applied when the Kustomization is Ready", applied(first))
	t.Logf("realnode: Kustomization Ready, its Workspace applied, %s after it was created", time.Since(began).Round(time.Millisecond))
	assert.Contains(t, runFlux(t, "get", "kustomizations", "-n", ns), "workspaces")

	// A Workspace the guards refuse (a source in another namespace) stalls;
	// the Kustomization's health check fails with it.
	require.NoError(t, os.WriteFile(filepath.Join(fleet, "elsewhere.yaml"), []byte(workspace("elsewhere", "name: infra, namespace: "+fluxNamespace)), 0o644))
	git.Publish(ctx, "fleet", fleet)
	requestReconcile(t, ks)
	var message string
	require.Eventually(t, func() bool {
		var s string
		s, message = kustomizationReady(t, ns, "workspaces")
		return s == "False" && strings.Contains(message, "elsewhere")
	}, 5*time.Minute, time.Second, "the Kustomization fails on the stalled Workspace")
	t.Logf("realnode: the Kustomization says: %s", message)

	// Remove it again (prune), then a new commit of the configuration.
	require.NoError(t, os.Remove(filepath.Join(fleet, "elsewhere.yaml")))
	git.Publish(ctx, "fleet", fleet)
	writeRelease(t, config, "v2")
	committed := time.Now()
	second := publishOnly(t, git, "infra", config)
	out := runFlux(t, "reconcile", "source", "git", "infra", "-n", ns)
	assert.Contains(t, out, strings.TrimPrefix(second, "main@sha1:")[:7], "flux reconcile fetched the new commit")
	waitWorkspace(t, ns, "release", 5*time.Minute, "applies the commit flux reconciled", applied(second))
	t.Logf("realnode: from the commit to the Workspace applied, with flux reconcile: %s", time.Since(committed).Round(time.Millisecond))

	// Suspended, the source ignores a reconcile request for the next
	// commit; resumed, it brings it.
	runFlux(t, "suspend", "source", "git", "infra", "-n", ns)
	writeRelease(t, config, "v3")
	third := publishOnly(t, git, "infra", config)
	repo := &unstructured.Unstructured{}
	repo.SetGroupVersionKind(fluxsource.GroupVersion.WithKind("GitRepository"))
	repo.SetNamespace(ns)
	repo.SetName("infra")
	requestReconcile(t, repo)
	assert.Never(t, func() bool {
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "infra"}, repo))
		return fluxsource.ReadArtifact(repo).Revision != second
	}, 10*time.Second, time.Second, "a suspended source fetches nothing")
	runFlux(t, "resume", "source", "git", "infra", "-n", ns)
	ws := waitWorkspace(t, ns, "release", 5*time.Minute, "applies the commit made while suspended", applied(third))
	assert.Equal(t, third, ws.Status.LastApplied.Revision)
	assertOutput(t, ns, "release-outputs", "release", ":v3")
}

// publishOnly commits dir to repository name without asking source-controller
// for it, and returns the revision it will have.
func publishOnly(t *testing.T, s *gitSource, name, dir string) string {
	t.Helper()
	commit, err := s.git.Publish(name, dir)
	require.NoError(t, err)
	return "main@sha1:" + commit
}

// requestReconcile asks a Flux object for a reconcile, as Flux's webhook
// receivers and `flux reconcile` do.
func requestReconcile(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(o), o))
	patch := client.MergeFrom(o.DeepCopy())
	o.SetAnnotations(map[string]string{"reconcile.fluxcd.io/requestedAt": time.Now().Format(time.RFC3339Nano)})
	require.NoError(t, k8s.Patch(ctx, o, patch))
}
