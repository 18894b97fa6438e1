package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// plantedState is state a configuration's author ships as errored.tfstate:
// were it taken for the state the engine could not write back, the run
// would save it for the operator to restore.
const plantedState = `{"version":4,"terraform_version":"1.10.6","serial":99,"lineage":"planted","outputs":{},"resources":[{"mode":"managed","type":"terraform_data","name":"planted","provider":"provider[\"terraform.io/builtin/terraform\"]","instances":[{"schema_version":0,"attributes":{"id":"planted","input":null,"output":null,"triggers_replace":null}}]}]}`

// TestPlantedErroredStateIsNotTakenForTheEngines: after a failed apply
// the runner saves the engine's errored.tfstate, the state it could not
// write back. One that came with the artifact is removed before the engine
// runs, so an apply that fails on its own is reported as it failed, and
// nothing the author planted is saved as state to restore.
func TestPlantedErroredStateIsNotTakenForTheEngines(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	bin := buildRunner(t)
	ns := env.NewNamespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	url, digest := serve(t, tarGz(t, map[string]string{
		"main.tf": `resource "terraform_data" "fails" {
  provisioner "local-exec" {
    command = "exit 3"
  }
}
`,
		"errored.tfstate": plantedState,
	}))
	const ws, uid = "planted", "0b7c2f61-6a1e-4c2d-9a0e-2f5b8d1c3e4f"
	reserve(t, ns, ws, uid, "")
	errored := magosv1.ErroredStateSecretName(ws)
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: errored}}, metav1.CreateOptions{})
	require.NoError(t, err)
	vars := func(planID, planDigest, bundle string) map[string]string {
		return map[string]string{
			"KUBECONFIG":                env.Kubeconfig,
			magosv1.EnvNamespace:        ns,
			magosv1.EnvWorkspace:        ws,
			magosv1.EnvWorkspaceUID:     uid,
			magosv1.EnvRunID:            "run-" + planID,
			magosv1.EnvArtifactURL:      url,
			magosv1.EnvArtifactDigest:   digest,
			magosv1.EnvRevision:         "main@sha1:0123abcd",
			magosv1.EnvEngine:           "opentofu",
			magosv1.EnvEngineVersion:    "1.10.6",
			magosv1.EnvVersionsDir:      versionsDir(t),
			magosv1.EnvPlanID:           planID,
			magosv1.EnvPlanDigest:       planDigest,
			magosv1.EnvPlanBundleDigest: bundle,
			magosv1.EnvStateSecret:      magosv1.StateSecretName(ws),
			magosv1.EnvLockLease:        magosv1.LockLeaseName(ws),
			magosv1.EnvErroredState:     errored,
		}
	}

	plan := runRunner(t, bin, magosv1.RunPlan, vars("plan-1", "", ""))
	require.Equal(t, 0, plan.code, plan.output)
	apply := runRunner(t, bin, magosv1.RunApply, vars("plan-1", plan.result.PlanDigest, bundleDigest(t, ns, ws)))
	t.Logf("apply: %s\n%s", apply.raw, apply.output)
	require.NotEqual(t, 0, apply.code, "the provisioner fails the apply")
	assert.Equal(t, magosv1.ResultFailed, apply.result.Result)
	assert.NotEqual(t, magosv1.ReasonStateNotSaved, apply.result.Reason, "a failed apply is not a state that could not be written back")
	assert.Empty(t, apply.result.ErroredState)
	s, err := cs.CoreV1().Secrets(ns).Get(ctx, errored, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, s.Data, "nothing planted is saved as state to restore")
}
