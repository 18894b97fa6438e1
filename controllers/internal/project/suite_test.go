package project

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// startController runs the project-controller in-process, watching only
// namespace ns, until the test ends.
func startController(t testing.TB, ns string) {
	t.Helper()
	env.StartManager(t, setup.Scheme(), ns, func(mgr ctrl.Manager) error {
		return Register(mgr, setup.Options{WatchNamespaces: []string{ns}, Concurrency: 2})
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", controllerLogs.String())
		}
	})
}

// eventually polls until cond holds for the Project ns/name at its current generation.
func eventually(t testing.TB, ns, name string, cond func(*magosv1.Project) bool, msg string) *magosv1.Project {
	t.Helper()
	return testenv.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, &magosv1.Project{}, 30*time.Second, 100*time.Millisecond,
		func(p *magosv1.Project) bool { return p.Status.ObservedGeneration == p.Generation && cond(p) }, msg)
}

func conditionIs(t string, s metav1.ConditionStatus) func(*magosv1.Project) bool {
	return func(p *magosv1.Project) bool {
		c := conditions.Get(p, t)
		return c != nil && c.Status == s
	}
}

func createProject(t testing.TB, ns, name string, spec magosv1.ProjectSpec) {
	t.Helper()
	require.NoError(t, env.Client.Create(context.Background(),
		&magosv1.Project{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}))
}

// controllerLogs collects what the in-process controllers log; a failed
// test prints it.
var controllerLogs = &testenv.LogBuffer{}

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(controllerLogs), zap.UseDevMode(true)))
}
