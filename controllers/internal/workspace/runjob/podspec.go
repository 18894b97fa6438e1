package runjob

import (
	"cmp"
	"maps"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Paths of the runner's own volumes.
const (
	cliConfigVolume = "cli-config"
	// userVolumePrefix sets the runner volumes' Pod names apart from Magos's.
	userVolumePrefix = "vol-"
)

// DefaultRunnerID is the UID and GIDs a runner Pod runs as unless
// runner.securityContext says otherwise.
const DefaultRunnerID int64 = 65532

// runnerVolumes renders the runner volumes and the CLI configuration as Pod
// volumes and read-only mounts of the runner container.
func runnerVolumes(rs *magosv1.RunnerSpec) ([]corev1.Volume, []corev1.VolumeMount) {
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, v := range rs.Volumes {
		pv := corev1.Volume{Name: userVolumePrefix + v.Name}
		switch {
		case v.Secret != nil:
			pv.Secret = &corev1.SecretVolumeSource{SecretName: v.Secret.SecretName, Items: keyPaths(v.Secret.Items)}
		case v.ConfigMap != nil:
			pv.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: v.ConfigMap.Name}, Items: keyPaths(v.ConfigMap.Items)}
		}
		volumes = append(volumes, pv)
		mounts = append(mounts, corev1.VolumeMount{Name: pv.Name, MountPath: v.MountPath, ReadOnly: true})
	}
	if c := rs.CLIConfig; c != nil {
		key := cmp.Or(c.Key, magosv1.DefaultCLIConfigKey)
		dir, file := path.Dir(magosv1.CLIConfigPath), path.Base(magosv1.CLIConfigPath)
		volumes = append(volumes, corev1.Volume{Name: cliConfigVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: c.SecretName, Items: []corev1.KeyToPath{{Key: key, Path: file}}},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: cliConfigVolume, MountPath: dir, ReadOnly: true})
	}
	return volumes, mounts
}

func keyPaths(items []magosv1.KeyPath) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, it := range items {
		out = append(out, corev1.KeyToPath{Key: it.Key, Path: it.Path})
	}
	return out
}

// imagePullSecrets renders the runner Pod's pull secrets: the cluster's
// defaults (--runner-image-pull-secrets), then the runner spec's, each name once.
func imagePullSecrets(defaults []string, refs []magosv1.LocalObjectReference) []corev1.LocalObjectReference {
	var out []corev1.LocalObjectReference
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, corev1.LocalObjectReference{Name: name})
		}
	}
	for _, name := range defaults {
		add(name)
	}
	for _, r := range refs {
		add(r.Name)
	}
	return out
}

// podSecurityContext is the runner Pod's security context: non-root with
// the runtime's default seccomp profile, as the IDs runner.securityContext
// sets or 65532.
func podSecurityContext(sc *magosv1.RunnerSecurityContext) *corev1.PodSecurityContext {
	if sc == nil {
		sc = &magosv1.RunnerSecurityContext{}
	}
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(ptr.Deref(sc.RunAsUser, DefaultRunnerID)),
		RunAsGroup:     ptr.To(ptr.Deref(sc.RunAsGroup, DefaultRunnerID)),
		FSGroup:        ptr.To(ptr.Deref(sc.FSGroup, DefaultRunnerID)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// podLabels are the runner Pod's labels: the runner's podLabels with
// Magos's own over them, so selection and accounting of runs hold.
func podLabels(user, own map[string]string) map[string]string {
	out := maps.Clone(user)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, own)
	return out
}

// engineInitContainer is the init container that copies the engine from its
// image into the engines volume, hardened like the runner container. The
// image's entrypoint knows its engine and version; it gets the directory.
func engineInitContainer(image string) corev1.Container {
	return corev1.Container{
		Name:  magosv1.EngineInitContainer,
		Image: image,
		Args:  []string{magosv1.EngineInstallDir},
		VolumeMounts: []corev1.VolumeMount{
			{Name: magosv1.EngineVolume, MountPath: magosv1.EngineInstallDir},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			// Copying leaves the binary in the page cache, which counts
			// against the limit until it is written back.
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          magosv1.RunContainerSecurityContext(),
	}
}
