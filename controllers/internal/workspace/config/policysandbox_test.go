package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// TestCheckPolicySandbox: the workspace-controller starts only with a
// policy engine that can open no file and reach no TCP socket, unless the
// admin allows an incomplete sandbox (--allow-incomplete-policy-sandbox).
func TestCheckPolicySandbox(t *testing.T) {
	complete := policyprotocol.Sandbox{Files: true, Network: true}
	filesOnly := policyprotocol.Sandbox{Files: true, Missing: "Landlock ABI 3 cannot restrict TCP (ABI 4, Linux 6.7)"}
	none := policyprotocol.Sandbox{Missing: "the policy engine cannot sandbox itself: Landlock: function not implemented"}
	tests := []struct {
		name            string
		sandbox         policyprotocol.Sandbox
		probeErr        error
		allowIncomplete bool
		refused         string
	}{
		{name: "complete", sandbox: complete},
		{name: "complete, incomplete allowed", sandbox: complete, allowIncomplete: true},
		{name: "files only", sandbox: filesOnly, refused: "Landlock ABI 3 cannot restrict TCP"},
		{name: "none", sandbox: none, refused: "Landlock: function not implemented"},
		{name: "the engine cannot say", probeErr: errors.New("fork/exec /bin/policy-engine: no such file"), refused: "no such file"},
		{name: "files only, allowed", sandbox: filesOnly, allowIncomplete: true},
		{name: "none, allowed", sandbox: none, allowIncomplete: true},
		{name: "the engine cannot say, allowed", probeErr: errors.New("fork/exec: no such file"), allowIncomplete: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{AllowIncompletePolicySandbox: tt.allowIncomplete}
			err := o.CheckPolicySandbox(tt.sandbox, tt.probeErr)
			if tt.refused == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.refused)
			assert.ErrorContains(t, err, "--allow-incomplete-policy-sandbox")
		})
	}
}
