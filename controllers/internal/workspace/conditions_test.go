package workspace_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/kstatustest"
)

// condition is "<status>/<reason>" of the Workspace's condition t, or ""
// when it has none.
func condition(ws *magosv1.Workspace, t string) string {
	c := conditions.Get(ws, t)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// readiness is what a user and kstatus read from a Workspace's status.
type readiness struct {
	Ready, Reconciling, Stalled string
	Kstatus                     status.Status
}

// assertReadiness checks the Workspace's Ready, Reconciling and Stalled
// conditions ("<status>/<reason>", "" for absent) and kstatus's verdict.
func assertReadiness(t testing.TB, ws *magosv1.Workspace, want readiness) {
	t.Helper()
	got := readiness{
		Ready:       condition(ws, magosv1.ReadyCondition),
		Reconciling: condition(ws, magosv1.ReconcilingCondition),
		Stalled:     condition(ws, magosv1.StalledCondition),
		Kstatus:     kstatustest.Compute(t, ws).Status,
	}
	assert.Equal(t, want, got, "Ready message: %s", readyMessage(ws))
}

func readyMessage(ws *magosv1.Workspace) string {
	if c := conditions.Get(ws, magosv1.ReadyCondition); c != nil {
		return c.Message
	}
	return ""
}
