package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// withRunner gives a Workspace the runner settings r.
func withRunner(r magosv1.RunnerSpec) func(*magosv1.Workspace) {
	return func(ws *magosv1.Workspace) { ws.Spec.Runner = &r }
}

// TestGuardRunnerPlacementDenyByDefault: on a cluster whose admin allowed
// no runner placement or Pod metadata (the default), a Workspace that
// tolerates the control-plane taint, asks for system-node-critical, pins a
// node, or puts a label or a sidecar-injector annotation on its Pods is
// refused before any Job, naming the field and value; so is one that gets
// them from its Project's defaults. A Workspace without them runs.
func TestGuardRunnerPlacementDenyByDefault(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	controlPlane := []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{Defaults: &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{Tolerations: controlPlane}}}}))

	s.newWorkspace("control-plane", "infra", withRunner(magosv1.RunnerSpec{Tolerations: controlPlane}))
	s.newWorkspace("any-taint", "infra", withRunner(magosv1.RunnerSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}))
	s.newWorkspace("critical", "infra", withRunner(magosv1.RunnerSpec{PriorityClassName: "system-node-critical"}))
	s.newWorkspace("pinned", "infra", withRunner(magosv1.RunnerSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": "control-plane-1"}}))
	s.newWorkspace("by-name", "infra", withRunner(magosv1.RunnerSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"control-plane-1"}}},
		}}},
	}}}))
	s.newWorkspace("trusted-label", "infra", withRunner(magosv1.RunnerSpec{PodLabels: map[string]string{"app.kubernetes.io/name": "ingress-nginx"}}))
	s.newWorkspace("injected", "infra", withRunner(magosv1.RunnerSpec{PodAnnotations: map[string]string{"sidecar.istio.io/proxyImage": "evil.example/proxy:1"}}))
	s.newWorkspace("member", "infra", withProject("platform"))
	s.newWorkspace("plain", "infra", nil)

	s.requireRefused("control-plane", magosv1.ReasonPlacementNotAllowed, `spec.runner.tolerations: toleration key "node-role.kubernetes.io/control-plane" (allowed: none)`)
	s.requireRefused("any-taint", magosv1.ReasonPlacementNotAllowed, "a toleration without a key tolerates every taint")
	s.requireRefused("critical", magosv1.ReasonPlacementNotAllowed, `spec.runner.priorityClassName: priority class "system-node-critical"`)
	s.requireRefused("pinned", magosv1.ReasonPlacementNotAllowed, `spec.runner.nodeSelector: node label key "kubernetes.io/hostname"`)
	s.requireRefused("by-name", magosv1.ReasonPlacementNotAllowed, `spec.runner.affinity: node label key "metadata.name"`)
	s.requireRefused("trusted-label", magosv1.ReasonPodMetadataNotAllowed, `spec.runner.podLabels: label key "app.kubernetes.io/name"`)
	s.requireRefused("injected", magosv1.ReasonPodMetadataNotAllowed, `spec.runner.podAnnotations: annotation key "sidecar.istio.io/proxyImage"`)
	s.requireRefused("member", magosv1.ReasonPlacementNotAllowed, `Project platform defaults.runner.tolerations: toleration key "node-role.kubernetes.io/control-plane"`)
	require.Eventually(t, func() bool { return planJobs(t, s.ns, "plain") > 0 }, time.Minute, 250*time.Millisecond,
		"a Workspace without placement or Pod metadata runs")
}

// TestGuardRunnerPlacementAllowed: what the admin allows reaches the
// runner Pod; a pattern never allows a system- priority class, and what
// the lists do not match is still refused.
func TestGuardRunnerPlacementAllowed(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) {
		o.Guards.Placement = config.PlacementGuards{
			PriorityClasses:   []string{"*"},
			TolerationKeys:    []string{"pool.example/*"},
			NodeLabelKeys:     []string{"pool.example/*"},
			PodLabelKeys:      []string{"team"},
			PodAnnotationKeys: []string{"cost.example/*"},
		}
	}})
	s.gitRepository("infra", copyConfig(t, "hello"))
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "tenant-" + s.ns}, Value: 1000}
	require.NoError(t, env.Client.Create(ctx, pc))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pc) })
	allowed := magosv1.RunnerSpec{
		PriorityClassName: pc.Name,
		Tolerations:       []corev1.Toleration{{Key: "pool.example/runners", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		NodeSelector:      map[string]string{"pool.example/runners": "true"},
		PodLabels:         map[string]string{"team": "a"},
		PodAnnotations:    map[string]string{"cost.example/center": "42"},
	}
	s.newWorkspace("allowed", "infra", withRunner(allowed))
	s.newWorkspace("critical", "infra", withRunner(magosv1.RunnerSpec{PriorityClassName: "system-cluster-critical"}))
	s.newWorkspace("mesh", "infra", withRunner(magosv1.RunnerSpec{PodAnnotations: map[string]string{"cost.example/center": "42", "traffic.sidecar.istio.io/excludeOutboundIPRanges": "0.0.0.0/0"}}))

	s.requireRefused("critical", magosv1.ReasonPlacementNotAllowed, `priority class "system-cluster-critical" (allowed: *)`)
	s.requireRefused("mesh", magosv1.ReasonPodMetadataNotAllowed, `annotation key "traffic.sidecar.istio.io/excludeOutboundIPRanges" (allowed: cost.example/*)`)
	var job batchv1.Job
	require.Eventually(t, func() bool {
		var jobs batchv1.JobList
		require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "allowed"}))
		if len(jobs.Items) == 0 {
			return false
		}
		job = jobs.Items[0]
		return true
	}, time.Minute, 250*time.Millisecond, "an allowed placement runs")
	pod := job.Spec.Template
	assert.Equal(t, pc.Name, pod.Spec.PriorityClassName)
	assert.Equal(t, allowed.Tolerations, pod.Spec.Tolerations)
	assert.Equal(t, allowed.NodeSelector, pod.Spec.NodeSelector)
	assert.Equal(t, "a", pod.Labels["team"])
	assert.Equal(t, "42", pod.Annotations["cost.example/center"])
}
