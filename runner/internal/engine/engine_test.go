package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"1.9.0", "1.10.6"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "opentofu", v), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "opentofu", v, "tofu"), []byte("#!/bin/sh\n"), 0o755))
	}
	// A version directory without an executable does not count.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "opentofu", "1.8.0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "opentofu", "1.8.0", "tofu"), nil, 0o644))

	p, err := Resolve(dir, "opentofu", "1.10.6", "tofu")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "opentofu", "1.10.6", "tofu"), p)

	_, err = Resolve(dir, "opentofu", "1.8.0", "tofu")
	require.ErrorIs(t, err, ErrNotInstalled)
	assert.ErrorContains(t, err, "opentofu 1.8.0 is not in "+dir+" (available: 1.10.6, 1.9.0)")

	_, err = Resolve(dir, "terraform", "1.5.7", "terraform")
	assert.ErrorContains(t, err, "(available: none)")
}

// stderr of OpenTofu 1.10 for a stale plan and for a held lock.
const staleStderr = `exit status 1

Error: Saved plan is stale

The given plan file can no longer be applied because the state was changed
by another operation after the plan was created.
`

const lockStderr = `exit status 1

Error: Error acquiring the state lock

Error message: HTTP remote state already locked: ID=5e0c
Lock Info:
  ID:        5e0c
  Path:      
  Operation: OperationTypePlan
  Who:       runner@web-plan-abc
  Version:   1.10.6
  Created:   2026-01-02 03:04:05 +0000 UTC
  Info:      

OpenTofu acquires a state lock to protect the state from being written
`

func TestErrorClassification(t *testing.T) {
	stale := errors.New(staleStderr)
	locked := errors.New(lockStderr)
	assert.True(t, IsStalePlan(stale))
	assert.False(t, IsStalePlan(locked))
	assert.True(t, IsLockError(locked))
	assert.False(t, IsLockError(stale))
	assert.Equal(t, "runner@web-plan-abc (lock ID 5e0c)", LockHolder(locked))
	assert.Equal(t, "", LockHolder(stale))
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "nil", err: nil, want: ""},
		{name: "diagnostic", err: errors.New(staleStderr), want: "Saved plan is stale"},
		{
			name: "boxed diagnostics, repeated",
			err:  errors.New("exit status 1\n╷\n│ Error: Invalid reference\n│ \n╵\n╷\n│ Error: Missing variable\n╵\n╷\n│ Error: Invalid reference\n╵"),
			want: "Invalid reference; Missing variable",
		},
		{name: "no diagnostics", err: errors.New("signal: killed\nsome output"), want: "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Summary(tt.err))
		})
	}
}
