package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestCLIPlanDiff: kubectl magos plan diff compares the stored plans of
// two Workspaces of one configuration: with the same inputs they are the
// same change (exit 0); with another greeting in prod, the greeting's
// change differs in its input, named without its value (exit 1). With
// --applied the comparison is with the plan dev applied.
func TestCLIPlanDiff(t *testing.T) {
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	for name, greeting := range map[string]string{"dev": "", "staging": "", "prod": "a secret greeting"} {
		s.newWorkspace(name, "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Approval = magosv1.ApprovalManual
			if greeting != "" {
				ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", Value: ptr.To(greeting)}}
			}
		})
	}
	for _, name := range []string{"dev", "staging", "prod"} {
		s.waitWorkspace(name, 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
			return ws.Status.Phase == magosv1.PhaseAwaitingApproval
		})
	}

	r := s.magos("plan", "diff", "staging", "--against", "dev")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "2 resource change(s) the same, 0 different")
	assert.Contains(t, r.stdout, "The plans are the same change.")

	r = s.magos("plan", "diff", "prod", "--against", "dev")
	require.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stdout, "~ terraform_data.greeting (create): differs in input")
	assert.Contains(t, r.stdout, "1 resource change(s) the same, 1 different")
	assert.Contains(t, r.stderr, "the plans differ in 1 resource change(s)")
	assert.NotContains(t, r.stdout+r.stderr, "a secret greeting", "values are never printed")

	r = s.magos("plan", "diff", "prod")
	assert.Equal(t, 2, r.code, "%s", r)

	// --applied: against what dev applied.
	r = s.magos("plan", "diff", "prod", "--against", "staging", "--applied")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "Workspace staging has applied no plan yet")
	dev := s.workspace("dev")
	approve(t, s.ns, "dev", dev.Status.Plan.ID)
	s.waitWorkspace("dev", 3*time.Minute, "applies", func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.PlanID == dev.Status.Plan.ID
	})
	r = s.magos("plan", "diff", "staging", "--against", "dev", "--applied")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "against plan "+dev.Status.Plan.ID+" that Workspace dev applied (revision ")
	assert.Contains(t, r.stdout, "The plans are the same change.")
	r = s.magos("plan", "diff", "prod", "--against", "dev", "--applied")
	require.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stdout, "~ terraform_data.greeting (create): differs in input")
}
