package realnode

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// TestInstallFromAReleaseInAPrivateRegistry: the output of `make release`
// pushed to a registry on the node's network that admits no anonymous
// pull, installed with Helm from that registry as docs/installation.md
// says (charts from OCI, global.image.repository, a pull Secret for the
// controllers and runner.imagePullSecrets for the runners): the
// controllers and a Workspace's runner and engine images are pulled from
// it with the Secret, and the Workspace applies; in a namespace without the
// Secret the run says it could not pull. The install is then rolled back to
// the tier's own.
func TestInstallFromAReleaseInAPrivateRegistry(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	root, version, release := releaseDir(t)
	images, _ := filepath.Glob(filepath.Join(release, "images", "*.tar"))
	charts, _ := filepath.Glob(filepath.Join(release, "charts", "*.tgz"))

	// The registry: every request needs the pull user's password.
	const user = "puller"
	password := rand.Text()
	reg := newPrivateRegistry(t, user, password)
	require.NoError(t, node.PlainHTTPRegistry(reg.host))
	repository := reg.host + "/magos"
	dockerConfig := writeDockerConfig(t, reg.host, user, password)

	push := append([]string{"push", "-registry", repository, "-plain-http", "-helm", filepath.Join(root, "bin", "helm")}, chartArgs(charts)...)
	cmd := node.Command(filepath.Join(root, "bin", "magos-image"), append(push, images...)...)
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+filepath.Dir(dockerConfig))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "pushing the release: %s", out)
	require.Positive(t, reg.refused(), "the registry refuses a client without credentials")

	// The pull Secret, in the controllers' namespace and in the tenant's.
	ns := newNamespace(t)
	bare := newNamespace(t)
	for _, n := range []string{magosNamespace, ns} {
		createPullSecret(t, n, "registry-pull", reg.host, user, password)
	}
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-pull", Namespace: magosNamespace}})
	})

	values := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(values, []byte(`global:
  image:
    repository: `+repository+`
    pullPolicy: IfNotPresent
  imagePullSecrets:
    - name: registry-pull
workspace-controller:
  runner:
    imagePullSecrets: [registry-pull]
  guards:
    allowedRunnerImages: ["{repository}/*:*", "magos.test/*:*"]
`), 0o600))
	helmOCI := []string{"--version", version, "--plain-http", "--registry-config", dockerConfig}
	t.Cleanup(func() {
		// Back to the tier's own install (its images imported, never
		// pulled) for the tests after this one.
		if _, err := runHelm(root, "rollback", "magos", "0", "--namespace", magosNamespace, "--wait", "--timeout", "5m"); err != nil {
			t.Errorf("rolling back: %v", err)
		}
	})
	_, err = runHelm(root, append([]string{"upgrade", "magos-crds", "oci://" + repository + "/charts/magos-crds", "--wait"}, helmOCI...)...)
	require.NoError(t, err)
	_, err = runHelm(root, append([]string{"upgrade", "magos", "oci://" + repository + "/charts/magos", "--namespace", magosNamespace,
		"--reuse-values", "--values", values, "--wait", "--timeout", "5m"}, helmOCI...)...)
	if err != nil {
		t.Fatalf("installing from the registry: %v\n%v", err, describePods(magosNamespace))
	}

	for _, name := range controllerNames {
		var d appsv1.Deployment
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: magosNamespace, Name: "magos-" + name + "-controller"}, &d))
		image := d.Spec.Template.Spec.Containers[0].Image
		assert.Equal(t, repository+"/"+name+"-controller:"+version, image, "the %s-controller's image comes from the registry", name)
		assert.Equal(t, int32(1), d.Status.UpdatedReplicas, "the %s-controller runs its registry image", name)
		assert.Positive(t, reg.pulls(name+"-controller"), "the node pulled the %s-controller's image with the Secret", name)
	}

	// A tenant namespace without the Secret pulls anonymously, which the
	// registry refuses: the Workspace says so instead of waiting, and the
	// release's pre-flight check (which pulls the run images in a Pod as a
	// run does) fails with what to do. (First: once the node has the
	// images, this node uses them without checking credentials.)
	cli := filepath.Join(release, "cli", "kubectl-magos_"+version+"_"+runtime.GOOS+"_"+runtime.GOARCH)
	printed, err := releaseCLI(cli, "version")
	require.NoError(t, err, "%s", printed)
	assert.Contains(t, printed, version)
	other := newGitSource(t, bare)
	other.Publish(ctx, "infra", "../testdata/hello")
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: bare},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Vars:      []magosv1.Variable{{Name: "secret_word", Value: new("registry")}},
		},
	}))
	ws := waitWorkspace(t, bare, "hello", 5*time.Minute, "says its runner could not pull", func(ws *magosv1.Workspace) bool {
		return readyCondition(ws).Reason == magosv1.ReasonImagePullFailed
	})
	t.Logf("without the Secret: %s", readyCondition(ws).Message)
	check, err := releaseCLI(cli, "check", "--images", "-n", bare)
	require.Error(t, err, "kubectl magos check --images fails where runs cannot pull: %s", check)
	assert.Regexp(t, `fail\s+engine image \(opentofu 1\.10\.6\)\s+.*401 Unauthorized`, check)
	assert.Contains(t, check, "create the pull Secret in "+bare+" and name it in runner.imagePullSecrets (now: registry-pull)", "it says what to do")
	var left corev1.PodList
	require.NoError(t, k8s.List(ctx, &left, client.InNamespace(bare), client.MatchingLabels{"app.kubernetes.io/name": "magos-check"}))
	for _, p := range left.Items {
		assert.NotNil(t, p.DeletionTimestamp, "the check deletes its Pod %s", p.Name)
	}

	// With the Secret, the check passes and the Workspace applies with the
	// images from the registry.
	src := newGitSource(t, ns)
	rev := src.Publish(ctx, "infra", "../testdata/hello")
	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Vars:      []magosv1.Variable{{Name: "secret_word", Value: new("registry")}},
		},
	}))
	waitWorkspace(t, ns, "hello", 5*time.Minute, "applies with images from the registry", applied(rev))
	var pods corev1.PodList
	require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(ns), client.HasLabels{"batch.kubernetes.io/job-name"}))
	require.NotEmpty(t, pods.Items)
	for _, p := range pods.Items {
		assert.Equal(t, []corev1.LocalObjectReference{{Name: "registry-pull"}}, p.Spec.ImagePullSecrets, "run Pod %s pulls with the chart's Secret", p.Name)
		assert.Equal(t, repository+"/magos-engine-opentofu:1.10.6", p.Spec.InitContainers[0].Image, "the engine image follows global.image.repository")
		assert.Equal(t, repository+"/magos-runner:"+version, p.Spec.Containers[0].Image, "the runner image follows global.image.repository")
	}
	assert.Positive(t, reg.pulls("magos-runner"), "the runner image was pulled from the registry")
	assert.Positive(t, reg.pulls("magos-engine-opentofu"), "the engine image was pulled from the registry")

	check, err = releaseCLI(cli, "check", "--images", "-n", ns)
	require.NoError(t, err, "kubectl magos check --images in a namespace with the pull Secret: %s", check)
	assert.Regexp(t, `ok\s+engine image \(opentofu 1\.10\.6\)\s+`+regexp.QuoteMeta(repository)+`/magos-engine-opentofu:1\.10\.6 pulled in `+ns, check)
	assert.Regexp(t, `ok\s+runner image\s+`+regexp.QuoteMeta(repository)+`/magos-runner:`, check)
	assert.Regexp(t, `ok\s+artifact path\s+a runner in `+ns+` reaches the artifact proxy`, check)
}

// releaseDir is the release `make test` wrote for this version
// ($MAGOS_RELEASE_DIR, else bin/release/<version>), with the repository's
// root and the version; t fails without one.
func releaseDir(t *testing.T) (root, version, dir string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	version = mustVersion(t)
	dir = os.Getenv("MAGOS_RELEASE_DIR")
	if dir == "" {
		dir = filepath.Join(root, "bin", "release", version)
	}
	images, _ := filepath.Glob(filepath.Join(dir, "images", "*.tar"))
	charts, _ := filepath.Glob(filepath.Join(dir, "charts", "*.tgz"))
	if _, err := os.Stat(filepath.Join(dir, "manifests", "magos.yaml")); err != nil || len(images) < 7 || len(charts) != 2 {
		t.Fatalf("%s is not a whole release (%d image archives, %d charts, manifests: %v): run `make release VERSION=%s`", dir, len(images), len(charts), err, version)
	}
	return root, version, dir
}

// releaseCLI runs a release's kubectl-magos in the node's network
// namespace against its apiserver.
func releaseCLI(cli string, args ...string) (string, error) {
	out, err := node.Command(cli, append(args, "--kubeconfig", node.Kubeconfig)...).CombinedOutput()
	return string(out), err
}

// privateRegistry is an OCI registry on the node's network that refuses
// every request without its one user's password, and counts the manifest
// reads of each repository.
type privateRegistry struct {
	host string

	mu        sync.Mutex
	manifests map[string]int
	anonymous int
}

func newPrivateRegistry(t *testing.T, user, password string) *privateRegistry {
	l, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	r := &privateRegistry{host: l.Addr().String(), manifests: map[string]int{}}
	serve := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != user || p != password {
			r.mu.Lock()
			r.anonymous++
			r.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Basic realm="magos-test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if repo, _, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, "/v2/"), "/manifests/"); ok && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
			r.mu.Lock()
			r.manifests[repo]++
			r.mu.Unlock()
		}
		serve.ServeHTTP(w, req)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

// pulls counts the authenticated manifest reads of magos/<image>.
func (r *privateRegistry) pulls(image string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.manifests["magos/"+image]
}

// refused counts the requests refused for want of credentials.
func (r *privateRegistry) refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.anonymous
}

// dockerConfigJSON is a Docker config with one registry's credentials, as
// `docker login` writes it and a kubernetes.io/dockerconfigjson Secret
// holds it.
func dockerConfigJSON(t *testing.T, host, user, password string) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	b, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"username": user, "password": password, "auth": auth}}})
	require.NoError(t, err)
	return b
}

// writeDockerConfig writes the credentials for magos-image and helm.
func writeDockerConfig(t *testing.T, host, user, password string) string {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, dockerConfigJSON(t, host, user, password), 0o600))
	return path
}

func createPullSecret(t *testing.T, ns, name, host, user, password string) {
	require.NoError(t, k8s.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: dockerConfigJSON(t, host, user, password)},
	}))
}

func chartArgs(charts []string) []string {
	var args []string
	for _, c := range charts {
		args = append(args, "-chart", c)
	}
	return args
}
