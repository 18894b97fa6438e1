package testenv

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// StartManager runs controllers in-process against the control plane: a
// manager with scheme whose cache sees only namespace, no metrics or probe
// listeners and no leader election, with the reconcilers register adds.
// It returns a function that stops the manager and waits for it; the
// manager is also stopped when the test ends. Several managers may run in
// one process (controller name validation is off), so a test can restart
// its controllers.
func (e *Environment) StartManager(t testing.TB, scheme *runtime.Scheme, namespace string, register func(ctrl.Manager) error) (stop func()) {
	t.Helper()
	return e.StartManagerIn(t, scheme, []string{namespace}, register)
}

// StartManagerIn is StartManager with a cache that sees several namespaces.
func (e *Environment) StartManagerIn(t testing.TB, scheme *runtime.Scheme, namespaces []string, register func(ctrl.Manager) error) (stop func()) {
	t.Helper()
	watched := map[string]cache.Config{}
	for _, ns := range namespaces {
		watched[ns] = cache.Config{}
	}
	return e.StartManagerWithCache(t, scheme, cache.Options{DefaultNamespaces: watched}, register)
}

// StartManagerWithCache is StartManager with the cache options given: the
// namespaces it sees and per-kind filters (such as a shard's label
// selector).
func (e *Environment) StartManagerWithCache(t testing.TB, scheme *runtime.Scheme, cacheOpts cache.Options, register func(ctrl.Manager) error) (stop func()) {
	t.Helper()
	return e.StartManagerWithOptions(t, ctrl.Options{Scheme: scheme, Cache: cacheOpts}, register)
}

// StartManagerWithOptions is StartManager with the manager's scheme, cache
// and RESTMapper as opts sets them (as a controller binary sets them); the
// listeners, leader election and name validation are the test's.
func (e *Environment) StartManagerWithOptions(t testing.TB, opts ctrl.Options, register func(ctrl.Manager) error) (stop func()) {
	t.Helper()
	e.Require(t)
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 opts.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  opts.Cache,
		MapperProvider:         opts.MapperProvider,
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	if err := register(mgr); err != nil {
		t.Fatalf("registering controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Logf("manager stopped: %v", err)
		}
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}
