package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// engineSecret is the value of a variable OpenTofu itself treats as
// sensitive (and Magos does not know of): the engine redacts it.
const engineSecret = "ENGINE-SECRET-4b7d0e21-redacted"

const textConfig = `
variable "secret_input" {
  type = string
}

variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "app" {
  input = "app-${var.secret_input}"
}

resource "terraform_data" "db" {
  input = { password = var.db_password, size = 3 }
}
`

// showPlan is the engine's `show -no-color` of a binary plan.
func showPlan(t *testing.T, plan []byte) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.bin"), plan, 0o600))
	cmd := exec.Command(filepath.Join(versionsDir(t), "opentofu", "1.10.6", "tofu"), "show", "-no-color", "plan.bin")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=" + filepath.Join(dir, "none.tfrc")}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	return stdout.String()
}

// TestRunnerStoresTheReadablePlan: a plan, a destroy plan included, is
// stored with its readable text, which names the resources, has no colour
// codes, and shows neither a value the engine treats as sensitive nor one
// the runner masks (a Secret-backed TF_VAR the configuration prints into a
// resource attribute).
func TestRunnerStoresTheReadablePlan(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	bin := buildRunner(t)
	ns := env.NewNamespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	url, digest := serve(t, tarGz(t, map[string]string{"main.tf": textConfig}))
	const ws, uid = "text", "0b9d7c1e-6a5f-4e3d-8c2b-1a0f9e8d7c6b"
	reserve(t, ns, ws, uid, "")
	vars := map[string]string{
		"KUBECONFIG":              env.Kubeconfig,
		"TF_VAR_secret_input":     sentinel,
		"TF_VAR_db_password":      engineSecret,
		magosv1.EnvSensitiveEnv:   "TF_VAR_secret_input",
		magosv1.EnvNamespace:      ns,
		magosv1.EnvWorkspace:      ws,
		magosv1.EnvWorkspaceUID:   uid,
		magosv1.EnvRunID:          "run-1",
		magosv1.EnvArtifactURL:    url,
		magosv1.EnvArtifactDigest: digest,
		magosv1.EnvRevision:       "main@sha1:0123abcd",
		magosv1.EnvEngine:         "opentofu",
		magosv1.EnvEngineVersion:  "1.10.6",
		magosv1.EnvVersionsDir:    versionsDir(t),
		magosv1.EnvPlanID:         "plan-1",
		magosv1.EnvStateSecret:    magosv1.StateSecretName(ws),
		magosv1.EnvLockLease:      magosv1.LockLeaseName(ws),
	}
	secrets := cs.CoreV1().Secrets(ns)

	e := runRunner(t, bin, magosv1.RunPlan, vars)
	require.Equal(t, 0, e.code, e.output)
	p, err := planstore.LoadText(ctx, secrets, ws, planstore.MaxTextBytes)
	require.NoError(t, err)
	assert.Equal(t, "plan-1", p.ID)
	assert.Equal(t, e.result.PlanDigest, p.Digest, "the text is stored with the plan the run reported")
	text := string(p.Text)
	t.Logf("plan.txt:\n%s", text)
	assert.Contains(t, text, "terraform_data.app will be created")
	assert.Contains(t, text, "terraform_data.db will be created")
	assert.NotContains(t, text, "\x1b", "no colour codes")
	assert.NotContains(t, text, engineSecret, "the engine redacts its sensitive values")
	assert.Contains(t, text, "password = (sensitive value)")
	assert.NotContains(t, text, sentinel, "the runner masks the values it is told are secret")
	assert.Contains(t, text, `"app-(sensitive value)"`, "the masked value is where the engine printed it")

	full, err := planstore.Load(ctx, secrets, ws)
	require.NoError(t, err)
	assert.Equal(t, p.Text, full.Text)
	shown := strings.TrimLeft(showPlan(t, full.Binary), "\n")
	assert.Equal(t, strings.ReplaceAll(shown, sentinel, "(sensitive value)"), text,
		"the text is what the engine shows of the stored plan (without its leading blank line), masked")

	vars[magosv1.EnvPlanID] = "plan-2"
	vars[magosv1.EnvPlanMode] = string(magosv1.PlanModeDestroy)
	e = runRunner(t, bin, magosv1.RunPlan, vars)
	require.Equal(t, 0, e.code, e.output)
	p, err = planstore.LoadText(ctx, secrets, ws, planstore.MaxTextBytes)
	require.NoError(t, err)
	assert.Equal(t, "plan-2", p.ID)
	t.Logf("destroy plan.txt:\n%s", p.Text)
	assert.Contains(t, string(p.Text), "No changes", "a destroy plan of an empty state has its text too")
	assert.NotContains(t, string(p.Text), "will be created")
}
