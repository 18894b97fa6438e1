package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
)

func TestRunOf(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Status: magosv1.WorkspaceStatus{
		CurrentRun: &magosv1.RunStatus{Job: "now"},
		History:    []magosv1.RunStatus{{Job: "last"}, {Job: "before"}},
	}}
	r, err := RunOf(ws, 0, false)
	assert.NoError(t, err)
	assert.Equal(t, "now", r.Job, "the run in progress by default")
	r, _ = RunOf(ws, 1, true)
	assert.Equal(t, "before", r.Job)
	_, err = RunOf(ws, 2, true)
	assert.Equal(t, failure.ExitUsage, failure.ExitCode(err))
	assert.ErrorContains(t, err, "--run takes 0 to 1")
}
