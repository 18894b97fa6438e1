package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// sentinel is the value of a variable declared sensitive to Magos (listed in
// MAGOS_SENSITIVE_ENV) but not to OpenTofu, so OpenTofu prints it.
const sentinel = "SENTINEL-9f3c1a7e-do-not-print"

const config = `
variable "secret_input" {
  type = string
}

resource "terraform_data" "app" {
  input = "app-${var.secret_input}"
}

resource "terraform_data" "db" {
  input = { size = 3 }
}

output "greeting" {
  value = "hello ${var.secret_input}"
}

output "size" {
  value = terraform_data.db.output.size
}

output "token" {
  value     = "tok-${terraform_data.db.id}"
  sensitive = true
}
`

func TestRunnerPlanApplyDestroy(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	bin := buildRunner(t)
	ns := env.NewNamespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	url, digest := serve(t, tarGz(t, map[string]string{
		"README.md":         "# not terraform",
		"infra/":            "",
		"infra/app/":        "",
		"infra/app/main.tf": config,
	}))
	const ws = "web"
	reserve(t, ns, ws, "6f1e0f2c-0c1b-4f57-9a51-5f0e8c1d2a3b", "web-outputs")
	vars := func(planID, planDigest string) map[string]string {
		bundle := ""
		if planDigest != "" {
			bundle = bundleDigest(t, ns, ws)
		}
		return map[string]string{
			magosv1.EnvPlanBundleDigest: bundle,
			"KUBECONFIG":                env.Kubeconfig,
			"TF_VAR_secret_input":       sentinel,
			magosv1.EnvSensitiveEnv:     "TF_VAR_secret_input",
			magosv1.EnvNamespace:        ns,
			magosv1.EnvWorkspace:        ws,
			magosv1.EnvWorkspaceUID:     "6f1e0f2c-0c1b-4f57-9a51-5f0e8c1d2a3b",
			magosv1.EnvRunID:            "run-" + planID,
			magosv1.EnvArtifactURL:      url,
			magosv1.EnvArtifactDigest:   digest,
			magosv1.EnvRevision:         "main@sha1:0123abcd",
			magosv1.EnvPath:             "infra/app",
			magosv1.EnvEngine:           "opentofu",
			magosv1.EnvEngineVersion:    "1.10.6",
			magosv1.EnvVersionsDir:      versionsDir(t),
			magosv1.EnvPlanID:           planID,
			magosv1.EnvPlanDigest:       planDigest,
			magosv1.EnvStateSecret:      magosv1.StateSecretName(ws),
			magosv1.EnvLockLease:        magosv1.LockLeaseName(ws),
			magosv1.EnvOutputsSecret:    "web-outputs",
			magosv1.EnvOutputNames:      "",
		}
	}
	var runs []execution
	run := func(phase string, v map[string]string) execution {
		e := runRunner(t, bin, phase, v)
		runs = append(runs, e)
		t.Logf("runner %s: exit %d, result %s\n%s", phase, e.code, e.raw, e.output)
		return e
	}
	secrets := cs.CoreV1().Secrets(ns)
	leases := cs.CoordinationV1().Leases(ns)
	stateExists := func() bool {
		s, err := secrets.Get(ctx, magosv1.StateSecretName(ws), metav1.GetOptions{})
		require.NoError(t, err)
		return len(s.Data[magosv1.StateKey]) > 0
	}

	var planDigest string
	t.Run("plan stores the plan and counts its changes", func(t *testing.T) {
		e := run(magosv1.RunPlan, vars("plan-1", ""))
		require.Equal(t, 0, e.code, e.output)
		r := e.result
		assert.Equal(t, magosv1.RunPlan, r.Phase)
		assert.Equal(t, magosv1.ResultSucceeded, r.Result)
		assert.Equal(t, "plan-1", r.PlanID)
		assert.Equal(t, int32(2), r.Add)
		assert.Zero(t, r.Change)
		assert.Zero(t, r.Destroy)
		assert.True(t, r.HasChanges)
		assert.Equal(t, "web-plan", r.Storage)
		require.True(t, strings.HasPrefix(r.PlanDigest, "sha256:"))
		planDigest = r.PlanDigest
		if assert.NotNil(t, r.Steps, "the run reports its step timings") {
			assert.Positive(t, r.Steps.Fetch, "fetch")
			assert.Positive(t, r.Steps.Init, "init")
			assert.Positive(t, r.Steps.Engine, "engine (plan)")
			assert.Positive(t, r.Steps.Render, "render (plan JSON for the gate)")
			assert.Positive(t, r.Steps.Storage, "storage (plan Secrets)")
		}

		p, err := planstore.Load(ctx, secrets, ws)
		require.NoError(t, err)
		assert.Equal(t, "plan-1", p.ID)
		assert.Equal(t, planDigest, p.Digest)
		assert.Contains(t, string(p.JSON), `"resource_changes"`)
		assert.NotEmpty(t, p.Binary)
		chunk0, err := secrets.Get(ctx, "web-plan-00", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, ws, chunk0.OwnerReferences[0].Name)
		assert.Equal(t, "plan-1", chunk0.Labels[magosv1.PlanIDLabel])

		// Planning reads the state (there is none yet) and locks it, but writes nothing.
		assert.False(t, stateExists())
	})

	t.Run("apply refuses a plan whose digest was not approved", func(t *testing.T) {
		e := run(magosv1.RunApply, vars("plan-1", sha256Digest([]byte("another plan"))))
		assert.Equal(t, 4, e.code, e.output)
		assert.Equal(t, magosv1.ResultStale, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanDigestMismatch, e.result.Reason)
		assert.Contains(t, e.result.Message, "not the approved")
		assert.False(t, stateExists(), "nothing may be applied")
		out, err := secrets.Get(ctx, "web-outputs", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Empty(t, out.Data, "no outputs may be written")

		e = run(magosv1.RunApply, vars("plan-0", planDigest))
		assert.Equal(t, magosv1.ResultStale, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanDigestMismatch, e.result.Reason)
		assert.False(t, stateExists(), "nothing may be applied")
	})

	t.Run("apply applies the approved plan and writes the outputs", func(t *testing.T) {
		e := run(magosv1.RunApply, vars("plan-1", planDigest))
		require.Equal(t, 0, e.code, e.output)
		assert.Equal(t, magosv1.ResultSucceeded, e.result.Result)
		assert.Equal(t, []string{"greeting", "size", "token"}, e.result.Outputs)
		assert.Equal(t, planDigest, e.result.PlanDigest)
		if assert.NotNil(t, e.result.Steps, "the run reports its step timings") {
			assert.Positive(t, e.result.Steps.Engine, "engine (apply)")
			assert.Zero(t, e.result.Steps.Init, "a plan of built-in providers only is applied without init")
			assert.Positive(t, e.result.Steps.Render, "render (the binary plan checked)")
			assert.Positive(t, e.result.Steps.Storage, "storage (the approved plan loaded)")
		}

		out, err := secrets.Get(ctx, "web-outputs", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "hello "+sentinel, string(out.Data["greeting"]))
		assert.Equal(t, "3", string(out.Data["size"]))
		assert.True(t, strings.HasPrefix(string(out.Data["token"]), "tok-"), "sensitive outputs go to the Secret")
		assert.Equal(t, magosv1.ManagedByValue, out.Labels[magosv1.ManagedByLabel])
		assert.Equal(t, ws, out.OwnerReferences[0].Name)

		state := readState(t, secrets, ws)
		assert.Contains(t, state, `"terraform_data"`)
		lease, err := leases.Get(ctx, magosv1.LockLeaseName(ws), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Nil(t, lease.Spec.HolderIdentity, "the lock is released")
	})

	t.Run("applying a plan made before the last apply is stale", func(t *testing.T) {
		before := readState(t, secrets, ws)
		e := run(magosv1.RunApply, vars("plan-1", planDigest))
		assert.Equal(t, 4, e.code, e.output)
		assert.Equal(t, magosv1.ResultStale, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanStale, e.result.Reason)
		assert.Equal(t, before, readState(t, secrets, ws))
	})

	t.Run("a held state lock is reported with its holder", func(t *testing.T) {
		lease, err := leases.Get(ctx, magosv1.LockLeaseName(ws), metav1.GetOptions{})
		require.NoError(t, err)
		info, err := json.Marshal(map[string]any{
			"ID": "c0ffee00-0000-4000-8000-000000000001", "Operation": "OperationTypeApply",
			"Who": "runner@web-apply-x7k2p", "Version": "1.10.6", "Created": time.Now().UTC(),
		})
		require.NoError(t, err)
		holder := "c0ffee00-0000-4000-8000-000000000001"
		lease.Spec.HolderIdentity = &holder
		lease.Annotations = map[string]string{"app.terraform.io/lock-info": string(info)}
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		require.NoError(t, err)

		e := run(magosv1.RunPlan, vars("plan-2", ""))
		assert.Equal(t, 5, e.code, e.output)
		assert.Equal(t, magosv1.ResultLocked, e.result.Result)
		assert.Equal(t, magosv1.ReasonStateLocked, e.result.Reason)
		assert.Contains(t, e.result.LockHolder, "runner@web-apply-x7k2p")
		assert.Contains(t, e.result.LockHolder, holder)

		lease, err = leases.Get(ctx, magosv1.LockLeaseName(ws), metav1.GetOptions{})
		require.NoError(t, err)
		require.NotNil(t, lease.Spec.HolderIdentity)
		assert.Equal(t, holder, *lease.Spec.HolderIdentity, "another run's lock is left alone")
		unlock(t, leases, lease)
	})

	t.Run("destroy empties the state", func(t *testing.T) {
		e := run(magosv1.RunDestroy, vars("", ""))
		require.Equal(t, 0, e.code, e.output)
		assert.Equal(t, magosv1.ResultSucceeded, e.result.Result)
		assert.Equal(t, magosv1.RunDestroy, e.result.Phase)
		assert.NotContains(t, readState(t, secrets, ws), `"terraform_data"`)
	})

	t.Run("a destroy plan is stored like any plan and its apply empties the state", func(t *testing.T) {
		e := run(magosv1.RunPlan, vars("plan-3", ""))
		require.Equal(t, 0, e.code, e.output)
		require.Equal(t, 0, run(magosv1.RunApply, vars("plan-3", e.result.PlanDigest)).code)
		require.Contains(t, readState(t, secrets, ws), `"terraform_data"`)
		outputs, err := secrets.Get(ctx, "web-outputs", metav1.GetOptions{})
		require.NoError(t, err)

		destroying := func(v map[string]string) map[string]string {
			v[magosv1.EnvPlanMode] = string(magosv1.PlanModeDestroy)
			return v
		}
		e = run(magosv1.RunPlan, destroying(vars("plan-4", "")))
		require.Equal(t, 0, e.code, e.output)
		assert.Equal(t, int32(2), e.result.Destroy)
		assert.Zero(t, e.result.Add)
		assert.True(t, e.result.HasChanges)
		p, err := planstore.Load(ctx, secrets, ws)
		require.NoError(t, err)
		assert.Equal(t, "plan-4", p.ID)
		assert.Equal(t, e.result.PlanDigest, p.Digest)
		assert.Contains(t, string(p.JSON), `"delete"`, "the plan JSON the gate reads shows the deletions")
		assert.Contains(t, readState(t, secrets, ws), `"terraform_data"`, "planning a destroy destroys nothing")

		e = run(magosv1.RunApply, destroying(vars("plan-4", e.result.PlanDigest)))
		require.Equal(t, 0, e.code, e.output)
		assert.Equal(t, magosv1.ResultSucceeded, e.result.Result)
		assert.Empty(t, e.result.Outputs, "a destroy writes no outputs")
		assert.NotContains(t, readState(t, secrets, ws), `"terraform_data"`)
		after, err := secrets.Get(ctx, "web-outputs", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, outputs.Data, after.Data, "the outputs Secret is left as it was")
	})

	t.Run("plan-apply plans, stores the plan and applies it in one run, rendering nothing", func(t *testing.T) {
		require.NotContains(t, readState(t, secrets, ws), `"terraform_data"`)
		e := run(magosv1.RunPlanApply, vars("plan-5", ""))
		require.Equal(t, 0, e.code, e.output)
		r := e.result
		assert.Equal(t, magosv1.RunPlanApply, r.Phase)
		assert.Equal(t, "plan-5", r.PlanID)
		assert.Equal(t, int32(2), r.Add, "counted from what the engine printed")
		assert.True(t, r.HasChanges)
		assert.Equal(t, []string{"greeting", "size", "token"}, r.Outputs)
		if assert.NotNil(t, r.Steps) {
			assert.Positive(t, r.Steps.Init, "init")
			assert.Positive(t, r.Steps.Engine, "engine (plan and apply)")
			assert.Zero(t, r.Steps.Render, "no engine start to render the plan")
			assert.Positive(t, r.Steps.Storage, "the plan is stored for people to read")
		}
		assert.Contains(t, readState(t, secrets, ws), `"terraform_data"`, "applied")
		p, err := planstore.Load(ctx, secrets, ws)
		require.NoError(t, err)
		assert.Equal(t, "plan-5", p.ID)
		assert.Empty(t, p.JSON, "no plan JSON: nothing evaluates it")
		assert.Contains(t, string(p.Text), "terraform_data.app will be created")
		assert.NotEmpty(t, p.Binary)
		lease, err := leases.Get(ctx, magosv1.LockLeaseName(ws), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Nil(t, lease.Spec.HolderIdentity, "the lock held for the run is released")

		before := readState(t, secrets, ws)
		e = run(magosv1.RunPlanApply, vars("plan-6", ""))
		require.Equal(t, 0, e.code, e.output)
		assert.False(t, e.result.HasChanges)
		assert.Zero(t, e.result.Add)
		assert.Equal(t, before, readState(t, secrets, ws), "a plan without changes is not applied")
	})

	// The sentinel was printed by OpenTofu (it is in the plan, the apply and
	// the outputs) and masked every time.
	masked := false
	for _, e := range runs {
		assert.NotContains(t, e.output, sentinel, "runner output:\n%s", e.output)
		assert.NotContains(t, e.raw, sentinel)
		masked = masked || strings.Contains(e.output, "(sensitive value)")
	}
	assert.True(t, masked, "OpenTofu printed the sensitive value and the runner masked it")
}

// readState returns the state JSON in the state Secret.
func readState(t *testing.T, secrets interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.Secret, error)
}, ws string) string {
	t.Helper()
	s, err := secrets.Get(context.Background(), magosv1.StateSecretName(ws), metav1.GetOptions{})
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(s.Data[magosv1.StateKey]))
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}

func unlock(t *testing.T, leases interface {
	Update(context.Context, *coordinationv1.Lease, metav1.UpdateOptions) (*coordinationv1.Lease, error)
}, lease *coordinationv1.Lease) {
	t.Helper()
	lease.Spec.HolderIdentity = nil
	delete(lease.Annotations, "app.terraform.io/lock-info")
	_, err := leases.Update(context.Background(), lease, metav1.UpdateOptions{})
	require.NoError(t, err)
}
