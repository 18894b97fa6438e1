package clustercheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/view"
)

func TestRunImagesOf(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Args: []string{"--leader-elect", "--runner-image=reg.example/magos/magos-runner:0.1.0", "--runner-image-pull-secrets=pull-a, pull-b,", "--runner-image-pull-secrets=pull-a",
			"--default-engine-version=1.10.6", "--engine-image=opentofu=reg.example/magos/magos-engine-opentofu:{version}"},
	}}}}}}
	im, err := runImagesOf(d)
	require.NoError(t, err)
	assert.Equal(t, runImages{Runner: "reg.example/magos/magos-runner:0.1.0", Engine: "reg.example/magos/magos-engine-opentofu:1.10.6",
		EngineName: "opentofu 1.10.6", PullSecrets: []string{"pull-a", "pull-b"}}, im)

	pod := imageCheckPod("team-a", im)
	assert.Equal(t, []corev1.LocalObjectReference{{Name: "pull-a"}, {Name: "pull-b"}}, pod.Spec.ImagePullSecrets, "pulled with the runners' Secrets")
	assert.Equal(t, im.Engine, pod.Spec.InitContainers[0].Image)
	assert.Equal(t, im.Runner, pod.Spec.Containers[0].Image)

	_, err = runImagesOf(&appsv1.Deployment{})
	assert.Error(t, err, "a Deployment without --runner-image is not the workspace-controller's")
}

func TestImageResults(t *testing.T) {
	im := runImages{Runner: "r:1", Engine: "e:1", EngineName: "opentofu 1.10.6", PullSecrets: []string{"pull"}}
	status := func(name string, st corev1.ContainerState) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: st}
	}
	exited := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Completed"}}
	}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "pull access denied"}}
	}
	tests := []struct {
		name         string
		phase        corev1.PodPhase
		engine       *corev1.ContainerStatus
		runner       *corev1.ContainerStatus
		engineStatus view.CheckStatus
		runnerStatus view.CheckStatus
		done         bool
	}{
		{"not scheduled yet", corev1.PodPending, nil, nil, view.CheckWarn, view.CheckWarn, false},
		{"both ran", corev1.PodSucceeded, new(status(magosv1.EngineInitContainer, exited(0))), new(status("runner", exited(0))), view.CheckOK, view.CheckOK, true},
		{"the engine image is refused", corev1.PodPending, new(status(magosv1.EngineInitContainer, waiting("ImagePullBackOff"))), new(status("runner", waiting("PodInitializing"))), view.CheckFail, view.CheckWarn, true},
		{"the runner image is refused", corev1.PodPending, new(status(magosv1.EngineInitContainer, exited(0))), new(status("runner", waiting("ErrImagePull"))), view.CheckOK, view.CheckFail, true},
		{"an image that is not Magos's", corev1.PodFailed, new(status(magosv1.EngineInitContainer, exited(0))), new(status("runner", exited(127))), view.CheckOK, view.CheckFail, true},
		{"the runner container cannot start", corev1.PodPending, new(status(magosv1.EngineInitContainer, exited(0))), new(status("runner", waiting("CreateContainerConfigError"))), view.CheckOK, view.CheckFail, true},
		{"the Pod failed before the runner started", corev1.PodFailed, new(status(magosv1.EngineInitContainer, exited(1))), nil, view.CheckFail, view.CheckFail, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := imageCheckPod("team-a", im)
			pod.Status.Phase = tt.phase
			if tt.engine != nil {
				pod.Status.InitContainerStatuses = []corev1.ContainerStatus{*tt.engine}
			}
			if tt.runner != nil {
				pod.Status.ContainerStatuses = []corev1.ContainerStatus{*tt.runner}
			}
			results, done := imageResults(pod, im)
			require.Len(t, results, 2)
			assert.Equal(t, tt.engineStatus, results[0].Status, "engine: %+v", results[0])
			assert.Equal(t, tt.runnerStatus, results[1].Status, "runner: %+v", results[1])
			for _, r := range results {
				if r.Status == view.CheckFail {
					assert.NotEmpty(t, r.Advice, "a failed check says what to do")
				}
			}
			if tt.name == "the engine image is refused" {
				assert.Contains(t, results[0].Advice, "create the pull Secret in team-a")
			}
			assert.Equal(t, tt.done, done)
		})
	}
}

func TestReachResult(t *testing.T) {
	im := runImages{Runner: "r:1", ReachURL: "http://proxy:9443", ReachWhat: "artifact proxy (http://proxy:9443)", ProxyURL: "http://proxy:9443"}
	pod := imageCheckPod("team-a", im)
	assert.Equal(t, []string{magosv1.RunnerReach, "http://proxy:9443"}, pod.Spec.Containers[0].Args, "the runner asks where runs fetch artifacts")
	assert.Equal(t, magosv1.ManagedByValue, pod.Labels[magosv1.ManagedByLabel], "NetworkPolicies see a runner")

	exited := func(code int32, msg string) *corev1.ContainerStatus {
		return &corev1.ContainerStatus{Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}}}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{*exited(magosv1.ExitUnreachable, "cannot reach http://proxy:9443: i/o timeout\n")}
	pod.Status.Phase = corev1.PodFailed
	results, done := imageResults(pod, im)
	require.True(t, done)
	require.Len(t, results, 2)
	assert.Equal(t, view.CheckOK, results[0].Status, "the runner image was pulled and ran")
	assert.Equal(t, view.CheckFail, results[1].Status)
	assert.Equal(t, "a runner in team-a cannot reach the artifact proxy (http://proxy:9443): cannot reach http://proxy:9443: i/o timeout", results[1].Detail)
	assert.Contains(t, results[1].Advice, "a NetworkPolicy blocks it")

	assert.Equal(t, view.CheckOK, reachResult("team-a", im, exited(0, "")).Status)
	assert.Equal(t, view.CheckWarn, reachResult("team-a", im, nil).Status, "not asked before the runner ran")
	direct := runImages{ReachWhat: "source-controller"}
	assert.Contains(t, reachResult("team-a", direct, exited(magosv1.ExitUnreachable, "")).Advice, "fluxSourceAccess.enabled", "without the proxy, the source-controller side")
}

func TestExpandServiceEnv(t *testing.T) {
	services := []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "magos-workspace-controller-artifacts"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.12", Ports: []corev1.ServicePort{{Port: 9443}}}}}
	assert.Equal(t, "http://10.96.0.12:9443",
		expandServiceEnv("http://$(MAGOS_WORKSPACE_CONTROLLER_ARTIFACTS_SERVICE_HOST):$(MAGOS_WORKSPACE_CONTROLLER_ARTIFACTS_SERVICE_PORT)", services))
	assert.Equal(t, "http://$(OTHER_SERVICE_HOST):1", expandServiceEnv("http://$(OTHER_SERVICE_HOST):1", services), "no such Service: left as is")
}
