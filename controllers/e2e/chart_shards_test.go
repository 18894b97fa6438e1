package e2e

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

// shardOptions parses a workspace-controller Deployment's args with the
// binary's own flag set.
func shardOptions(t *testing.T, dep *appsv1.Deployment) setup.Options {
	t.Helper()
	fs := flag.NewFlagSet("workspace-controller", flag.ContinueOnError)
	var so setup.Options
	so.BindFlags(fs)
	workspace.NewController().BindFlags(fs)
	(&zap.Options{}).BindFlags(fs)
	require.NoError(t, fs.Parse(dep.Spec.Template.Spec.Containers[0].Args), "%s", dep.Name)
	return so
}

// selects says whether the label selector sel selects Pods labelled podLabels.
func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	require.NoError(t, err)
	return s.Matches(labels.Set(podLabels))
}

// TestHelmChartShards: workspace-controller.shards renders one Deployment
// per shard next to the main one, each reconciling its own Workspaces
// (--watch-label-selector) under its own Lease, with its own metrics
// Service, PodDisruptionBudget, NetworkPolicy and ServiceMonitor; no two
// Deployments select the same Pods; the apiserver accepts every object.
func TestHelmChartShards(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, ns,
		"--set", "workspace-controller.shards={a,b}",
		"--set", "workspace-controller.replicas=2",
		"--set", "workspace-controller.networkPolicy.enabled=true",
		"--set", "global.serviceMonitor.enabled=true")

	main := release + "-workspace-controller"
	units := map[string]struct {
		shard        string // --shard
		lease        string
		owns, leaves map[string]string // Workspace labels the unit reconciles / leaves to another
	}{
		main:              {lease: "magos-workspace-controller", owns: map[string]string{}, leaves: map[string]string{setup.ShardKeyLabel: "a"}},
		main + "-shard-a": {shard: "a", lease: "magos-workspace-controller-shard-a", owns: map[string]string{setup.ShardKeyLabel: "a"}, leaves: map[string]string{setup.ShardKeyLabel: "b"}},
		main + "-shard-b": {shard: "b", lease: "magos-workspace-controller-shard-b", owns: map[string]string{setup.ShardKeyLabel: "b"}, leaves: map[string]string{}},
	}
	deps := map[string]*appsv1.Deployment{}
	for name, want := range units {
		t.Run(name, func(t *testing.T) {
			dep := &appsv1.Deployment{}
			typed(t, objs, "Deployment", name, dep)
			deps[name] = dep
			assert.Equal(t, int32(2), *dep.Spec.Replicas, "a shard has the controller's replicas")
			pods := dep.Spec.Template.Labels

			so := shardOptions(t, dep)
			require.NotNil(t, so.WatchLabelSelector)
			assert.True(t, so.WatchLabelSelector.Matches(labels.Set(want.owns)), "reconciles Workspaces labelled %v", want.owns)
			assert.False(t, so.WatchLabelSelector.Matches(labels.Set(want.leaves)), "leaves Workspaces labelled %v", want.leaves)
			assert.Equal(t, want.shard, so.Shard)
			assert.Equal(t, want.lease, setup.LeaseName("workspace", so.Shard))

			svc := &corev1.Service{}
			typed(t, objs, "Service", name+"-metrics", svc)
			assert.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pods)), "the metrics Service selects the unit's Pods")
			pdb := &policyv1.PodDisruptionBudget{}
			typed(t, objs, "PodDisruptionBudget", name, pdb)
			assert.Equal(t, dep.Spec.Selector, pdb.Spec.Selector)
			np := &networkingv1.NetworkPolicy{}
			typed(t, objs, "NetworkPolicy", name, np)
			assert.True(t, selects(t, &np.Spec.PodSelector, pods), "the NetworkPolicy covers the unit's Pods")
			sm := chartObject(objs, "ServiceMonitor", name)
			require.NotNil(t, sm, "ServiceMonitor %s", name)
			smSel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			assert.True(t, labels.SelectorFromSet(smSel).Matches(labels.Set(svc.Labels)), "the ServiceMonitor scrapes the unit's Service")
		})
	}
	for a, da := range deps {
		for b, db := range deps {
			if a != b {
				assert.False(t, selects(t, da.Spec.Selector, db.Spec.Template.Labels), "Deployment %s selects the Pods of %s", a, b)
			}
		}
	}
	assert.Nil(t, chartObject(objs, "Deployment", release+"-project-controller-shard-a"), "shards are per controller")
	assert.Empty(t, shardOptions(t, deployment(t, objs, release, "project")).WatchLabelSelector, "a controller without shards reconciles every object")

	t.Run("the apiserver accepts every rendered object", func(t *testing.T) {
		installChart(t, objs, "ServiceMonitor")
	})

	t.Run("without shards the main Deployment watches everything", func(t *testing.T) {
		so := shardOptions(t, deployment(t, renderChart(t, release, ns), release, "workspace"))
		assert.Nil(t, so.WatchLabelSelector)
		assert.Empty(t, so.Shard)
	})

	t.Run("the schema refuses bad shard names", func(t *testing.T) {
		for value, want := range map[string]string{
			"workspace-controller.shards={Shard_A}":              "/shards/0",
			"workspace-controller.shards={a,a}":                  "/shards",
			"rollout-controller.shards={a-very-long-shard-name}": "/shards/0",
		} {
			assert.Contains(t, renderChartError(t, release, ns, "--set", value), want, value)
		}
	})
}
