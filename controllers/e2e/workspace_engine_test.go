package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// TestWorkspaceEngineFromEngineImage: the runner finds no engine of its own
// (its versions directory, /opt/magos/engines, does not exist here); the
// engine image's init container delivers it, and the Workspace applies.
func TestWorkspaceEngineFromEngineImage(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("tofu", "infra", nil)
	s.waitWorkspace("tofu", 3*time.Minute, "applies", appliedRevision(rev))

	var pods corev1.PodList
	require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "tofu"}))
	require.NotEmpty(t, pods.Items)
	// The chart's NetworkPolicy of the workspace-controller admits these
	// Pods to the artifact proxy (its second ingress rule).
	release := "m" + rand.String(5)
	np := &networkingv1.NetworkPolicy{}
	typed(t, renderChart(t, release, "magos-system", "--set", "workspace-controller.networkPolicy.enabled=true"),
		"NetworkPolicy", release+"-workspace-controller", np)
	require.Len(t, np.Spec.Ingress, 2)
	np.Spec.Ingress = np.Spec.Ingress[1:]
	for _, pod := range pods.Items {
		assert.True(t, admits(t, np, map[string]string{}, pod.Labels), "the chart's NetworkPolicy admits runner Pod %s to the artifact proxy", pod.Name)
		require.Len(t, pod.Spec.InitContainers, 1, "pod %s", pod.Name)
		assert.Equal(t, "ghcr.io/magos-dev/magos-engine-opentofu:1.10.6", pod.Spec.InitContainers[0].Image)
		require.Len(t, pod.Status.InitContainerStatuses, 1)
		term := pod.Status.InitContainerStatuses[0].State.Terminated
		require.NotNil(t, term, "pod %s: the engine init container ran", pod.Name)
		assert.Equal(t, int32(0), term.ExitCode)
		assert.Equal(t, corev1.PodSucceeded, pod.Status.Phase)
	}
}

// TestWorkspaceUnpullableImageFailsRun: an image the node cannot pull (the
// engine image in the init container, or the runner image) fails the run
// within seconds with the kubelet's reason, instead of holding the
// Workspace until the run's deadline; the Job is removed.
func TestWorkspaceUnpullableImageFailsRun(t *testing.T) {
	env.Require(t)
	const badEngine, badRunner = "registry.invalid/magos-engine-opentofu:1.10.6", "registry.invalid/magos-runner:0"
	s := newStackWith(t, stackOptions{UnpullableImages: []string{badEngine, badRunner}})
	s.gitRepository("infra", copyConfig(t, "hello"))

	cases := []struct {
		name, image string
		mutate      func(*magosv1.Workspace)
		container   string
	}{
		{name: "bad-engine", image: badEngine, container: `init container "engine"`, mutate: func(ws *magosv1.Workspace) {
			ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Image: "registry.invalid/magos-engine-opentofu:{version}"}
		}},
		{name: "bad-runner", image: badRunner, container: `container "runner"`, mutate: func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Image: badRunner}
			ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Image: config.DefaultOpenTofuImage}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			s.newWorkspace(tc.name, "infra", func(ws *magosv1.Workspace) {
				tc.mutate(ws)
				if ws.Spec.Runner == nil {
					ws.Spec.Runner = &magosv1.RunnerSpec{}
				}
				ws.Spec.Runner.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
			})
			ws := s.waitWorkspace(tc.name, time.Minute, "fails on the image pull", func(ws *magosv1.Workspace) bool {
				return len(ws.Status.History) > 0 && ws.Status.Phase == magosv1.PhaseFailed
			})
			t.Logf("run failed %s after the Workspace was created (deadline 10m)", time.Since(start).Round(time.Millisecond))
			last := ws.Status.History[0]
			assert.Equal(t, magosv1.ReasonImagePullFailed, last.Reason)
			assert.Contains(t, last.Message, tc.container)
			assert.Contains(t, last.Message, tc.image)
			assert.Contains(t, last.Message, "ErrImagePull")
			ready := conditions.Get(ws, magosv1.ReadyCondition)
			require.NotNil(t, ready)
			assert.Equal(t, magosv1.ReasonImagePullFailed, ready.Reason)
			assert.Contains(t, ready.Message, tc.image)
			assert.Nil(t, ws.Status.CurrentRun)

			require.Eventually(t, func() bool {
				var jobs batchv1.JobList
				err := env.Client.List(context.Background(), &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: tc.name})
				return err == nil && len(jobs.Items) == 0
			}, 30*time.Second, 100*time.Millisecond, "the failed run's Job is deleted")
		})
	}
}

// TestWorkspaceWithoutEngineImageStalls: an engine with no image anywhere
// (terraform: Magos ships none) stalls with the places it looked; an image
// that names no engine is refused at admission.
func TestWorkspaceWithoutEngineImageStalls(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("tf", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineTerraform, Version: "1.5.7"}
	})
	ws := s.waitWorkspace("tf", time.Minute, "stalls", func(ws *magosv1.Workspace) bool {
		return conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	stalled := conditions.Get(ws, magosv1.StalledCondition)
	assert.Equal(t, magosv1.ReasonEngineImageNotConfigured, stalled.Reason)
	assert.Contains(t, stalled.Message, "no engine image for terraform 1.5.7")
	assert.Contains(t, stalled.Message, "--engine-image=terraform=<image>")
	assert.Equal(t, 0, countJobs(t, s.ns, "tf", magosv1.RunPlan))

	bad := &magosv1.Workspace{}
	bad.Name, bad.Namespace = "no-engine", s.ns
	bad.Spec.SourceRef = magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}
	bad.Spec.Terraform = &magosv1.TerraformSpec{Image: "corp.example/engine:{version}"}
	err := env.Client.Create(context.Background(), bad)
	require.ErrorContains(t, err, "image needs engine")
	bad.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Image: "corp.example/engine:{tag}"}
	require.ErrorContains(t, env.Client.Create(context.Background(), bad), "spec.terraform.image")
}

// TestEngineImageFollowsImageAllowList: with the cluster's image allow-list
// set, an engine image a Workspace chooses must match it like a runner
// image (it runs in the runner Pod); the controller's own template is the
// admin's choice.
func TestEngineImageFollowsImageAllowList(t *testing.T) {
	env.Require(t)
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) {
		o.Guards.AllowedRunnerImages = []string{"magos-runner:*"}
	}})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("own-engine", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Image: "elsewhere.example/tofu:{version}"}
	})
	ws := s.waitWorkspace("own-engine", time.Minute, "stalls", func(ws *magosv1.Workspace) bool {
		return conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	stalled := conditions.Get(ws, magosv1.StalledCondition)
	assert.Equal(t, magosv1.ReasonEngineImageNotAllowed, stalled.Reason)
	assert.Contains(t, stalled.Message, "elsewhere.example/tofu:1.10.6")
	assert.Equal(t, 0, countJobs(t, s.ns, "own-engine", magosv1.RunPlan), "no run starts")

	s.newWorkspace("default-engine", "infra", nil)
	s.waitWorkspace("default-engine", 3*time.Minute, "applies with the controller's engine image", appliedRevision(rev))
}
