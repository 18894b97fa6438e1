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

// A run that cannot start still writes its result, and even its error
// messages are masked.
func TestRunReportsInvalidConfigMasked(t *testing.T) {
	const secret = "hunter2-very-secret"
	termination := filepath.Join(t.TempDir(), "termination-log")
	env := map[string]string{
		magosv1.EnvTerminationMessage: termination,
		magosv1.EnvSensitiveEnv:       "TF_VAR_password",
		"TF_VAR_password":             secret,
		// A secret pasted into the wrong place ends up in a message.
		magosv1.EnvEngine: secret,
	}
	var out bytes.Buffer
	code := Run(context.Background(), magosv1.RunPlan, func(k string) string { return env[k] }, &out, &out, Options{})
	assert.Equal(t, 1, code)

	raw, err := os.ReadFile(termination)
	require.NoError(t, err)
	var r magosv1.RunResult
	require.NoError(t, json.Unmarshal(raw, &r))
	assert.Equal(t, magosv1.RunPlan, r.Phase)
	assert.Equal(t, magosv1.ResultFailed, r.Result)
	assert.Equal(t, magosv1.ReasonInvalidConfig, r.Reason)
	assert.Contains(t, r.Message, "MAGOS_NAMESPACE is not set")
	assert.Contains(t, r.Message, `MAGOS_ENGINE "(sensitive value)" is not one of opentofu, terraform`)
	assert.NotContains(t, string(raw), secret)
	assert.NotContains(t, out.String(), secret)
	assert.Contains(t, out.String(), magosv1.ReasonInvalidConfig)
}
