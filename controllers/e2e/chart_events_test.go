package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/rand"
)

// TestHelmChartEventsAddr: global.eventsAddr gives every controller
// --events-addr; unset, none forwards events; the schema wants a URL.
func TestHelmChartEventsAddr(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	const addr = "http://notification-controller.flux-system.svc.cluster.local./"
	def := renderChart(t, release, "magos-system")
	set := renderChart(t, release, "magos-system", "--set", "global.eventsAddr="+addr)
	for _, c := range controllerNames {
		assert.NotContains(t, strings.Join(deployment(t, def, release, c).Spec.Template.Spec.Containers[0].Args, " "), "--events-addr", c)
		assert.Contains(t, deployment(t, set, release, c).Spec.Template.Spec.Containers[0].Args, "--events-addr="+addr, c)
	}
	assert.Contains(t, renderChartError(t, release, "magos-system", "--set", "global.eventsAddr=notification-controller:80"), "/global/eventsAddr")
}
