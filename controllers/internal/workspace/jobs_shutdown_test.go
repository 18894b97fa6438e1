package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

func envValue(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// TestRunnerPodOutlastsTheEngineShutdown pins that a stopped runner Pod's
// grace period covers the engine's shutdown wait, which the runner is told,
// and the runner's margin after it.
func TestRunnerPodOutlastsTheEngineShutdown(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	tests := []struct {
		name      string
		wait      time.Duration
		wantWait  string
		wantGrace int64
	}{
		{name: "default", wantWait: "30s", wantGrace: 60},
		{name: "set by flag", wait: 2 * time.Minute, wantWait: "2m0s", wantGrace: 150},
		{name: "fractions round up", wait: 1500 * time.Millisecond, wantWait: "1.5s", wantGrace: 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{Options: config.Options{RunnerShutdownWait: tt.wait}}
			job := r.buildJob(ws, runjob.Run{Phase: magosv1.RunApply, ID: "abc"}, settings{Settings: runjob.Settings{Timeout: time.Minute}})
			pod := job.Spec.Template.Spec
			require.NotNil(t, pod.TerminationGracePeriodSeconds)
			assert.Equal(t, tt.wantGrace, *pod.TerminationGracePeriodSeconds)
			wait, ok := envValue(pod.Containers[0], magosv1.EnvShutdownWait)
			require.True(t, ok, "the runner is told its shutdown wait")
			assert.Equal(t, tt.wantWait, wait)
			d, err := time.ParseDuration(wait)
			require.NoError(t, err)
			assert.Greater(t, time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second, d+magosv1.ShutdownMargin-time.Second)
		})
	}
}

// TestRunnerRequests pins the runner container's requests: the defaults
// (so runner Pods are never BestEffort), the flags' and the Workspace's.
func TestRunnerRequests(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name         string
		defaults     corev1.ResourceList
		user         *corev1.ResourceRequirements
		wantRequests corev1.ResourceList
		wantLimits   corev1.ResourceList
	}{
		{
			name:         "defaults",
			wantRequests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("256Mi")},
		},
		{
			name:         "the controller's flags",
			defaults:     corev1.ResourceList{corev1.ResourceMemory: q("1Gi")},
			wantRequests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")},
		},
		{
			name:         "the Workspace's request wins, the other default stays",
			user:         &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("2Gi")}},
			wantRequests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("2Gi")},
		},
		{
			name:         "a limit alone is the request: no default under it",
			user:         &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("128Mi")}},
			wantRequests: corev1.ResourceList{corev1.ResourceCPU: q("100m")},
			wantLimits:   corev1.ResourceList{corev1.ResourceMemory: q("128Mi")},
		},
	}
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{Options: config.Options{RunnerRequests: tt.defaults}}
			s := settings{Settings: runjob.Settings{Timeout: time.Minute, Runner: magosv1.RunnerSpec{Resources: tt.user}}}
			got := r.buildJob(ws, runjob.Run{Phase: magosv1.RunPlan, ID: "abc"}, s).Spec.Template.Spec.Containers[0].Resources
			assert.Equal(t, tt.wantRequests, got.Requests)
			assert.Equal(t, tt.wantLimits, got.Limits)
		})
	}
}

// TestRunnerJobPodFailurePolicy pins what a failed runner Pod means: the
// runner's own exit codes fail the Job at once; a disrupted plan Pod is
// replaced, a disrupted apply or destroy fails the Job (never repeated
// blindly with the same plan).
func TestRunnerJobPodFailurePolicy(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	tests := []struct {
		phase     string
		disrupted batchv1.PodFailurePolicyAction
	}{
		{magosv1.RunPlan, batchv1.PodFailurePolicyActionIgnore},
		{magosv1.RunApply, batchv1.PodFailurePolicyActionFailJob},
		{magosv1.RunDestroy, batchv1.PodFailurePolicyActionFailJob},
	}
	for _, tt := range tests {
		t.Run(tt.phase, func(t *testing.T) {
			r := &Reconciler{}
			job := r.buildJob(ws, runjob.Run{Phase: tt.phase, ID: "abc"}, settings{Settings: runjob.Settings{Timeout: time.Minute}})
			assert.Equal(t, int32(0), *job.Spec.BackoffLimit)
			assert.Equal(t, corev1.RestartPolicyNever, job.Spec.Template.Spec.RestartPolicy, "podFailurePolicy requires it")
			p := job.Spec.PodFailurePolicy
			require.NotNil(t, p)
			require.Len(t, p.Rules, 2)
			// Rules match in order: the disruption rule comes first, so an
			// evicted runner's exit code (1, interrupted) does not decide.
			disruption := p.Rules[0]
			assert.Equal(t, tt.disrupted, disruption.Action)
			assert.Equal(t, []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}, disruption.OnPodConditions)
			exit := p.Rules[1]
			assert.Equal(t, batchv1.PodFailurePolicyActionFailJob, exit.Action)
			require.NotNil(t, exit.OnExitCodes)
			assert.Equal(t, "runner", *exit.OnExitCodes.ContainerName)
			assert.Equal(t, job.Spec.Template.Spec.Containers[0].Name, *exit.OnExitCodes.ContainerName)
			assert.Equal(t, batchv1.PodFailurePolicyOnExitCodesOpIn, exit.OnExitCodes.Operator)
			assert.Equal(t, []int32{1, 2, 4, 5}, exit.OnExitCodes.Values)
			errored, _ := envValue(job.Spec.Template.Spec.Containers[0], magosv1.EnvErroredState)
			assert.Equal(t, tt.phase != magosv1.RunPlan, errored != "", "apply and destroy runs save errored state")
		})
	}
}
