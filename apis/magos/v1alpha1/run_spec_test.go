package v1alpha1_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func validEnv() map[string]string {
	return map[string]string{
		magosv1.EnvNamespace:      "team-a",
		magosv1.EnvWorkspace:      "web",
		magosv1.EnvWorkspaceUID:   "uid-1",
		magosv1.EnvRunID:          "run-1",
		magosv1.EnvArtifactURL:    "http://source-controller/gitrepository/team-a/web/abc.tar.gz",
		magosv1.EnvArtifactDigest: digest,
		magosv1.EnvPath:           "./infra//app/",
		magosv1.EnvEngine:         "opentofu",
		magosv1.EnvEngineVersion:  "1.10.6",
		magosv1.EnvVersionsDir:    "/versions",
		magosv1.EnvPlanID:         "plan-1",
		magosv1.EnvPlanDigest:     digest,
		magosv1.EnvWorkDir:        "/work",
		magosv1.EnvOutputNames:    " url, ,port ",
		magosv1.EnvDriftCheck:     "true",
	}
}

func TestParseRunSpec(t *testing.T) {
	env := validEnv()
	c, err := magosv1.ParseRunSpec(magosv1.RunApply, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "infra/app", c.Path)
	assert.Equal(t, "tofu", c.EngineBinary())
	assert.Equal(t, []string{"url", "port"}, c.OutputNames)
	assert.True(t, c.Drift)
	assert.Equal(t, magosv1.StateSecretName("web"), c.StateSecret, "defaults to the contract's name")
	assert.Equal(t, magosv1.LockLeaseName("web"), c.LockLease)
	assert.Equal(t, magosv1.DefaultTerminationMessagePath, c.TerminationMessage)
}

func TestParseRunSpecRefuses(t *testing.T) {
	tests := []struct {
		name    string
		phase   string
		change  func(map[string]string)
		wantErr string
	}{
		{name: "unknown phase", phase: "import", wantErr: `unknown phase "import"`},
		{name: "missing namespace", change: func(e map[string]string) { delete(e, magosv1.EnvNamespace) }, wantErr: "MAGOS_NAMESPACE is not set"},
		{name: "apply without a digest", change: func(e map[string]string) { delete(e, magosv1.EnvPlanDigest) }, wantErr: "MAGOS_PLAN_DIGEST is not set"},
		{name: "malformed digest", change: func(e map[string]string) { e[magosv1.EnvArtifactDigest] = "sha256:XYZ" }, wantErr: "MAGOS_ARTIFACT_DIGEST must be <algorithm>:<hex digits>"},
		{name: "unknown engine", change: func(e map[string]string) { e[magosv1.EnvEngine] = "pulumi" }, wantErr: `"pulumi" is not one of opentofu, terraform`},
		{name: "version with a path", change: func(e map[string]string) { e[magosv1.EnvEngineVersion] = "../../bin" }, wantErr: "is not a version"},
		{name: "absolute path", change: func(e map[string]string) { e[magosv1.EnvPath] = "/etc" }, wantErr: "must be relative"},
		{name: "path with ..", change: func(e map[string]string) { e[magosv1.EnvPath] = "a/../../b" }, wantErr: "must not contain '..'"},
		{name: "workspace too long for a label", change: func(e map[string]string) { e[magosv1.EnvWorkspace] = strings.Repeat("w", 64) }, wantErr: "not usable as a label value"},
		{name: "plan ID not a label value", change: func(e map[string]string) { e[magosv1.EnvPlanID] = "plan/1" }, wantErr: "not usable as a label value"},
		{name: "bad outputs Secret name", change: func(e map[string]string) { e[magosv1.EnvOutputsSecret] = "Outputs!" }, wantErr: "is not an object name"},
		{name: "unknown plan mode", change: func(e map[string]string) { e[magosv1.EnvPlanMode] = "RefreshOnly" }, wantErr: "is not Destroy"},
		{name: "plan mode on a destroy run", phase: magosv1.RunDestroy, change: func(e map[string]string) { e[magosv1.EnvPlanMode] = "Destroy" }, wantErr: "is for plan and apply runs"},
		{name: "targets on an apply run", phase: magosv1.RunApply, change: func(e map[string]string) { e[magosv1.EnvPlanTargets] = "terraform_data.a" }, wantErr: "are for plan runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := validEnv()
			if tt.change != nil {
				tt.change(env)
			}
			phase := tt.phase
			if phase == "" {
				phase = magosv1.RunApply
			}
			_, err := magosv1.ParseRunSpec(phase, func(k string) string { return env[k] })
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestParseRunSpecPhases(t *testing.T) {
	env := validEnv()
	delete(env, magosv1.EnvPlanDigest)
	delete(env, magosv1.EnvPlanID)
	delete(env, magosv1.EnvWorkspaceUID)
	get := func(k string) string { return env[k] }
	_, err := magosv1.ParseRunSpec(magosv1.RunDestroy, get)
	assert.NoError(t, err, "destroy needs no plan")
	_, err = magosv1.ParseRunSpec(magosv1.RunPlan, get)
	assert.ErrorContains(t, err, "MAGOS_PLAN_ID is not set")
	assert.ErrorContains(t, err, "MAGOS_WORKSPACE_UID is not set")
}

func TestParseRunSpecDestroyPlanMode(t *testing.T) {
	env := validEnv()
	env[magosv1.EnvPlanMode] = string(magosv1.PlanModeDestroy)
	for _, phase := range []string{magosv1.RunPlan, magosv1.RunApply} {
		c, err := magosv1.ParseRunSpec(phase, func(k string) string { return env[k] })
		require.NoError(t, err, phase)
		assert.True(t, c.Destroying(), phase)
	}
	delete(env, magosv1.EnvPlanMode)
	c, err := magosv1.ParseRunSpec(magosv1.RunPlan, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.False(t, c.Destroying(), "a plan without a mode is a normal plan")
}

func TestParseRunSpecPlanAddresses(t *testing.T) {
	env := validEnv()
	env[magosv1.EnvPlanTargets] = "terraform_data.a\nmodule.m[\"x,y\"].terraform_data.b\n"
	env[magosv1.EnvPlanReplace] = "terraform_data.c"
	c, err := magosv1.ParseRunSpec(magosv1.RunPlan, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, []string{"terraform_data.a", `module.m["x,y"].terraform_data.b`}, c.PlanTargets, "one address a line, commas kept")
	assert.Equal(t, []string{"terraform_data.c"}, c.PlanReplace)
}

// fullSpec sets every field the environment carries, as the controller
// would for a destroy-mode plan with targets.
func fullSpec() magosv1.RunSpec {
	return magosv1.RunSpec{
		Phase: magosv1.RunPlan, Namespace: "team-a", Workspace: "web", WorkspaceUID: "uid-1", RunID: "run-1",
		ArtifactURL: "http://proxy/v1/artifact", ArtifactDigest: digest, ArtifactTokenFile: magosv1.ArtifactTokenDir + "/token",
		Revision: "main@sha1:abc", Path: "infra/app", Engine: "opentofu", EngineVersion: "1.10.6", VersionsDir: "/versions",
		PlanID: "plan-1", PlanDigest: digest, PlanBundleDigest: digest, StateSecret: "tfstate-default-web", LockLease: "web-lock",
		BackendConfig: "/etc/magos/backend/backend.tf", OutputsSecret: "web-outputs", OutputNames: []string{"url", "port"},
		SensitiveEnv: "TF_VAR_password,AWS_SECRET_ACCESS_KEY", WorkDir: "/tmp/magos", TerminationMessage: "/dev/termination-log",
		Drift: true, PlanMode: string(magosv1.PlanModeDestroy), PlanTargets: []string{`module.m["x,y"].a`, "b"}, PlanReplace: []string{"c"},
		ShutdownWait: 45 * time.Second, ErroredStateSecret: "tfstate-errored-web",
	}
}

// TestRunSpecRoundTrip: what the controller writes with Env, the runner
// reads back with ParseRunSpec, field for field; every field of the
// contract is carried (a new field missing from the table shows here).
func TestRunSpecRoundTrip(t *testing.T) {
	want := fullSpec()
	env := map[string]string{}
	for _, e := range want.Env() {
		_, dup := env[e.Name]
		require.False(t, dup, "%s written twice", e.Name)
		env[e.Name] = e.Value
	}
	got, err := magosv1.ParseRunSpec(want.Phase, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, want, *got)

	v := reflect.ValueOf(want)
	for i := range v.NumField() {
		if v.Type().Field(i).Name != "Phase" {
			assert.False(t, v.Field(i).IsZero(), "fullSpec sets %s, so the round trip covers it", v.Type().Field(i).Name)
		}
	}
	assert.Len(t, env, v.NumField()-1, "one variable per field but Phase")
}

// FuzzRunSpecEnv: for any environment, what parses writes back as an
// environment that parses to the same spec (no value is lost or changed
// by a second trip), and parsing never panics.
func FuzzRunSpecEnv(f *testing.F) {
	f.Add("web", "infra/app", "url,port", "a\nb", "30s", "true")
	f.Add("", "../x", ",,", "\n\n", "-1s", "false")
	f.Fuzz(func(t *testing.T, workspace, path, outputs, targets, wait, drift string) {
		env := validEnv()
		env[magosv1.EnvWorkspace], env[magosv1.EnvPath], env[magosv1.EnvOutputNames] = workspace, path, outputs
		env[magosv1.EnvPlanTargets], env[magosv1.EnvShutdownWait], env[magosv1.EnvDriftCheck] = targets, wait, drift
		first, err := magosv1.ParseRunSpec(magosv1.RunPlan, func(k string) string { return env[k] })
		if err != nil {
			return
		}
		again := map[string]string{}
		for _, e := range first.Env() {
			again[e.Name] = e.Value
		}
		second, err := magosv1.ParseRunSpec(magosv1.RunPlan, func(k string) string { return again[k] })
		require.NoError(t, err)
		assert.Equal(t, first, second)
	})
}

// TestRunAnnotationsRoundTrip: what the controller writes on a run's Job
// it reads back, field for field; what does not parse reads as unset.
func TestRunAnnotationsRoundTrip(t *testing.T) {
	want := magosv1.RunAnnotations{
		Revision: "main@sha1:abc", PlanID: "plan-1", InputsDigest: digest, Number: 42,
		ArtifactURL: "http://source-controller/gitrepository/ns/infra/abc.tar.gz", ArtifactDigest: digest, ContentDigest: digest,
		Drift: true, Mode: magosv1.PlanModeDestroy,
		Request: &magosv1.PlanRequest{ID: "r1", Targets: []string{"terraform_data.a"}},
	}
	assert.Equal(t, want, magosv1.ParseRunAnnotations(want.Annotations()))
	v := reflect.ValueOf(want)
	for i := range v.NumField() {
		assert.False(t, v.Field(i).IsZero(), "the round trip covers %s", v.Type().Field(i).Name)
	}

	broken := want.Annotations()
	broken[magosv1.RunNumberAnnotation], broken[magosv1.PlanRequestAnnotation] = "many", "{"
	got := magosv1.ParseRunAnnotations(broken)
	assert.Zero(t, got.Number)
	assert.Nil(t, got.Request, "a request that does not parse is a full plan")
}
