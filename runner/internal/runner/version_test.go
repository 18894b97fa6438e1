package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestRunReportsItsContractAndVersion: every report, also of a run that
// could not start, names the run contract the runner speaks and its build
// version, which the controller compares with its own.
func TestRunReportsItsContractAndVersion(t *testing.T) {
	termination := filepath.Join(t.TempDir(), "termination-log")
	env := map[string]string{magosv1.EnvTerminationMessage: termination}
	var out bytes.Buffer
	Run(context.Background(), magosv1.RunPlan, func(k string) string { return env[k] }, &out, &out, Options{Version: "1.2.3"})
	raw, err := os.ReadFile(termination)
	require.NoError(t, err)
	var r magosv1.RunResult
	require.NoError(t, json.Unmarshal(raw, &r))
	assert.Equal(t, magosv1.RunContractMajor, r.Contract)
	assert.Equal(t, "1.2.3", r.RunnerVersion)
}
