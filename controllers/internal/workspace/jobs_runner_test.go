package workspace

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// TestRunnerConfigurationShapesThePod pins where each runner setting lands
// in the run's Job: Pod labels (Magos's own winning), annotations,
// affinity, priority class, pull secrets for every container, the IDs
// with the hardened context kept, read-only volumes and the CLI
// configuration that wins over the operator's.
func TestRunnerConfigurationShapesThePod(t *testing.T) {
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"infra"}}}}}}}}
	ws := workspaceWithRunner(&magosv1.RunnerSpec{
		Env:               []magosv1.EnvEntry{literal("HTTPS_PROXY", "http://proxy:3128"), fromSecret("GITHUB_TOKEN", "gh", "token")},
		Volumes:           []magosv1.RunnerVolume{mounted("ca", "/etc/ssl/certs", "ca"), {Name: "netrc", MountPath: "/srv/netrc", Secret: &magosv1.SecretVolume{SecretName: "netrc", Items: []magosv1.KeyPath{{Key: "netrc", Path: ".netrc"}}}}},
		CLIConfig:         &magosv1.CLIConfigSpec{SecretName: "mirror", Key: "config"},
		PodLabels:         map[string]string{"sidecar.istio.io/inject": "false", magosv1.WorkspaceLabel: "spoofed"},
		PodAnnotations:    map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
		Affinity:          affinity,
		PriorityClassName: "infra-runs",
		ImagePullSecrets:  []magosv1.LocalObjectReference{{Name: "registry"}},
		SecurityContext:   &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](1000)},
	})
	r := runnerTestReconciler()
	r.Options.RunnerEnv = []string{"TF_CLI_CONFIG_FILE=/operator/tofurc"}
	r.Options.RunnerImagePullSecrets = []string{"cluster-registry", "registry"}
	s, err := settingsOf(r, ws, inputs{})
	require.NoError(t, err)
	s.Timeout = time.Minute
	job := r.buildJob(ws, runjob.Run{Phase: magosv1.RunPlan, ID: "abc"}, s)
	pod := job.Spec.Template

	assert.Equal(t, "false", pod.Labels["sidecar.istio.io/inject"])
	assert.Equal(t, ws.Name, pod.Labels[magosv1.WorkspaceLabel], "Magos's own labels win")
	assert.Equal(t, job.Labels[magosv1.RunLabel], pod.Labels[magosv1.RunLabel])
	assert.NotContains(t, job.Labels, "sidecar.istio.io/inject", "Pod labels stay on the Pod")
	assert.Equal(t, map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}, pod.Annotations)
	assert.Equal(t, affinity, pod.Spec.Affinity)
	assert.Equal(t, "infra-runs", pod.Spec.PriorityClassName)
	assert.Equal(t, []corev1.LocalObjectReference{{Name: "cluster-registry"}, {Name: "registry"}}, pod.Spec.ImagePullSecrets,
		"pull secrets are Pod-wide: the cluster's defaults, then the Workspace's, each once")
	require.Len(t, pod.Spec.InitContainers, 1, "the engine image's init container pulls with the same secrets")

	sc := pod.Spec.SecurityContext
	assert.Equal(t, int64(1000), *sc.RunAsUser)
	assert.Equal(t, runjob.DefaultRunnerID, *sc.RunAsGroup, "an unset ID keeps the default")
	assert.Equal(t, runjob.DefaultRunnerID, *sc.FSGroup)
	assert.True(t, *sc.RunAsNonRoot)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		assert.Equal(t, magosv1.RunContainerSecurityContext(), c.SecurityContext, "container %s keeps the hardened context", c.Name)
	}

	runner := pod.Spec.Containers[0]
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range runner.VolumeMounts {
		mounts[m.MountPath] = m
	}
	for path, want := range map[string]corev1.VolumeSource{
		"/etc/ssl/certs": {ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ca"}}},
		"/srv/netrc":     {Secret: &corev1.SecretVolumeSource{SecretName: "netrc", Items: []corev1.KeyToPath{{Key: "netrc", Path: ".netrc"}}}},
		"/etc/magos/cli-config": {Secret: &corev1.SecretVolumeSource{SecretName: "mirror",
			Items: []corev1.KeyToPath{{Key: "config", Path: "config.tfrc"}}}},
	} {
		m, ok := mounts[path]
		require.True(t, ok, "a mount at %s", path)
		assert.True(t, m.ReadOnly, "%s is read-only", path)
		assert.Equal(t, want, volumes[m.Name].VolumeSource, "the volume at %s", path)
	}

	last := map[string]corev1.EnvVar{}
	for _, e := range runner.Env {
		last[e.Name] = e
	}
	assert.Equal(t, magosv1.CLIConfigPath, last["TF_CLI_CONFIG_FILE"].Value, "the kubelet keeps the last entry: cliConfig wins over --runner-env")
	assert.Equal(t, "http://proxy:3128", last["HTTPS_PROXY"].Value)
	require.NotNil(t, last["GITHUB_TOKEN"].ValueFrom, "a Secret-backed value stays a reference")
	assert.Equal(t, "gh", last["GITHUB_TOKEN"].ValueFrom.SecretKeyRef.Name)
	assert.Contains(t, strings.Split(last[magosv1.EnvSensitiveEnv].Value, ","), "GITHUB_TOKEN", "and is masked")
	assert.NotContains(t, strings.Split(last[magosv1.EnvSensitiveEnv].Value, ","), "HTTPS_PROXY")
	operator := slices.IndexFunc(runner.Env, func(e corev1.EnvVar) bool { return e.Value == "/operator/tofurc" })
	assert.Less(t, slices.IndexFunc(runner.Env, func(e corev1.EnvVar) bool { return e.Name == "HTTPS_PROXY" }), operator, "runner env comes before the operator's")
}

// TestRunnerPodDefaults pins the runner Pod of a Workspace that configures
// nothing: the default IDs, no extra labels, annotations, volumes or pull
// secrets.
func TestRunnerPodDefaults(t *testing.T) {
	ws := workspaceWithRunner(nil)
	r := runnerTestReconciler()
	s, err := settingsOf(r, ws, inputs{})
	require.NoError(t, err)
	job := r.buildJob(ws, runjob.Run{Phase: magosv1.RunApply, ID: "abc"}, s)
	pod := job.Spec.Template
	assert.Equal(t, job.Labels, pod.Labels, "the Pod carries Magos's labels only")
	assert.Nil(t, pod.Annotations)
	assert.Nil(t, pod.Spec.ImagePullSecrets)
	assert.Nil(t, pod.Spec.Affinity)
	assert.Equal(t, runjob.DefaultRunnerID, *pod.Spec.SecurityContext.RunAsUser)
	for _, e := range pod.Spec.Containers[0].Env {
		assert.NotEqual(t, "TF_CLI_CONFIG_FILE", e.Name, "no CLI configuration unless one is given")
	}
}

// TestRunnerTokenOnlyInTheRunner: the Pod mounts no ServiceAccount token by
// itself; the runner container alone mounts the API credentials where
// clients look for them, so the engine's init container (and a sidecar a
// webhook might add) runs without the runner identity.
func TestRunnerTokenOnlyInTheRunner(t *testing.T) {
	ws := workspaceWithRunner(nil)
	r := runnerTestReconciler()
	s, err := settingsOf(r, ws, inputs{})
	require.NoError(t, err)
	s.EngineImage = "engine:1"
	pod := r.buildJob(ws, runjob.Run{Phase: magosv1.RunApply, ID: "abc"}, s).Spec.Template.Spec
	require.NotNil(t, pod.AutomountServiceAccountToken)
	assert.False(t, *pod.AutomountServiceAccountToken)
	mountsAPI := func(c corev1.Container) bool {
		return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == runjob.APIAccessDir })
	}
	assert.True(t, mountsAPI(pod.Containers[0]), "the runner reaches the API")
	require.NotEmpty(t, pod.InitContainers)
	for _, c := range pod.InitContainers {
		assert.False(t, mountsAPI(c), "init container %s gets no token", c.Name)
	}
}

// TestRunnerEnvIsNotExpanded: the kubelet expands $(NAME) in env values
// against the variables defined before them, the Workspace's Secret-backed
// inputs among them. The controller's own entries carry user-set strings
// (the path, plan addresses, output names): their $ is escaped as $$, which
// the kubelet turns back into $, so a path of "$(TF_VAR_password)" reaches
// the runner as written, not as the Secret's value. The Workspace's own env
// keeps its expansion.
func TestRunnerEnvIsNotExpanded(t *testing.T) {
	greeting := "$(HOME)"
	ws := workspaceWithRunner(&magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: "GREETING", Value: &greeting}}})
	ws.Spec.Path = "$(TF_VAR_password)/app"
	ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: "out", Names: []string{"a$b"}}
	r := runnerTestReconciler()
	s, err := settingsOf(r, ws, inputs{})
	require.NoError(t, err)
	job := r.buildJob(ws, runjob.Run{Phase: magosv1.RunApply, ID: "abc"}, s)
	got := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		got[e.Name] = e.Value
	}
	assert.Equal(t, "$$(TF_VAR_password)/app", got[magosv1.EnvPath])
	assert.Equal(t, "a$$b", got[magosv1.EnvOutputNames])
	assert.Equal(t, "$(HOME)", got["GREETING"], "the Workspace's own env is expanded as it asks")
}
