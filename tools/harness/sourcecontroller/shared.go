package sourcecontroller

import (
	"os"
	"sync"
	"testing"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// shared are the instances of a test binary, by digest algorithm.
var shared struct {
	sync.Mutex
	byAlgorithm map[string]*Controller
}

// Shared is the test binary's instance for a digest algorithm (empty:
// sha256) on env, started on first use and stopped with env. The sha256
// instance reconciles every GitRepository without the sharding label;
// another algorithm's only those labelled with the algorithm, which its
// Publish creates. Its log goes to the test binary's stderr when
// MAGOS_SOURCE_CONTROLLER_LOG is set.
func Shared(t testing.TB, env *testenv.Environment, algorithm string) *Controller {
	t.Helper()
	env.Require(t)
	if algorithm == "" {
		algorithm = "sha256"
	}
	shared.Lock()
	defer shared.Unlock()
	if c := shared.byAlgorithm[algorithm]; c != nil {
		return c
	}
	opts := Options{Kubeconfig: env.Kubeconfig, DigestAlgorithm: algorithm}
	if algorithm != "sha256" {
		opts.Shard = algorithm
	}
	if os.Getenv("MAGOS_SOURCE_CONTROLLER_LOG") != "" {
		opts.Log = os.Stderr
	}
	c, err := Start(opts)
	if err != nil {
		t.Fatalf("starting Flux's source-controller: %v", err)
	}
	if shared.byAlgorithm == nil {
		shared.byAlgorithm = map[string]*Controller{}
	}
	shared.byAlgorithm[algorithm] = c
	env.AtStop(func() {
		shared.Lock()
		delete(shared.byAlgorithm, algorithm)
		shared.Unlock()
		_ = c.Stop()
	})
	return c
}
