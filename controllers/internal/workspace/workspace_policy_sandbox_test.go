package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/magos-dev/magos/controllers/internal/metrics/metricstest"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// The policy engine evaluates policies over plans config code shapes, in
// the workspace-controller's container, beside its ServiceAccount token.
// Its Landlock sandbox takes less on older kernels (no TCP before Linux
// 6.7, nothing before 5.13) and nothing from a build with cgo: the
// controller asks the engine at start, exports what it got
// (magos_policy_sandbox_enforced) and refuses to start with less unless
// the admin allows it (--allow-incomplete-policy-sandbox).
func TestWorkspaceControllerRefusesAnIncompletePolicySandbox(t *testing.T) {
	env.Require(t)
	filesOnly := fakeEngine(t, `{"sandbox":{"files":true,"network":false,"missing":"Landlock ABI 3 cannot restrict TCP (ABI 4, Linux 6.7)"}}`)
	register := func(enginePath string, allowIncomplete bool) error {
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: setup.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
		require.NoError(t, err)
		c := workspace.NewController()
		c.Options = (&fixture{t: t}).options()
		c.Options.PolicyEnginePath, c.Options.AllowIncompletePolicySandbox = enginePath, allowIncomplete
		return c.Register(mgr, setup.Options{WatchNamespaces: []string{"default"}, Concurrency: 1})
	}
	enforced := func(restriction string) float64 {
		n, v := metricstest.Sum(t, "magos_policy_sandbox_enforced", map[string]string{"restriction": restriction})
		require.Equal(t, 1, n, "one series for %s", restriction)
		return v
	}

	err := register(filesOnly, false)
	require.Error(t, err, "an engine that can still reach the network is refused")
	assert.ErrorContains(t, err, "Landlock ABI 3 cannot restrict TCP")
	assert.ErrorContains(t, err, "--allow-incomplete-policy-sandbox")
	assert.Equal(t, 1.0, enforced("files"))
	assert.Equal(t, 0.0, enforced("network"))

	require.NoError(t, register(filesOnly, true), "the admin may allow it; the metric says what is missing")
	assert.Equal(t, 0.0, enforced("network"))

	err = register(filepath.Join(t.TempDir(), "no-engine"), false)
	assert.ErrorContains(t, err, "its sandbox cannot be checked", "an engine that cannot say is refused")
	assert.Equal(t, 0.0, enforced("files"))

	require.NoError(t, register(testenv.PolicyEngine.Build(t), false), "the real engine sandboxes itself fully on this kernel")
	assert.Equal(t, 1.0, enforced("files"))
	assert.Equal(t, 1.0, enforced("network"))
}

// fakeEngine is a policy engine that reports report as its sandbox.
func fakeEngine(t *testing.T, report string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy-engine")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n[ \"$1\" = sandbox-status ] || exit 2\necho '"+report+"'\n"), 0o755))
	return path
}
