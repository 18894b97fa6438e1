package statebackend_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/runner/internal/statebackend"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// tofu runs the real OpenTofu from bin/engines in dir with extra env.
func tofu(t *testing.T, dir string, extra map[string]string, args ...string) string {
	t.Helper()
	bin := testenv.TofuPath(env.Root)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("OpenTofu not found at %s: run `make tools`", bin)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"}
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "tofu %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

func writeConfig(t *testing.T, dir, mainTF string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o600))
}

func backendBlock(typ, body string) string {
	return "terraform {\n  backend \"" + typ + "\" {\n    " + body + "\n  }\n}\n"
}

const resources = `
resource "terraform_data" "a" { input = "a" }
output "a" { value = terraform_data.a.output }
`

// The override's backend block is the one the engine uses, whether the
// configuration declares none or declares its own (which it replaces).
func TestEngineUsesTheOverrideBackend(t *testing.T) {
	env.Require(t)
	tests := []struct {
		name    string
		backend string
	}{
		{name: "configuration without a backend", backend: ""},
		{name: "configuration with a local backend", backend: backendBlock("local", `path = "local.tfstate"`)},
		{name: "configuration with a kubernetes backend", backend: backendBlock("kubernetes", `secret_suffix = "other"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _, _ := newStore(t)
			srv := startServer(t, store)
			dir := t.TempDir()
			writeConfig(t, dir, tt.backend+resources)
			require.NoError(t, statebackend.WriteHTTPOverride(dir))

			out := tofu(t, dir, srv.Env(), "init", "-input=false", "-no-color")
			assert.Contains(t, out, `Successfully configured the backend "http"`)
			tofu(t, dir, srv.Env(), "apply", "-input=false", "-auto-approve", "-no-color")

			state, err := store.GetState(context.Background())
			require.NoError(t, err)
			assert.Contains(t, string(state), `"terraform_data"`)
			for _, f := range []string{"terraform.tfstate", "local.tfstate"} {
				_, err := os.Stat(filepath.Join(dir, f))
				assert.True(t, os.IsNotExist(err), "%s must not be written", f)
			}
		})
	}
}

// A saved plan records its backend block, not the TF_HTTP_* environment, so
// the apply run can serve the state on another port with another password.
func TestSavedPlanAppliesThroughAnotherServer(t *testing.T) {
	env.Require(t)
	store, _, _ := newStore(t)
	planSrv := startServer(t, store)
	planDir := t.TempDir()
	writeConfig(t, planDir, resources)
	require.NoError(t, statebackend.WriteHTTPOverride(planDir))
	tofu(t, planDir, planSrv.Env(), "init", "-input=false", "-no-color")
	planFile := filepath.Join(t.TempDir(), "plan.bin")
	tofu(t, planDir, planSrv.Env(), "plan", "-input=false", "-no-color", "-out="+planFile)
	require.NoError(t, planSrv.Close())

	plan := unzipAll(t, planFile)
	assert.NotContains(t, plan, planSrv.Password(), "the plan must not record the password")
	assert.NotContains(t, plan, strings.TrimPrefix(planSrv.URL(), "http://"), "the plan must not record the address")

	applySrv := startServer(t, store)
	require.NotEqual(t, planSrv.URL(), applySrv.URL())
	applyDir := t.TempDir()
	writeConfig(t, applyDir, resources)
	require.NoError(t, statebackend.WriteHTTPOverride(applyDir))
	tofu(t, applyDir, applySrv.Env(), "init", "-input=false", "-no-color")
	tofu(t, applyDir, applySrv.Env(), "apply", "-input=false", "-no-color", planFile)

	state, err := store.GetState(context.Background())
	require.NoError(t, err)
	assert.Contains(t, string(state), `"terraform_data"`)
}

// unzipAll returns the concatenated content of a plan file (a zip archive).
func unzipAll(t *testing.T, path string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	var all bytes.Buffer
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		_, err = io.Copy(&all, rc)
		require.NoError(t, err)
		_ = rc.Close()
	}
	return all.String()
}

func TestUserBackendOverride(t *testing.T) {
	env.Require(t)
	tests := []struct {
		name    string
		file    string
		wantErr string
	}{
		{name: "bare backend block", file: "# state goes to a file\nbackend \"local\" {\n  path = \"user.tfstate\"\n}\n"},
		{name: "terraform block", file: "/* mine */\nterraform {\n  backend \"local\" {\n    path = \"user.tfstate\"\n  }\n}\n"},
		{name: "not a backend", file: "resource \"terraform_data\" \"x\" {}\n", wantErr: "must hold a backend block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, backendBlock("kubernetes", `secret_suffix = "x"`)+resources)
			userFile := filepath.Join(t.TempDir(), "backend.tf")
			require.NoError(t, os.WriteFile(userFile, []byte(tt.file), 0o600))
			err := statebackend.WriteUserOverride(dir, userFile)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tofu(t, dir, nil, "init", "-input=false", "-no-color")
			tofu(t, dir, nil, "apply", "-input=false", "-auto-approve", "-no-color")
			b, err := os.ReadFile(filepath.Join(dir, "user.tfstate"))
			require.NoError(t, err)
			assert.Contains(t, string(b), `"terraform_data"`)
		})
	}
}
