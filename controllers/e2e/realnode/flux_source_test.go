package realnode

import (
	"bytes"
	"context"
	"encoding/json"
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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/tools/harness/gitserver"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/sourcecontroller"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// fluxNamespace is where source-controller runs, as in Flux's own
// installation.
const fluxNamespace = "flux-system"

// sourceControllerHost is the address source-controller's Service has on
// the node (a fixed ClusterIP in the static band of realnode.ServiceCIDR,
// which the apiserver gives no Service by itself) and its port: the host
// of every artifact URL, which Magos is installed to download from
// (global.artifactHosts), before source-controller is.
const (
	sourceControllerIP   = "10.215.0.9"
	sourceControllerHost = sourceControllerIP + ":80"
)

var (
	fluxOnce sync.Once
	fluxErr  error
)

// requireSourceController skips or fails t without a node, and installs
// Magos and then Flux's source-controller on the node the first time a
// test needs them.
func requireSourceController(t testing.TB) {
	t.Helper()
	requireMagos(t)
	fluxOnce.Do(func() { fluxErr = installSourceController() })
	if fluxErr != nil {
		t.Fatalf("installing source-controller on the node: %v", fluxErr)
	}
}

// installSourceController applies source-controller's own configuration
// (config/default of its Go module: CRDs, RBAC, Service, Deployment),
// rendered with kubectl kustomize into flux-system with three changes: the
// image `make node` built (imported, never pulled) and the address it
// advertises in artifact URLs. Flux advertises its Service's DNS name;
// the node has no cluster DNS, so it is the Service's ClusterIP and port,
// from the environment the kubelet gives a Pod for each Service of its
// namespace; the ClusterIP is fixed (sourceControllerIP), the one artifact
// host Magos was installed with.
func installSourceController() error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	version, err := testenv.MakeVariable(root, "FLUX_SOURCE_CONTROLLER_VERSION")
	if err != nil {
		return err
	}
	module, err := moduleDir("github.com/fluxcd/source-controller@v" + version)
	if err != nil {
		return err
	}
	overlay, err := os.MkdirTemp("", "magos-realnode-flux-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(overlay)
	// kustomize takes a base only by a relative path.
	base, err := filepath.Rel(overlay, filepath.Join(module, "config", "default"))
	if err != nil {
		return err
	}
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
- %s
images:
- name: fluxcd/source-controller
  newName: magos.test/fluxcd/source-controller
  newTag: v%s
patches:
- target: {group: apps, version: v1, kind: Deployment, name: source-controller}
  patch: |-
    - op: replace
      path: /spec/template/spec/containers/0/imagePullPolicy
      value: Never
    - op: test
      path: /spec/template/spec/containers/0/args/5
      value: --storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc.cluster.local.
    - op: replace
      path: /spec/template/spec/containers/0/args/5
      value: --storage-adv-addr=$(SOURCE_CONTROLLER_SERVICE_HOST):$(SOURCE_CONTROLLER_SERVICE_PORT)
- target: {version: v1, kind: Service, name: source-controller}
  patch: |-
    - op: add
      path: /spec/clusterIP
      value: %s
`, fluxNamespace, base, version, sourceControllerIP)
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
	// Server-side, taking over the source CRDs installMagos installed from
	// the same API version.
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
		err := k8s.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "source-controller"}, &d)
		if err == nil && d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("source-controller is not available: %w", ctx.Err()), describePods(fluxNamespace))
		case <-time.After(250 * time.Millisecond):
		}
	}
	fmt.Printf("realnode: source-controller v%s available %s after it was applied\n", version, time.Since(began).Round(time.Millisecond))
	return nil
}

// moduleDir is the directory of a module version in the module cache,
// downloading it if needed (`make node` has, to build it).
func moduleDir(moduleVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", moduleVersion)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); jerr != nil || mod.Dir == "" {
		return "", errors.Join(fmt.Errorf("go mod download %s: %s", moduleVersion, mod.Error), err, jerr)
	}
	return mod.Dir, nil
}

// gitSource serves Git repositories on the node's address, where
// source-controller clones them into GitRepositories of one namespace:
// what a test publishes reaches its Workspaces as on a cluster with Flux.
type gitSource struct {
	t      testing.TB
	ns     string
	git    *gitserver.Server
	url    string
	secret string
}

// newGitSource installs source-controller if needed and starts a Git
// server for a test of ns, with its credentials in a Secret of ns.
func newGitSource(t testing.TB, ns string) *gitSource {
	t.Helper()
	requireSourceController(t)
	password := fmt.Sprintf("flux-pass-%d", time.Now().UnixNano())
	git, err := gitserver.New(t.TempDir(), "flux", password)
	require.NoError(t, err)
	l, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() { _ = git.ServeHTTP(l) }()
	s := &gitSource{t: t, ns: ns, git: git, url: "http://" + l.Addr().String(), secret: "flux-git-auth"}
	require.NoError(t, k8s.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.secret, Namespace: ns},
		StringData: map[string]string{"username": "flux", "password": password},
	}))
	logSourceControllerOnFailure(t, ns)
	return s
}

// logSourceControllerOnFailure logs, when t fails, what source-controller
// said about namespace ns.
func logSourceControllerOnFailure(t testing.TB, ns string) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, line := range strings.Split(readLogs(t, node.PodLogsDir()), "\n") {
				if strings.Contains(line, `"namespace":"`+ns+`"`) {
					t.Log(line)
				}
			}
		}
	})
}

// Publish commits dir as the content of branch main of repository name,
// makes the GitRepository name follow it (creating it, or asking for a
// reconcile as Flux's webhook receivers and `flux reconcile source git`
// do) and waits for source-controller's artifact of the commit. It returns
// the artifact's revision, main@sha1:<commit>.
func (s *gitSource) Publish(ctx context.Context, name, dir string) string {
	s.t.Helper()
	commit, err := s.git.Publish(name, dir)
	require.NoError(s.t, err)
	rev := "main@sha1:" + commit
	repo := &unstructured.Unstructured{}
	repo.SetGroupVersionKind(fluxsource.GroupVersion.WithKind("GitRepository"))
	key := client.ObjectKey{Namespace: s.ns, Name: name}
	switch err := k8s.Get(ctx, key, repo); {
	case apierrors.IsNotFound(err):
		require.NoError(s.t, unstructured.SetNestedField(repo.Object, map[string]any{
			"url":       s.url + "/" + name + ".git",
			"ref":       map[string]any{"branch": "main"},
			"interval":  "1m",
			"timeout":   "30s",
			"secretRef": map[string]any{"name": s.secret},
		}, "spec"))
		repo.SetNamespace(s.ns)
		repo.SetName(name)
		require.NoError(s.t, k8s.Create(ctx, repo))
	case err == nil:
		patch := client.MergeFrom(repo.DeepCopy())
		repo.SetAnnotations(map[string]string{"reconcile.fluxcd.io/requestedAt": time.Now().Format(time.RFC3339Nano)})
		require.NoError(s.t, k8s.Patch(ctx, repo, patch))
	default:
		require.NoError(s.t, err)
	}
	testenv.WaitFor(s.t, k8s, key, repo, 2*time.Minute, 100*time.Millisecond, func(u *unstructured.Unstructured) bool { return sourcecontroller.HasArtifact(u, rev) },
		"source-controller made no artifact of "+rev)
	return rev
}

// TestSourceControllerDeliversToWorkspace: Flux's own source-controller
// clones a Git repository of Terraform configurations, over HTTP with
// credentials from a Secret, from a server on the node's network, and
// serves its artifact at its Service's address; a Workspace whose
// sourceRef is the GitRepository is planned and applied from it. A new
// commit on main then becomes a new artifact revision, which the
// Workspace applies; a commit outside the Workspace's path gives a
// revision it takes without a run (the workspace-controller read the
// artifact from source-controller to know), and a commit to a shared file
// outside the path that the configuration reads by file() is applied with
// the new content.
func TestSourceControllerDeliversToWorkspace(t *testing.T) {
	ctx := context.Background()
	requireSourceController(t)
	ns := newNamespace(t)
	src := newGitSource(t, ns)
	content := t.TempDir()
	app := filepath.Join(content, "app")
	require.NoError(t, os.Mkdir(app, 0o755))
	mainTF, err := os.ReadFile("../testdata/release/main.tf")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.tf"), mainTF, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(app, "shared.tf"), []byte(sharedTF), 0o644))
	shared := func(v string) {
		require.NoError(t, os.MkdirAll(filepath.Join(content, "shared"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(content, "shared", "motd.txt"), []byte(v+"\n"), 0o644))
	}
	shared("hello")
	release := func(v string) string {
		require.NoError(t, os.WriteFile(filepath.Join(app, "release.txt"), []byte(v+"\n"), 0o644))
		return src.Publish(ctx, "infra", content)
	}
	first := release("v1")

	var repo unstructured.Unstructured
	repo.SetGroupVersionKind(fluxsource.GroupVersion.WithKind("GitRepository"))
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "infra"}, &repo))
	var svc corev1.Service
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "source-controller"}, &svc))
	url := fluxsource.ReadArtifact(&repo).URL
	assert.True(t, strings.HasPrefix(url, "http://"+svc.Spec.ClusterIP+":80/gitrepository/"+ns+"/infra/"),
		"source-controller advertises its artifacts at its Service's address: %s", url)

	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Path:      "app",
			Outputs:   &magosv1.OutputsSpec{SecretName: "release-outputs"},
		},
	}
	require.NoError(t, k8s.Create(ctx, ws))
	ws = waitWorkspace(t, ns, "release", 5*time.Minute, "applies the first commit", applied(first))
	assert.NotEmpty(t, ws.Status.Plan.ContentDigest, "the workspace-controller read source-controller's artifact for what the Workspace reads")
	assertOutput(t, ns, "release-outputs", "release", ":v1")
	assertOutput(t, ns, "release-outputs", "motd", "hello")

	// A new commit on main.
	committed := time.Now()
	second := release("v2")
	t.Logf("realnode: source-controller made the new commit's artifact %s after the commit", time.Since(committed).Round(time.Millisecond))
	ws = waitWorkspace(t, ns, "release", 5*time.Minute, "applies the second commit", applied(second))
	t.Logf("realnode: the Workspace applied the new commit %s after the commit", time.Since(committed).Round(time.Millisecond))
	assert.Equal(t, second, ws.Status.LastApplied.Revision)
	assertOutput(t, ns, "release-outputs", "release", ":v2")

	// A commit outside the Workspace's path.
	runs := ws.Status.Runs
	require.NoError(t, os.WriteFile(filepath.Join(content, "README.md"), []byte("# infra\n"), 0o644))
	third := src.Publish(ctx, "infra", content)
	ws = waitWorkspace(t, ns, "release", 5*time.Minute, "takes the README commit without a run", applied(third))
	assert.Equal(t, runs, ws.Status.Runs, "no run for a commit that changes nothing the Workspace reads")
	assert.Equal(t, second, ws.Status.Plan.PlannedRevision)

	// A commit to a shared file outside the path that the configuration
	// reads: applied, with the new content.
	shared("goodbye")
	fourth := src.Publish(ctx, "infra", content)
	ws = waitWorkspace(t, ns, "release", 5*time.Minute, "applies the commit to the shared file it reads", applied(fourth))
	assert.Greater(t, ws.Status.Runs, runs, "the shared file's commit is planned")
	assert.Empty(t, ws.Status.Plan.PlannedRevision, "by a plan of its own revision")
	assertOutput(t, ns, "release-outputs", "motd", "goodbye")
}

// sharedTF reads a file outside the Workspace's path.
const sharedTF = `resource "terraform_data" "motd" {
  input = trimspace(file("${path.module}/../shared/motd.txt"))
}

output "motd" {
  value = terraform_data.motd.output
}
`

// assertOutput checks an output in a Workspace's outputs Secret.
func assertOutput(t *testing.T, ns, secret, name, want string) {
	t.Helper()
	var outputs corev1.Secret
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secret}, &outputs))
	assert.Equal(t, want, string(outputs.Data[name]), "output %s", name)
}
