package realnode

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/tools/harness/realnode"
)

// runnerPoolTaint is the taint of the nodes the installation dedicates to
// runners; its key is the one toleration key the install allows
// (guards.allowedTolerationKeys).
var runnerPoolTaint = corev1.Taint{Key: "magos.test/runners", Value: "true", Effect: corev1.TaintEffectNoSchedule}

// TestRunnerTolerationGuardOnTheNode: with the node tainted as a control
// plane, a Workspace whose runner tolerates that taint is refused before
// the real scheduler could place its Pod there (PlacementNotAllowed, no
// Pod); with the node tainted as the runner pool, whose key the cluster
// allows, a Workspace tolerating it is scheduled on the node and applies.
func TestRunnerTolerationGuardOnTheNode(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns := newNamespace(t)
	src := newGitSource(t, ns)
	rev := src.Publish(ctx, "infra", "../testdata/hello")
	tolerating := func(name string, taint corev1.Taint) *magosv1.Workspace {
		return &magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: magosv1.WorkspaceSpec{
				SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
				Runner: &magosv1.RunnerSpec{Tolerations: []corev1.Toleration{
					{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect},
				}},
			},
		}
	}

	controlPlane := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	taintNode(t, controlPlane)
	require.NoError(t, k8s.Create(ctx, tolerating("intruder", controlPlane)))
	ws := waitWorkspace(t, ns, "intruder", time.Minute, "is refused", func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.StalledCondition)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == magosv1.ReasonPlacementNotAllowed
	})
	assert.Contains(t, conditions.Get(ws, magosv1.StalledCondition).Message, `toleration key "node-role.kubernetes.io/control-plane"`)
	require.Never(t, func() bool { return len(runnerPods(t, ns, "intruder")) > 0 }, 3*time.Second, 250*time.Millisecond,
		"no runner Pod of a refused Workspace reaches the scheduler")

	taintNode(t, runnerPoolTaint)
	require.NoError(t, k8s.Create(ctx, tolerating("pool", runnerPoolTaint)))
	waitWorkspace(t, ns, "pool", 5*time.Minute, "applies on the runner pool node", applied(rev))
	pods := runnerPods(t, ns, "pool")
	require.NotEmpty(t, pods)
	for _, p := range pods {
		assert.Equal(t, realnode.NodeName, p.Spec.NodeName, "run Pod %s was scheduled on the tainted node", p.Name)
	}
}

// taintNode gives the node taint as its only taint until the test ends.
func taintNode(t *testing.T, taint corev1.Taint) {
	t.Helper()
	ctx := context.Background()
	set := func(taints []corev1.Taint) {
		var n corev1.Node
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Name: realnode.NodeName}, &n))
		patch := client.MergeFrom(n.DeepCopy())
		n.Spec.Taints = taints
		require.NoError(t, k8s.Patch(ctx, &n, patch))
	}
	set([]corev1.Taint{taint})
	t.Cleanup(func() { set(nil) })
}

// runnerPods are the run Pods of Workspace name.
func runnerPods(t *testing.T, ns, name string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	require.NoError(t, k8s.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{magosv1.WorkspaceLabel: name}))
	return pods.Items
}
