package statebackend_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"

	"github.com/magos-dev/magos/runner/internal/kube"
	"github.com/magos-dev/magos/runner/internal/statebackend"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const workspace = "web"

// newStore returns a Store for workspace in a fresh namespace, with the
// empty state Secret and free lock Lease the workspace-controller creates
// before a run.
func newStore(t *testing.T) (*statebackend.Store, kubernetes.Interface, string) {
	t.Helper()
	store, cs, ns := newUnreservedStore(t)
	ctx := context.Background()
	labels := magosv1.StateSecretLabels(workspace)
	_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: store.StateSecret, Labels: labels}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: store.LockLease, Labels: labels}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return store, cs, ns
}

// newUnreservedStore is newStore without the state Secret and lock Lease.
func newUnreservedStore(t *testing.T) (*statebackend.Store, kubernetes.Interface, string) {
	t.Helper()
	env.Require(t)
	cs, err := kubernetes.NewForConfig(kube.Tune(env.Config))
	require.NoError(t, err)
	ns := env.NewNamespace(t)
	return &statebackend.Store{
		Secrets:     cs.CoreV1().Secrets(ns),
		Leases:      cs.CoordinationV1().Leases(ns),
		Workspace:   workspace,
		StateSecret: magosv1.StateSecretName(workspace),
		LockLease:   magosv1.LockLeaseName(workspace),
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
