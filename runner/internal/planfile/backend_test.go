package planfile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckRunnerBackend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend Backend
		wantErr string
	}{
		{name: "the runner's backend", backend: Backend{Type: "http", Workspace: "default", Config: map[string]any{"address": nil, "lock_address": nil}}},
		{name: "an address", backend: Backend{Type: "http", Workspace: "default", Config: map[string]any{"address": "http://x", "lock_address": nil}}, wantErr: "its http backend sets address"},
		{name: "another type", backend: Backend{Type: "s3", Workspace: "default"}, wantErr: `its backend is "s3"`},
		{name: "another workspace", backend: Backend{Type: "http", Workspace: "other"}, wantErr: `(workspace "other")`},
		{name: "no backend", backend: Backend{}, wantErr: `its backend is ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&File{Backend: tc.backend}).CheckRunnerBackend()
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrMismatch)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestCheckUserBackend(t *testing.T) {
	const block = `# the team's state bucket
terraform {
  backend "s3" {
    bucket  = "team-state" # comment
    key     = "apps/web.tfstate"
    encrypt = true
    max_retries = 5
    assume_role {
      role_arn = "arn:aws:iam::1:role/x"
    }
  }
}
`
	same := map[string]any{"bucket": "team-state", "key": "apps/web.tfstate", "encrypt": true, "max_retries": int64(5),
		"assume_role": map[string]any{"role_arn": "arn:aws:iam::1:role/x"}, "endpoint": nil}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range same {
			m[k] = v
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name    string
		backend Backend
		wantErr string
	}{
		{name: "the Workspace's backend", backend: Backend{Type: "s3", Workspace: "default", Config: same}},
		{name: "another bucket", backend: Backend{Type: "s3", Workspace: "default", Config: with("bucket", "elsewhere")}, wantErr: "backend's bucket differs"},
		{name: "an attribute the block does not set", backend: Backend{Type: "s3", Workspace: "default", Config: with("endpoint", "http://x")}, wantErr: "sets endpoint, which the Workspace's backend does not"},
		{name: "an attribute the block sets left out", backend: Backend{Type: "s3", Workspace: "default", Config: with("key", nil)}, wantErr: "does not set key"},
		{name: "another number", backend: Backend{Type: "s3", Workspace: "default", Config: with("max_retries", int64(6))}, wantErr: "max_retries differs"},
		{name: "another type", backend: Backend{Type: "http", Workspace: "default", Config: same}, wantErr: `not the Workspace's "s3" backend`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&File{Backend: tc.backend}).CheckUserBackend([]byte(block))
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrMismatch)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	t.Run("a bare backend block", func(t *testing.T) {
		err := (&File{Backend: Backend{Type: "local", Workspace: "default", Config: map[string]any{"path": "/s/x.tfstate"}}}).
			CheckUserBackend([]byte("backend \"local\" {\n  path = \"/s/x.tfstate\"\n}\n"))
		assert.NoError(t, err)
	})
}

func TestConfigFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"main.tf", "vars.tf.json", "a.tf", "a.tofu", "override.tf", ".hidden.tf", "b.tf~", "#c.tf#", "test.tftest.hcl", "README.md"} {
		writeFile(t, dir, name, "x")
	}
	got, err := configFiles(dir)
	assert.NoError(t, err)
	assert.Equal(t, []string{"a.tofu", "main.tf", "override.tf", "vars.tf.json"}, got)
}
