package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// buildRunner builds the runner binary into a temporary directory.
func buildRunner(t *testing.T) string {
	t.Helper()
	env.Require(t)
	bin := filepath.Join(t.TempDir(), "runner")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(env.Root, "runner")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building the runner: %s", out)
	return bin
}

// reserve creates what the workspace-controller creates before a run, as
// the runner may not create Secrets or Leases: the state Secret, the lock
// Lease, DefaultPlanChunks plan Secrets and, unless outputs is "", the
// outputs Secret.
func reserve(t *testing.T, ns, ws, uid, outputs string) {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	owner := planstore.WorkspaceOwner(ws, uid)
	owned := metav1.ObjectMeta{
		Labels:          map[string]string{magosv1.WorkspaceLabel: ws, magosv1.ManagedByLabel: magosv1.ManagedByValue},
		OwnerReferences: []metav1.OwnerReference{owner},
	}
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: magosv1.StateSecretName(ws), Labels: magosv1.StateSecretLabels(ws)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	lease := &coordinationv1.Lease{ObjectMeta: *owned.DeepCopy()}
	lease.Name = magosv1.LockLeaseName(ws)
	_, err = cs.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{})
	require.NoError(t, err)
	for i := range magosv1.DefaultPlanChunks {
		_, err = cs.CoreV1().Secrets(ns).Create(ctx, planstore.EmptyChunk(ws, i, owner), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	if outputs != "" {
		out := &corev1.Secret{ObjectMeta: *owned.DeepCopy()}
		out.Name = outputs
		_, err = cs.CoreV1().Secrets(ns).Create(ctx, out, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// versionsDir is where `make tools` puts the engines.
func versionsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(env.Root, "bin", "engines")
	if _, err := os.Stat(filepath.Join(dir, "opentofu", "1.10.6", "tofu")); err != nil {
		t.Fatalf("OpenTofu 1.10.6 not found in %s: run `make tools`", dir)
	}
	return dir
}

// tarGz packs files (path → content) into a gzip'd tar.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}
		if strings.HasSuffix(n, "/") {
			hdr = &tar.Header{Name: n, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		require.NoError(t, tw.WriteHeader(hdr))
		_, err := tw.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// bundleDigest is the bundle digest of the Workspace's stored plan, as the
// workspace-controller records it when the plan run ends ("" when none is
// readable).
func bundleDigest(t *testing.T, ns, ws string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	meta, err := planstore.Inspect(context.Background(), cs.CoreV1().Secrets(ns), ws, func(io.Reader) error { return nil })
	if err != nil {
		return ""
	}
	return meta.SHA256
}

// serve serves data as an artifact on loopback until the test ends and
// returns its URL and digest.
func serve(t *testing.T, data []byte) (string, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/artifact.tar.gz", sha256Digest(data)
}

// execution is what one runner process did.
type execution struct {
	code   int
	result magosv1.RunResult
	// raw is the termination message as written.
	raw string
	// output is stdout and stderr together.
	output string
}

// runRunner runs the runner binary for phase with exactly vars as its
// environment (plus PATH), as the Job's container would get it.
func runRunner(t *testing.T, bin, phase string, vars map[string]string) execution {
	t.Helper()
	// As in the Job's Pod: the work directory is inside an empty emptyDir.
	workDir := filepath.Join(t.TempDir(), "magos")
	termination := filepath.Join(t.TempDir(), "termination-log")
	cmd := exec.Command(bin, phase)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		magosv1.EnvWorkDir + "=" + workDir,
		magosv1.EnvTerminationMessage + "=" + termination,
	}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running the runner: %v", err)
	}
	e := execution{code: cmd.ProcessState.ExitCode(), output: out.String()}
	raw, err := os.ReadFile(termination)
	require.NoError(t, err, "the runner must always write its result; output:\n%s", e.output)
	e.raw = string(raw)
	require.LessOrEqual(t, len(raw), 4096)
	require.NoError(t, json.Unmarshal(raw, &e.result), "result: %s", raw)
	return e
}
