package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestFromError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want magosv1.RunResult
	}{
		{name: "success", err: nil, want: magosv1.RunResult{Result: magosv1.ResultSucceeded, Reason: magosv1.ReasonSucceeded}},
		{
			name: "typed failure",
			err:  fmt.Errorf("wrapped: %w", Failed(magosv1.ReasonPlanFailed, errors.New("boom"))),
			want: magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonPlanFailed, Message: "wrapped: boom"},
		},
		{
			name: "stale",
			err:  Stale(magosv1.ReasonPlanDigestMismatch, errors.New("digest differs")),
			want: magosv1.RunResult{Result: magosv1.ResultStale, Reason: magosv1.ReasonPlanDigestMismatch, Message: "digest differs"},
		},
		{
			name: "locked",
			err:  Locked("me@host", errors.New("locked")),
			want: magosv1.RunResult{Result: magosv1.ResultLocked, Reason: magosv1.ReasonStateLocked, Message: "locked", LockHolder: "me@host"},
		},
		{
			name: "untyped error",
			err:  errors.New("odd"),
			want: magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed, Message: "odd"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r magosv1.RunResult
			FromError(&r, tt.err, magosv1.ReasonRunFailed)
			assert.Equal(t, tt.want, r)
		})
	}
}

func TestEncodeFitsTheTerminationMessage(t *testing.T) {
	outputs := make([]string, 400)
	for i := range outputs {
		outputs[i] = fmt.Sprintf("output_number_%03d", i)
	}
	tests := []struct {
		name   string
		result magosv1.RunResult
	}{
		{name: "long message", result: magosv1.RunResult{Result: magosv1.ResultFailed, Message: strings.Repeat("é\"<", 3000)}},
		{name: "many outputs", result: magosv1.RunResult{Result: magosv1.ResultSucceeded, Outputs: outputs}},
		{name: "long lock holder", result: magosv1.RunResult{Result: magosv1.ResultLocked, LockHolder: strings.Repeat("w", 5000), Message: strings.Repeat("m", 5000)}},
		{name: "long message and step timings", result: magosv1.RunResult{Result: magosv1.ResultFailed, Message: strings.Repeat("m", 5000),
			Steps: &magosv1.RunSteps{Fetch: 12345.678, Init: 23456.789, Engine: 34567.891}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Encode(tt.result)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(b), MaxBytes)
			var back magosv1.RunResult
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.result.Result, back.Result)
			assert.Equal(t, tt.result.Steps, back.Steps, "step timings are never dropped")
		})
	}
	b, err := Encode(magosv1.RunResult{Result: magosv1.ResultFailed, Message: "short"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"phase":"","result":"Failed","message":"short"}`, string(b))
}

func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "termination-log")
	require.NoError(t, Write(path, magosv1.RunResult{Phase: "plan", Result: magosv1.ResultSucceeded}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"phase":"plan","result":"Succeeded"}`, string(b))
}

func TestExitCode(t *testing.T) {
	assert.Equal(t, 0, ExitCode(magosv1.ResultSucceeded))
	assert.Equal(t, 1, ExitCode(magosv1.ResultFailed))
	assert.Equal(t, 4, ExitCode(magosv1.ResultStale))
	assert.Equal(t, 5, ExitCode(magosv1.ResultLocked))
}
