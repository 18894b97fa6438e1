package config

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/runqueue"
)

// defaultOptions are the options of a workspace-controller started with
// args.
func defaultOptions(t *testing.T, args ...string) Options {
	t.Helper()
	var o Options
	fs := flag.NewFlagSet("workspace-controller", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse(args))
	return o
}

// By default one namespace holds at most half of the run slots, so a
// tenant starting many runs never holds all of them.
func TestRunLimits(t *testing.T) {
	tests := []struct {
		args []string
		want runqueue.Limits
	}{
		{nil, runqueue.Limits{Total: 20, PerNamespace: 10}},
		{[]string{"--max-concurrent-runs=5"}, runqueue.Limits{Total: 5, PerNamespace: 3}},
		{[]string{"--max-concurrent-runs=1"}, runqueue.Limits{Total: 1, PerNamespace: 1}},
		{[]string{"--max-concurrent-runs=0"}, runqueue.Limits{}},
		{[]string{"--max-concurrent-runs-per-namespace=0"}, runqueue.Limits{Total: 20}},
		{[]string{"--max-concurrent-runs-per-namespace=4", "--max-concurrent-runs-per-project=2"}, runqueue.Limits{Total: 20, PerNamespace: 4, PerProject: 2}},
	}
	for _, tt := range tests {
		o := defaultOptions(t, tt.args...)
		require.NoError(t, o.Validate(), "%v", tt.args)
		assert.Equal(t, tt.want, o.RunLimits(), "%v", tt.args)
	}
}

// A run's deadline is the Workspace's timeout, else the default, never
// more than the maximum (one hour by default).
func TestRunTimeout(t *testing.T) {
	o := defaultOptions(t)
	tests := []struct {
		name          string
		asked         time.Duration
		deadline, cut time.Duration
	}{
		{"none asked: the default", 0, 30 * time.Minute, 0},
		{"shorter than the maximum", 45 * time.Minute, 45 * time.Minute, 0},
		{"the maximum", time.Hour, time.Hour, 0},
		{"longer than the maximum: cut", 72 * time.Hour, time.Hour, 72 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deadline, cut := o.RunDeadline(tt.asked)
			assert.Equal(t, tt.deadline, deadline)
			assert.Equal(t, tt.cut, cut)
		})
	}
	o.MaxRunTimeout = 0
	deadline, cut := o.RunDeadline(72 * time.Hour)
	assert.Equal(t, 72*time.Hour, deadline, "no maximum")
	assert.Zero(t, cut)
}

func TestValidateRunOptions(t *testing.T) {
	for _, args := range [][]string{
		{"--max-concurrent-runs-per-namespace=-2"},
		{"--max-run-timeout=-1s"},
		{"--requested-plan-interval=-1s"},
		{"--run-timeout=2h"}, // longer than the default maximum
		{"--run-timeout=10m", "--max-run-timeout=5m"},
	} {
		assert.Error(t, defaultOptions(t, args...).Validate(), "%v", args)
	}
	assert.NoError(t, defaultOptions(t, "--run-timeout=2h", "--max-run-timeout=0").Validate())
}

// TestRunnerRequestFlags pins the flags that set the default requests.
func TestRunnerRequestFlags(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--runner-cpu-request=0", "--runner-memory-request=512Mi"}))
	assert.Equal(t, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}, o.runnerRequests())
	assert.Error(t, fs.Parse([]string{"--runner-memory-request=-1"}))
	assert.Equal(t, magosv1.DefaultShutdownWait, o.shutdownWait())
}
