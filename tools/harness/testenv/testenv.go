package testenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Environment is a running local control plane.
type Environment struct {
	env *envtest.Environment
	// Root is the repository root.
	Root string
	// Config reaches the apiserver as a cluster admin.
	Config *rest.Config
	// Client is an admin client with the Magos scheme.
	Client client.Client
	// Kubeconfig is the path of an admin kubeconfig file for processes.
	Kubeconfig string

	mu      sync.Mutex
	atStops []func()
}

// Main starts the environment, runs the package's tests and stops it; use it
// as the body of TestMain. It exits the process.
//
// With -short (`make test-unit`) it starts nothing and *env stays nil: the
// pure tests run, and every test that needs the environment skips through
// Require (NewNamespace and StartManager call it). Without -short a control
// plane that cannot start fails the package, as before.
func Main(m *testing.M, env **Environment) {
	os.Exit(Run(m, env))
}

// Run is Main without the exit: it returns the tests' exit code, so that
// TestMain can clean up what it set up before the environment.
func Run(m *testing.M, env **Environment) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		return m.Run()
	}
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
	}
	return code
}

// KubeAssetsEnv names a directory whose kube-apiserver replaces the one in
// bin/k8s (etcd still comes from bin/k8s): `make test-compat` points it at
// the next Kubernetes minor.
const KubeAssetsEnv = "MAGOS_KUBE_APISERVER_DIR"

// Start boots kube-apiserver and etcd from bin/k8s (or the kube-apiserver
// of $MAGOS_KUBE_APISERVER_DIR) and installs the CRDs.
func Start() (*Environment, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets := filepath.Join(root, "bin", "k8s")
	apiserverDir := assets
	if dir := os.Getenv(KubeAssetsEnv); dir != "" {
		apiserverDir = dir
	}
	for _, b := range []string{filepath.Join(apiserverDir, "kube-apiserver"), filepath.Join(assets, "etcd")} {
		if _, err := os.Stat(b); err != nil {
			return nil, fmt.Errorf("%s not found: run `make tools` first", b)
		}
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		ControlPlane: envtest.ControlPlane{
			APIServer: &envtest.APIServer{Path: filepath.Join(apiserverDir, "kube-apiserver")},
		},
		CRDDirectoryPaths: []string{
			filepath.Join(root, "charts", "magos-crds", "crds"),
			filepath.Join(root, "tools", "testdata", "crds", "flux"),
			filepath.Join(root, "tools", "testdata", "crds", "kyverno"),
		},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	e := &Environment{env: te, Root: root, Config: cfg}
	if e.Client, err = client.New(cfg, client.Options{Scheme: Scheme()}); err != nil {
		return nil, errors.Join(err, te.Stop())
	}
	if e.Kubeconfig, err = e.writeKubeconfig(); err != nil {
		return nil, errors.Join(err, te.Stop())
	}
	return e, nil
}

// AtStop registers f to run when the environment stops, before the
// control plane does: for processes the package's tests share, such as
// Flux's source-controller. The last registered runs first.
func (e *Environment) AtStop(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.atStops = append(e.atStops, f)
}

// Stop shuts the control plane down.
func (e *Environment) Stop() error {
	e.mu.Lock()
	atStops := e.atStops
	e.atStops = nil
	e.mu.Unlock()
	for i := len(atStops) - 1; i >= 0; i-- {
		atStops[i]()
	}
	_ = os.Remove(e.Kubeconfig)
	return e.env.Stop()
}

// Require skips t when the environment was not started (-short, `make
// test-unit`). It is safe on a nil *Environment; call it first in a test
// that reads e before NewNamespace or StartManager.
func (e *Environment) Require(t testing.TB) {
	t.Helper()
	if e == nil {
		t.Skip("needs the local control plane, not started with -short: run `make test`")
	}
}

// NewNamespace creates a namespace for one test and deletes it afterwards.
// It skips t when the environment was not started (see Require).
func (e *Environment) NewNamespace(t testing.TB) string {
	t.Helper()
	e.Require(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Client.Delete(ctx, ns)
	})
	return ns.Name
}

// writeKubeconfig writes an admin kubeconfig for child processes.
func (e *Environment) writeKubeconfig() (string, error) {
	user, err := e.env.AddUser(envtest.User{Name: "magos-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "magos-kubeconfig-*")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// RepoRoot finds the repository root: the nearest parent holding go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.work) not found above the working directory")
		}
		dir = parent
	}
}

// Scheme holds the core, Magos and Flux source types.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(magosv1.AddToScheme(s))
	utilruntime.Must(sourcev1.AddToScheme(s))
	return s
}
