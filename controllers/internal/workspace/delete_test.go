package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// TestDestroyGateDecision pins when a deletion may destroy without the
// gate: only when the Workspace (or its Project) asks to skip it and the
// cluster allows that; a refused request goes through the gate and says so.
func TestDestroyGateDecision(t *testing.T) {
	tests := []struct {
		name          string
		gate          magosv1.DestroyGate
		allowed       bool
		skip, refused bool
	}{
		{name: "enforced by default", gate: magosv1.DestroyGateEnforce},
		{name: "enforced where skipping is allowed", gate: magosv1.DestroyGateEnforce, allowed: true},
		{name: "unset is enforced", gate: ""},
		{name: "skip where allowed", gate: magosv1.DestroyGateSkip, allowed: true, skip: true},
		{name: "skip where not allowed goes through the gate", gate: magosv1.DestroyGateSkip, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := config.Guards{AllowDestroySkipGate: tt.allowed}
			skip, refused := g.SkipsDestroyGate(tt.gate)
			assert.Equal(t, tt.skip, skip, "skip")
			assert.Equal(t, tt.refused, refused, "refused")
		})
	}
}

// TestDestroyGateSettings pins where the destroy gate comes from: the
// Workspace's spec.destroy.gate, else its Project's default, else Enforce.
func TestDestroyGateSettings(t *testing.T) {
	skip := &magosv1.DestroySpec{Gate: magosv1.DestroyGateSkip}
	enforce := &magosv1.DestroySpec{Gate: magosv1.DestroyGateEnforce}
	tests := []struct {
		name      string
		workspace *magosv1.DestroySpec
		project   *magosv1.DestroySpec
		want      magosv1.DestroyGate
	}{
		{name: "default", want: magosv1.DestroyGateEnforce},
		{name: "empty destroy spec", workspace: &magosv1.DestroySpec{}, want: magosv1.DestroyGateEnforce},
		{name: "Workspace skips", workspace: skip, want: magosv1.DestroyGateSkip},
		{name: "Project skips", project: skip, want: magosv1.DestroyGateSkip},
		{name: "Workspace enforces over a Project that skips", workspace: enforce, project: skip, want: magosv1.DestroyGateEnforce},
		{name: "Workspace without a gate keeps the Project's", workspace: &magosv1.DestroySpec{}, project: skip, want: magosv1.DestroyGateSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := inputs{}
			if tt.project != nil {
				in.Project = projectWith(&magosv1.ProjectDefaults{Destroy: tt.project})
			}
			s, err := settingsOf(testReconciler(), &magosv1.Workspace{Spec: magosv1.WorkspaceSpec{Destroy: tt.workspace}}, in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.DestroyGate)
		})
	}
}
