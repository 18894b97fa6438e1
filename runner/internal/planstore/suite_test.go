package planstore_test

import (
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/magos-dev/magos/runner/internal/kube"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// clientset returns a clientset set up as the runner's.
func clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	env.Require(t)
	cs, err := kubernetes.NewForConfig(kube.Tune(env.Config))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
