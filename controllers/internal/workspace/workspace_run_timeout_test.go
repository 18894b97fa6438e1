package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// A Workspace cannot give its runs a longer deadline than the controller's
// maximum (--max-run-timeout): a longer spec.runner.timeout is cut to the
// maximum in the Job's activeDeadlineSeconds, and a Warning event says so;
// a shorter one is kept.
func TestRunTimeoutIsCutToTheMaximum(t *testing.T) {
	f := newTunedFixture(t, time.Minute, func(o *config.Options) { o.MaxRunTimeout = time.Hour })
	timeout := func(d time.Duration) func(*magosv1.Workspace) {
		return func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Timeout: &metav1.Duration{Duration: d}}
		}
	}
	f.newWorkspace("forever", timeout(72*time.Hour))
	f.newWorkspace("brief", timeout(45*time.Minute))

	job := waitJob(t, f.ns, "forever", magosv1.RunPlan)
	require.NotNil(t, job.Spec.ActiveDeadlineSeconds)
	assert.Equal(t, int64(time.Hour/time.Second), *job.Spec.ActiveDeadlineSeconds, "cut to the maximum")
	job = waitJob(t, f.ns, "brief", magosv1.RunPlan)
	require.NotNil(t, job.Spec.ActiveDeadlineSeconds)
	assert.Equal(t, int64(45*time.Minute/time.Second), *job.Spec.ActiveDeadlineSeconds, "within the maximum")

	require.Eventually(t, func() bool { return eventCounts(t, f.ns, "forever")[magosv1.ReasonRunTimeoutCapped] == 1 },
		10*time.Second, 100*time.Millisecond, "a Warning event says the timeout was cut")
	assert.Zero(t, eventCounts(t, f.ns, "brief")[magosv1.ReasonRunTimeoutCapped])
}
