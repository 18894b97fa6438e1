package runner

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/runner/internal/report"
)

// TestStateTooLargeFailsBeforeApply pins that an apply whose resulting
// state cannot fit the state Secret fails before anything is applied.
func TestStateTooLargeFailsBeforeApply(t *testing.T) {
	noise := make([]byte, 3<<20)
	_, _ = rand.Read(noise)
	planWith := func(value string) []byte {
		b, err := json.Marshal(map[string]any{
			"format_version": "1.2",
			"planned_values": map[string]any{"root_module": map[string]any{"resources": []any{
				map[string]any{"address": "terraform_data.big", "values": map[string]any{"input": value}},
			}}},
		})
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name   string
		plan   []byte
		reason string
	}{
		{name: "small state", plan: planWith("hello")},
		{name: "large but compressible", plan: planWith(string(make([]byte, 8<<20)))},
		{name: "destroy-only plan", plan: []byte(`{"format_version":"1.2"}`)},
		{name: "too large", plan: planWith(base64.StdEncoding.EncodeToString(noise)), reason: magosv1.ReasonStateTooLarge},
		{name: "not JSON", plan: []byte("{"), reason: magosv1.ReasonApplyFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkStateSize(tt.plan)
			if tt.reason == "" {
				assert.NoError(t, err)
				return
			}
			e, ok := report.As(err)
			require.True(t, ok, "a report error: %v", err)
			assert.Equal(t, tt.reason, e.Reason)
			assert.Equal(t, magosv1.ResultFailed, e.Result)
			if tt.reason == magosv1.ReasonStateTooLarge {
				assert.Contains(t, err.Error(), "nothing was applied")
			}
		})
	}
}
