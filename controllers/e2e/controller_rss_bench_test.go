package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// workspaceControllerRSSTarget is the most resident memory the
// workspace-controller may take while no policy selects a Workspace.
const workspaceControllerRSSTarget = 90

// BenchmarkWorkspaceControllerRSS builds the workspace-controller binary
// (and the policy engine it would start, next to it, as the image has it),
// runs it against the local control plane, lets it reconcile a Workspace
// no policy selects, and reports its resident memory beside the target,
// checking it started no policy engine. The engine's own figures, with 20
// policies loaded, are BenchmarkEngineProcessRSS's
// (controllers/internal/policyengine).
func BenchmarkWorkspaceControllerRSS(b *testing.B) {
	env.Require(b)
	binDir := buildControllers(b)
	ns := env.NewNamespace(b)
	p := startController(b, binDir, "workspace", env.Kubeconfig, ns)
	p.waitReady(b)

	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "absent"}}}
	require.NoError(b, env.Client.Create(context.Background(), ws))
	testenv.WaitFor(b, env.Client, client.ObjectKeyFromObject(ws), &magosv1.Workspace{}, 60*time.Second, 100*time.Millisecond,
		func(ws *magosv1.Workspace) bool {
			return ws.Status.ObservedGeneration == ws.Generation && conditions.Get(ws, magosv1.ReadyCondition) != nil
		}, "the Workspace is reconciled")

	pid := p.cmd.Process.Pid
	rss, peak := testenv.ProcStatusKiB(b, pid, "VmRSS"), testenv.ProcStatusKiB(b, pid, "VmHWM")
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	require.NoError(b, err)
	require.Empty(b, strings.TrimSpace(string(children)), "no policy selects a Workspace, so no policy engine runs")
	for b.Loop() {
	}
	b.ReportMetric(float64(rss)/1024, "rss-MiB")
	b.ReportMetric(workspaceControllerRSSTarget, "rss-target-MiB")
	b.ReportMetric(float64(peak)/1024, "rss-peak-MiB")
}
