package e2e

import (
	"flag"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// TestHelmChartRunQueue: the workspace-controller's runs values (and
// runner.maxTimeout) become its run queue and deadline flags, and the
// binary's own flag set accepts every argument the chart renders for it.
// By default one namespace holds at most half of the slots and no run's
// deadline passes an hour.
func TestHelmChartRunQueue(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	parse := func(args []string) config.Options {
		fs := flag.NewFlagSet("workspace-controller", flag.ContinueOnError)
		var so setup.Options
		so.BindFlags(fs)
		c := workspace.NewController()
		c.BindFlags(fs)
		(&zap.Options{}).BindFlags(fs)
		require.NoError(t, fs.Parse(kubeletExpand(args)))
		return c.Options
	}

	def := parse(deployment(t, renderChart(t, release, "magos-system"), release, "workspace").Spec.Template.Spec.Containers[0].Args)
	assert.Equal(t, 20, def.MaxConcurrentRuns)
	assert.Equal(t, config.AutoPerNamespace, def.MaxConcurrentRunsPerNamespace, "half of the slots per namespace")
	assert.Equal(t, 0, def.MaxConcurrentRunsPerProject)
	assert.Equal(t, time.Minute, def.RequestedPlanInterval)
	assert.Equal(t, time.Hour, def.MaxRunTimeout)
	assert.InDelta(t, 0.1, def.DriftJitter, 1e-9)
	require.NoError(t, def.Validate())

	set := parse(deployment(t, renderChart(t, release, "magos-system",
		"--set", "workspace-controller.runs.maxConcurrent=4",
		"--set", "workspace-controller.runs.maxConcurrentPerNamespace=3",
		"--set", "workspace-controller.runs.maxConcurrentPerProject=2",
		"--set", "workspace-controller.runs.requestedPlanInterval=5m",
		"--set", "workspace-controller.runner.maxTimeout=3h",
		"--set", "workspace-controller.runs.driftJitter=0.25"), release, "workspace").Spec.Template.Spec.Containers[0].Args)
	assert.Equal(t, 4, set.MaxConcurrentRuns)
	assert.Equal(t, 3, set.MaxConcurrentRunsPerNamespace)
	assert.Equal(t, 2, set.MaxConcurrentRunsPerProject)
	assert.Equal(t, 5*time.Minute, set.RequestedPlanInterval)
	assert.Equal(t, 3*time.Hour, set.MaxRunTimeout)
	assert.InDelta(t, 0.25, set.DriftJitter, 1e-9)
	require.NoError(t, set.Validate())
}

// kubeletExpand expands $(NAME) in args as the kubelet does, with the
// values a Service's environment would give (<SERVICE>_SERVICE_HOST/PORT).
func kubeletExpand(args []string) []string {
	ref := regexp.MustCompile(`\$\(([A-Z0-9_]+)\)`)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = ref.ReplaceAllStringFunc(a, func(m string) string {
			if strings.HasSuffix(m, "_SERVICE_PORT)") {
				return "9443"
			}
			return "10.96.0.20"
		})
	}
	return out
}
