package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A Workspace with its own backend block uses it instead of the runner's
// state server: the state Secret and Lease are not touched.
func TestRunnerUsesTheWorkspaceBackend(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	bin := buildRunner(t)
	ns := env.NewNamespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	url, digest := serve(t, tarGz(t, map[string]string{
		"main.tf": `resource "terraform_data" "a" { input = "a" }`,
	}))
	reserve(t, ns, "web", "6f1e0f2c-0c1b-4f57-9a51-5f0e8c1d2a3b", "")
	statePath := filepath.Join(t.TempDir(), "user.tfstate")
	backendFile := filepath.Join(t.TempDir(), "backend.tf")
	require.NoError(t, os.WriteFile(backendFile, []byte("backend \"local\" {\n  path = \""+statePath+"\"\n}\n"), 0o600))
	vars := func(planDigest string) map[string]string {
		bundle := ""
		if planDigest != "" {
			bundle = bundleDigest(t, ns, "web")
		}
		return map[string]string{
			magosv1.EnvPlanBundleDigest: bundle,
			"KUBECONFIG":                env.Kubeconfig,
			magosv1.EnvNamespace:        ns,
			magosv1.EnvWorkspace:        "web",
			magosv1.EnvWorkspaceUID:     "6f1e0f2c-0c1b-4f57-9a51-5f0e8c1d2a3b",
			magosv1.EnvArtifactURL:      url,
			magosv1.EnvArtifactDigest:   digest,
			magosv1.EnvEngine:           "opentofu",
			magosv1.EnvEngineVersion:    "1.10.6",
			magosv1.EnvVersionsDir:      versionsDir(t),
			magosv1.EnvPlanID:           "plan-1",
			magosv1.EnvPlanDigest:       planDigest,
			magosv1.EnvBackendConfig:    backendFile,
		}
	}
	plan := runRunner(t, bin, magosv1.RunPlan, vars(""))
	require.Equal(t, 0, plan.code, plan.output)
	assert.Equal(t, int32(1), plan.result.Add)

	apply := runRunner(t, bin, magosv1.RunApply, vars(plan.result.PlanDigest))
	require.Equal(t, 0, apply.code, apply.output)
	state, err := os.ReadFile(statePath)
	require.NoError(t, err)
	assert.Contains(t, string(state), `"terraform_data"`)

	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, magosv1.StateSecretName("web"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, sec.Data, "no state in the state Secret")
	lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, magosv1.LockLeaseName("web"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, lease.Spec.HolderIdentity, "the lock Lease was not taken")
	assert.Empty(t, lease.Annotations, "no lock info")
}
