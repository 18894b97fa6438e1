package statebackend_test

import (
	"io"
	"log/slog"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/magos-dev/magos/runner/internal/kube"
	"github.com/magos-dev/magos/runner/internal/statebackend"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const workspace = "web"

// newStore returns a Store for workspace in a fresh namespace.
func newStore(t *testing.T) (*statebackend.Store, kubernetes.Interface, string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(kube.Tune(env.Config))
	if err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t)
	return &statebackend.Store{
		Secrets:     cs.CoreV1().Secrets(ns),
		Leases:      cs.CoordinationV1().Leases(ns),
		Workspace:   workspace,
		StateSecret: "tfstate-default-" + workspace,
		LockLease:   "lock-tfstate-default-" + workspace,
	}, cs, ns
}

// startServer serves store until the test ends.
func startServer(t *testing.T, store *statebackend.Store) *statebackend.Server {
	t.Helper()
	srv, err := statebackend.Start(store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}
