package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// root is the repository's top directory.
var root = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}()

// helmBinary is the project's helm build (`make tools` builds it). With
// -short (`make test-unit`) a missing one skips the test.
func helmBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(root, "bin", "helm")
	_, err := os.Stat(bin)
	if err != nil && testing.Short() {
		t.Skip("bin/helm is missing, and -short does not need it: run `make test`")
	}
	require.NoError(t, err, "bin/helm is missing: run make tools")
	return bin
}

// readYAML decodes the YAML file at path, relative to the repository root, into v.
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, v), path)
}

// chartMeta is what the tests read of a Chart.yaml.
type chartMeta struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}

// magosImage runs `magos-image args...` and returns its stdout.
func magosImage(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	require.Equal(t, 0, code, "magos-image %v: %s", args, stderr.String())
	return stdout.String()
}
