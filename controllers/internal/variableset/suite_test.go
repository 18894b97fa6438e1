package variableset

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// controllerLogs collects every log line the in-process controllers write,
// at debug level (V(1)), so tests can assert what never appears in them.
var controllerLogs = &testenv.LogBuffer{}

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(controllerLogs), zap.UseDevMode(true)))
}

// startController runs the variableset-controller in-process, watching only
// namespace ns, until the test ends.
func startController(t testing.TB, ns string) {
	t.Helper()
	env.StartManager(t, setup.Scheme(), ns, func(mgr ctrl.Manager) error {
		return Register(mgr, setup.Options{WatchNamespaces: []string{ns}, Concurrency: 4})
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", controllerLogs.String())
		}
	})
}

// eventually polls until cond holds for the VariableSet ns/name.
func eventually(t testing.TB, ns, name string, cond func(*magosv1.VariableSet) bool, msg string) *magosv1.VariableSet {
	t.Helper()
	return testenv.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, &magosv1.VariableSet{}, 30*time.Second, 100*time.Millisecond,
		func(vs *magosv1.VariableSet) bool { return vs.Status.ObservedGeneration == vs.Generation && cond(vs) }, msg)
}

// readyIs reports whether Ready has status s (and reason, if not empty).
func readyIs(s metav1.ConditionStatus, reason string) func(*magosv1.VariableSet) bool {
	return func(vs *magosv1.VariableSet) bool {
		c := conditions.Get(vs, magosv1.ReadyCondition)
		return c != nil && c.Status == s && (reason == "" || c.Reason == reason)
	}
}

func createSecret(t testing.TB, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	require.NoError(t, env.Client.Create(context.Background(), s))
	return s
}

func createConfigMap(t testing.TB, ns, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	require.NoError(t, env.Client.Create(context.Background(), cm))
	return cm
}

func createVariableSet(t testing.TB, ns, name string, spec magosv1.VariableSetSpec) {
	t.Helper()
	vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	require.NoError(t, env.Client.Create(context.Background(), vs))
}

func findEnv(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}
