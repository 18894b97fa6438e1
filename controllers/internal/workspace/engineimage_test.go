package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// settingsOf is r's effective settings of ws with inputs in, the
// effective runner derived as resolveInputs derives it.
func settingsOf(r *Reconciler, ws *magosv1.Workspace, in inputs) (settings, error) {
	in.Runner = runjob.EffectiveRunner(ws, in.Project)
	return r.effectiveSettings(ws, in)
}

func testReconciler() *Reconciler {
	return &Reconciler{Options: config.Options{
		RunnerImage:          "ghcr.io/magos-dev/magos-runner:0.1.0",
		VersionsDir:          "/opt/magos/engines",
		DefaultEngineVersion: "1.10.6",
		EngineImages:         map[magosv1.Engine]string{magosv1.EngineOpenTofu: config.DefaultOpenTofuImage},
	}}
}

func projectWith(d *magosv1.ProjectDefaults) *magosv1.Project {
	return &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: magosv1.ProjectStatus{Defaults: d}}
}

// TestEngineImageResolution pins where a run's engine image comes from:
// the Workspace, then its Project (for the engine it names), then the
// controller's template; a runner image set by the Workspace or Project
// holds the engine; no image at all stalls with the places looked at.
func TestEngineImageResolution(t *testing.T) {
	tf := func(engine magosv1.Engine, version, image string) *magosv1.TerraformSpec {
		return &magosv1.TerraformSpec{Engine: engine, Version: version, Image: image}
	}
	cases := []struct {
		name     string
		ws       magosv1.WorkspaceSpec
		project  *magosv1.ProjectDefaults
		want     string
		wantErr  string
		template map[magosv1.Engine]string
	}{
		{name: "controller template for the default engine", want: "ghcr.io/magos-dev/magos-engine-opentofu:1.10.6"},
		{name: "template gets the Workspace's version", ws: magosv1.WorkspaceSpec{Terraform: tf("", "v1.9.0", "")},
			want: "ghcr.io/magos-dev/magos-engine-opentofu:1.9.0"},
		{name: "Project default image", project: &magosv1.ProjectDefaults{Terraform: tf(magosv1.EngineOpenTofu, "1.8.1", "mirror.example/tofu:{version}")},
			want: "mirror.example/tofu:1.8.1"},
		{name: "Workspace overrides the Project",
			project: &magosv1.ProjectDefaults{Terraform: tf(magosv1.EngineOpenTofu, "", "mirror.example/tofu:{version}")},
			ws:      magosv1.WorkspaceSpec{Terraform: tf(magosv1.EngineOpenTofu, "1.10.6", "own.example/tofu@sha256:abc")},
			want:    "own.example/tofu@sha256:abc"},
		{name: "Project image of another engine does not apply",
			project: &magosv1.ProjectDefaults{Terraform: tf(magosv1.EngineTerraform, "", "corp.example/terraform:{version}")},
			ws:      magosv1.WorkspaceSpec{Terraform: tf(magosv1.EngineOpenTofu, "", "")},
			want:    "ghcr.io/magos-dev/magos-engine-opentofu:1.10.6"},
		{name: "Project image for terraform with the Workspace's version",
			project: &magosv1.ProjectDefaults{Terraform: tf(magosv1.EngineTerraform, "", "corp.example/terraform:{version}")},
			ws:      magosv1.WorkspaceSpec{Terraform: tf("", "1.5.7", "")},
			want:    "corp.example/terraform:1.5.7"},
		{name: "terraform without any image stalls", ws: magosv1.WorkspaceSpec{Terraform: tf(magosv1.EngineTerraform, "1.5.7", "")},
			wantErr: "no engine image for terraform 1.5.7: looked for spec.terraform.image, the Project's defaults.terraform.image (engine terraform) and the controller's --engine-image=terraform=<image>"},
		{name: "own runner image holds the engine", ws: magosv1.WorkspaceSpec{Terraform: tf(magosv1.EngineTerraform, "1.5.7", ""), Runner: &magosv1.RunnerSpec{Image: "corp.example/runner-with-terraform:1"}},
			want: ""},
		{name: "Project runner image holds the engine", project: &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{Image: "corp.example/runner:1"}},
			want: ""},
		{name: "own runner image with an engine image", ws: magosv1.WorkspaceSpec{Runner: &magosv1.RunnerSpec{Image: "corp.example/runner:1"}, Terraform: tf(magosv1.EngineOpenTofu, "", "corp.example/tofu:{version}")},
			want: "corp.example/tofu:1.10.6"},
		{name: "controller without an opentofu template stalls", template: map[magosv1.Engine]string{}, wantErr: "no engine image for opentofu 1.10.6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := testReconciler()
			if tc.template != nil {
				r.Options.EngineImages = tc.template
			}
			in := inputs{}
			if tc.project != nil {
				in.Project = projectWith(tc.project)
			}
			s, err := settingsOf(r, &magosv1.Workspace{Spec: tc.ws}, in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				e, ok := rerror.As(err)
				require.True(t, ok)
				assert.True(t, e.Stalling)
				assert.Equal(t, magosv1.ReasonEngineImageNotConfigured, e.Reason)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.EngineImage)
		})
	}
}

// TestRunJobDeliversEngine pins the Pod a run gets: with an engine image, a
// hardened init container copies the engine into an emptyDir that the
// runner mounts read-only at its versions directory; without one, neither.
func TestRunJobDeliversEngine(t *testing.T) {
	r := testReconciler()
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "team"}}
	rn := runjob.Run{Phase: magosv1.RunPlan, ID: "abc"}

	s, err := settingsOf(r, ws, inputs{})
	require.NoError(t, err)
	pod := r.buildJob(ws, rn, s).Spec.Template.Spec

	require.Len(t, pod.InitContainers, 1)
	ic := pod.InitContainers[0]
	assert.Equal(t, magosv1.EngineInitContainer, ic.Name)
	assert.Equal(t, "ghcr.io/magos-dev/magos-engine-opentofu:1.10.6", ic.Image)
	assert.Empty(t, ic.Command, "the image's installer is its entrypoint")
	assert.Equal(t, []string{magosv1.EngineInstallDir}, ic.Args)
	assert.Equal(t, []corev1.VolumeMount{{Name: magosv1.EngineVolume, MountPath: magosv1.EngineInstallDir}}, ic.VolumeMounts)
	assert.Equal(t, pod.Containers[0].SecurityContext, ic.SecurityContext, "hardened like the runner")
	sc := ic.SecurityContext
	assert.True(t, *sc.RunAsNonRoot)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)
	assert.Equal(t, int64(65532), *pod.SecurityContext.RunAsUser, "the Pod runs as 65532")
	assert.False(t, ic.Resources.Requests.Cpu().IsZero())
	assert.False(t, ic.Resources.Requests.Memory().IsZero())

	var engines *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == magosv1.EngineVolume {
			engines = &pod.Volumes[i]
		}
	}
	require.NotNil(t, engines)
	assert.NotNil(t, engines.EmptyDir)
	assert.Contains(t, pod.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: magosv1.EngineVolume, MountPath: "/opt/magos/engines", ReadOnly: true})
	assert.Contains(t, pod.Containers[0].Env, corev1.EnvVar{Name: magosv1.EnvVersionsDir, Value: "/opt/magos/engines"})

	ws.Spec.Runner = &magosv1.RunnerSpec{Image: "corp.example/runner-with-tofu:1"}
	s, err = settingsOf(r, ws, inputs{})
	require.NoError(t, err)
	pod = r.buildJob(ws, rn, s).Spec.Template.Spec
	assert.Empty(t, pod.InitContainers, "a runner image of one's own holds the engine")
	assert.Equal(t, "corp.example/runner-with-tofu:1", pod.Containers[0].Image)
	for _, vm := range pod.Containers[0].VolumeMounts {
		assert.NotEqual(t, "/opt/magos/engines", vm.MountPath, "nothing hides the image's versions directory")
	}
}

// TestPullFailure pins which Pod states fail a run before its deadline.
func TestPullFailure(t *testing.T) {
	waiting := func(reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "engine", Image: "x.example/e:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	cases := []struct {
		name       string
		init, main []corev1.ContainerStatus
		want       string
	}{
		{name: "initializing", init: []corev1.ContainerStatus{waiting("PodInitializing", "")}},
		{name: "creating", main: []corev1.ContainerStatus{waiting("ContainerCreating", "")}},
		{name: "config error", main: []corev1.ContainerStatus{waiting("CreateContainerConfigError", "secret missing")},
			want: `container "engine" of Pod p cannot be created (CreateContainerConfigError): secret missing`},
		{name: "init ErrImagePull", init: []corev1.ContainerStatus{waiting("ErrImagePull", "not found")},
			want: `init container "engine" of Pod p cannot pull image x.example/e:1 (ErrImagePull): not found`},
		{name: "init back-off", init: []corev1.ContainerStatus{waiting("ImagePullBackOff", "Back-off pulling image")},
			want: `init container "engine" of Pod p cannot pull image x.example/e:1 (ImagePullBackOff): Back-off pulling image`},
		{name: "runner invalid name", main: []corev1.ContainerStatus{waiting("InvalidImageName", "bad")},
			want: `container "engine" of Pod p cannot pull image x.example/e:1 (InvalidImageName): bad`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{InitContainerStatuses: tc.init, ContainerStatuses: tc.main}}
			_, msg := runjob.StartFailure(pod)
			assert.Equal(t, tc.want, msg)
		})
	}
}
