package config

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

func TestPlacementGuardFlags(t *testing.T) {
	var g Guards
	fs := flag.NewFlagSet("workspace-controller", flag.ContinueOnError)
	g.BindFlags(fs)
	assert.Zero(t, g.Placement, "nothing is allowed unless the admin allows it")
	require.NoError(t, fs.Parse([]string{
		"--allowed-runner-priority-classes=tenant-*",
		"--allowed-runner-toleration-keys=pool.example/*, dedicated",
		"--allowed-runner-node-label-keys=pool.example/*",
		"--allowed-runner-pod-label-keys=team",
		"--allowed-runner-pod-label-keys=tier",
		"--allowed-runner-pod-annotation-keys=cost.example/*",
	}))
	assert.Equal(t, PlacementGuards{
		PriorityClasses:   []string{"tenant-*"},
		TolerationKeys:    []string{"pool.example/*", "dedicated"},
		NodeLabelKeys:     []string{"pool.example/*"},
		PodLabelKeys:      []string{"team", "tier"},
		PodAnnotationKeys: []string{"cost.example/*"},
	}, g.Placement)
	require.ErrorContains(t, (&Guards{Placement: PlacementGuards{PodLabelKeys: []string{"[team"}}}).Validate("runner:1"),
		`--allowed-runner-pod-label-keys: "[team" is not a valid pattern`)
}

func TestPlacementGuards(t *testing.T) {
	g := PlacementGuards{
		PriorityClasses:   []string{"*", "system-cluster-critical"},
		TolerationKeys:    []string{"pool.example/*"},
		NodeLabelKeys:     []string{"pool.example/*", "topology.kubernetes.io/zone"},
		PodLabelKeys:      []string{"*"},
		PodAnnotationKeys: []string{"cost.example/*"},
	}
	zone := corev1.PodAffinityTerm{TopologyKey: "topology.kubernetes.io/zone", LabelSelector: &metav1.LabelSelector{}}
	tests := []struct {
		name   string
		runner magosv1.RunnerSpec
		reason string
	}{
		{name: "nothing asked"},
		{name: "tenant priority class", runner: magosv1.RunnerSpec{PriorityClassName: "tenant-low"}},
		{name: "a system class listed by name", runner: magosv1.RunnerSpec{PriorityClassName: "system-cluster-critical"}},
		{name: "a system class a pattern matches", runner: magosv1.RunnerSpec{PriorityClassName: "system-node-critical"}, reason: magosv1.ReasonPlacementNotAllowed},
		{name: "allowed toleration", runner: magosv1.RunnerSpec{Tolerations: []corev1.Toleration{{Key: "pool.example/runners", Operator: corev1.TolerationOpExists}}}},
		{name: "control-plane toleration", runner: magosv1.RunnerSpec{Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}}, reason: magosv1.ReasonPlacementNotAllowed},
		{name: "toleration of every taint", runner: magosv1.RunnerSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, reason: magosv1.ReasonPlacementNotAllowed},
		{name: "allowed node selector", runner: magosv1.RunnerSpec{NodeSelector: map[string]string{"pool.example/runners": "true"}}},
		{name: "hostname node selector", runner: magosv1.RunnerSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": "cp-1"}}, reason: magosv1.ReasonPlacementNotAllowed},
		{name: "preferred node affinity", runner: magosv1.RunnerSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists}}}}}}}},
			reason: magosv1.ReasonPlacementNotAllowed},
		{name: "anti-affinity in the own namespace by zone", runner: magosv1.RunnerSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{zone}}}}},
		{name: "affinity to another namespace's Pods", runner: magosv1.RunnerSpec{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey: "topology.kubernetes.io/zone", Namespaces: []string{"team-b"}}}}}}},
			reason: magosv1.ReasonPlacementNotAllowed},
		{name: "affinity by hostname", runner: magosv1.RunnerSpec{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}}}},
			reason: magosv1.ReasonPlacementNotAllowed},
		{name: "unprefixed label", runner: magosv1.RunnerSpec{PodLabels: map[string]string{"team": "a"}}},
		{name: "prefixed label", runner: magosv1.RunnerSpec{PodLabels: map[string]string{"app.kubernetes.io/name": "ingress"}}, reason: magosv1.ReasonPodMetadataNotAllowed},
		{name: "allowed annotation", runner: magosv1.RunnerSpec{PodAnnotations: map[string]string{"cost.example/center": "1"}}},
		{name: "vault role annotation", runner: magosv1.RunnerSpec{PodAnnotations: map[string]string{"vault.hashicorp.com/role": "admin"}}, reason: magosv1.ReasonPodMetadataNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: "team-a"}, Spec: magosv1.WorkspaceSpec{Runner: &tt.runner}}
			err := g.CheckPlacement(ws, &tt.runner)
			if err == nil {
				err = g.CheckPodMetadata(ws, &tt.runner)
			}
			if tt.reason == "" {
				require.NoError(t, err)
				return
			}
			re, ok := rerror.As(err)
			require.True(t, ok, "%v is a stall", err)
			assert.Equal(t, tt.reason, re.Reason)
		})
	}
}

// TestPlacementRefusalNamesItsOrigin: a refused value is named with the
// field it came from, the Workspace's or its Project's.
func TestPlacementRefusalNamesItsOrigin(t *testing.T) {
	var g PlacementGuards
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: "team-a"}, Spec: magosv1.WorkspaceSpec{
		ProjectRef: &magosv1.LocalObjectReference{Name: "platform"},
		Runner:     &magosv1.RunnerSpec{PodLabels: map[string]string{"own": "1"}},
	}}
	effective := magosv1.RunnerSpec{PodLabels: map[string]string{"own": "1", "inherited": "2"}}
	err := g.CheckPodMetadata(ws, &effective)
	require.Error(t, err)
	assert.EqualError(t, err, `not allowed on this cluster: Project platform defaults.runner.podLabels: label key "inherited" (allowed: none); `+
		`spec.runner.podLabels: label key "own" (allowed: none)`)
}
