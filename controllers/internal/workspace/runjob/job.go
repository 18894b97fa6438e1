package runjob

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Settings are the Workspace's resolved settings a run's Job is built
// from (its Project's defaults under its own, variables resolved).
type Settings struct {
	Engine  magosv1.Engine
	Version string
	Runner  magosv1.RunnerSpec
	// EngineImage is the image the run copies its engine from; empty when
	// the runner image holds the engine.
	EngineImage string
	// Timeout is the run's deadline.
	Timeout time.Duration
	// Env, RunnerEnv and Sensitive are the resolved runner environment: Env from
	// VariableSets and inline variables, RunnerEnv from the runner's env;
	// Sensitive names the entries of both to mask.
	Env, RunnerEnv []corev1.EnvVar
	Sensitive      []string
}

// Config is what the controller's options set in every run's Job.
type Config struct {
	// VersionsDir is where the runner finds engine binaries.
	VersionsDir string
	// RunnerEnv are the operator's NAME=VALUE entries (--runner-env).
	RunnerEnv []string
	// ShutdownWait is how long the engine gets to stop on a signal;
	// TerminationGrace the Pod's grace period in seconds.
	ShutdownWait     time.Duration
	TerminationGrace int64
	// ArtifactProxyURL is the artifact proxy's base URL as runner Pods
	// reach it; empty: runners fetch from the source's own URL.
	ArtifactProxyURL string
	// ScratchSize bounds the runner's work directory.
	ScratchSize resource.Quantity
	// RunnerRequests are the runner's default resource requests.
	RunnerRequests corev1.ResourceList
	// JobTTL is how long a finished Job is kept.
	JobTTL time.Duration
	// RunnerImagePullSecrets name the Secrets every runner Pod pulls its
	// images with (--runner-image-pull-secrets).
	RunnerImagePullSecrets []string
}

// VariableEnv renders the Workspace's inline variables as TF_VAR_ env
// entries; values from Secrets stay valueFrom references, and an outputRef
// becomes one on its Workspace's outputs Secret (outputSecrets, by
// Workspace name). It also returns the names of the entries whose values
// must be masked: every one read from a Secret.
func VariableEnv(vars []magosv1.Variable, outputSecrets map[string]string) (env []corev1.EnvVar, sensitive []string) {
	for _, v := range vars {
		e := corev1.EnvVar{Name: "TF_VAR_" + v.Name}
		switch {
		case v.Value != nil:
			e.Value = *v.Value
		case v.ValueFrom != nil && v.ValueFrom.OutputRef != nil:
			ref := v.ValueFrom.OutputRef
			e.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: outputSecrets[ref.Workspace]}, Key: ref.Output,
			}}
		case v.ValueFrom != nil:
			e.ValueFrom = &corev1.EnvVarSource{
				SecretKeyRef:    v.ValueFrom.SecretKeyRef,
				ConfigMapKeyRef: v.ValueFrom.ConfigMapKeyRef,
			}
		}
		if v.Sensitive || (e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil) {
			sensitive = append(sensitive, e.Name)
		}
		env = append(env, e)
	}
	return env, sensitive
}

// RunnerContainer is the name of the runner's container in a run's Pod.
const RunnerContainer = "runner"

// Job renders the Job of run rn for ws. The container's environment is
// the user's (VariableSets, inline variables, runner env), then the
// operator's --runner-env, then the controller's own (TF_CLI_CONFIG_FILE
// among them when the runner has a cliConfig): the kubelet keeps the last
// of duplicate names, so the controller's entries win.
func Job(ws *magosv1.Workspace, rn Run, s Settings, c Config) *batchv1.Job {
	env := append(slices.Clone(s.Env), s.RunnerEnv...)
	for _, kv := range c.RunnerEnv {
		name, value, _ := strings.Cut(kv, "=")
		env = append(env, corev1.EnvVar{Name: name, Value: value})
	}
	// The operator's values may be credentials: masked like sensitive input.
	sensitive := append(slices.Clone(s.Sensitive), envNames(c.RunnerEnv)...)
	own := len(env)
	spec := magosv1.RunSpec{
		Namespace: ws.Namespace, Workspace: ws.Name, WorkspaceUID: string(ws.UID), RunID: rn.ID,
		ArtifactDigest: rn.Artifact.Digest, Revision: rn.Artifact.Revision, Path: ws.Spec.Path,
		Engine: string(s.Engine), EngineVersion: s.Version, VersionsDir: c.VersionsDir,
		PlanID: rn.PlanID, PlanDigest: rn.PlanDigest, PlanBundleDigest: rn.PlanBundleDigest,
		StateSecret: magosv1.StateSecretName(ws.Name), LockLease: magosv1.LockLeaseName(ws.Name),
		WorkDir: "/tmp/magos", TerminationMessage: magosv1.DefaultTerminationMessagePath,
		SensitiveEnv: strings.Join(sensitive, ","), ShutdownWait: c.ShutdownWait,
		Drift: rn.Drift, PlanMode: string(rn.Mode),
	}
	if rq := rn.Request; rn.Phase == magosv1.RunPlan && rq.Scoped() {
		spec.PlanTargets, spec.PlanReplace = rq.Targets, rq.Replace
	}
	if rn.Phase != magosv1.RunPlan {
		spec.ErroredStateSecret = magosv1.ErroredStateSecretName(ws.Name)
	}
	if o := ws.Spec.Outputs; o != nil {
		spec.OutputsSecret, spec.OutputNames = o.SecretName, o.Names
	}
	var tokenVolume *corev1.Volume
	var tokenMount *corev1.VolumeMount
	spec.ArtifactURL, spec.ArtifactTokenFile, tokenVolume, tokenMount = artifactAccess(c.ArtifactProxyURL, rn.Artifact)
	if b := ws.Spec.Backend; b != nil && b.SecretRef != nil {
		spec.BackendConfig = "/etc/magos/backend/backend.tf"
	}
	env = append(env, spec.Env()...)
	env = append(env, corev1.EnvVar{Name: "HOME", Value: "/tmp/magos/home"})
	if s.Runner.CLIConfig != nil {
		env = append(env, corev1.EnvVar{Name: "TF_CLI_CONFIG_FILE", Value: magosv1.CLIConfigPath})
	}
	escapeExpansion(env[own:])
	var volumes []corev1.Volume
	mounts := []corev1.VolumeMount{{Name: "work", MountPath: "/tmp"}}
	if tokenVolume != nil {
		volumes, mounts = append(volumes, *tokenVolume), append(mounts, *tokenMount)
	}
	apiVolume, apiMount := apiAccess()
	volumes, mounts = append(volumes, apiVolume), append(mounts, apiMount)
	scratch := c.ScratchSize
	volumes = append(volumes, corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &scratch}}})
	if b := ws.Spec.Backend; b != nil && b.SecretRef != nil {
		volumes = append(volumes, corev1.Volume{Name: "backend", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: b.SecretRef.Name, Items: []corev1.KeyToPath{{Key: "backend.tf", Path: "backend.tf"}}},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: "backend", MountPath: "/etc/magos/backend", ReadOnly: true})
	}

	// The engine: copied from its image by an init container into an
	// emptyDir that the runner reads, read-only, as its versions directory;
	// without an engine image the runner image holds it.
	var initContainers []corev1.Container
	if s.EngineImage != "" {
		volumes = append(volumes, corev1.Volume{Name: magosv1.EngineVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		mounts = append(mounts, corev1.VolumeMount{Name: magosv1.EngineVolume, MountPath: c.VersionsDir, ReadOnly: true})
		initContainers = append(initContainers, engineInitContainer(s.EngineImage))
	}
	userVolumes, userMounts := runnerVolumes(&s.Runner)
	volumes, mounts = append(volumes, userVolumes...), append(mounts, userMounts...)

	container := corev1.Container{
		Name:                     RunnerContainer,
		Image:                    s.Runner.Image,
		Args:                     []string{rn.Phase},
		Env:                      env,
		VolumeMounts:             mounts,
		TerminationMessagePath:   magosv1.DefaultTerminationMessagePath,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          magosv1.RunContainerSecurityContext(),
		Resources:                runnerResources(c.RunnerRequests, s.Runner.Resources),
	}

	labels := Labels(ws)
	labels[magosv1.PhaseLabel] = rn.Phase
	labels[magosv1.RunLabel] = rn.ID
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        JobName(ws, rn),
			Namespace:   ws.Namespace,
			Labels:      labels,
			Annotations: Annotations(rn),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(s.Timeout.Seconds())),
			TTLSecondsAfterFinished: ptr.To(int32(c.JobTTL.Seconds())),
			PodFailurePolicy:        podFailurePolicy(rn.Phase),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels(s.Runner.PodLabels, labels), Annotations: s.Runner.PodAnnotations},
				Spec: corev1.PodSpec{
					ServiceAccountName:            ServiceAccount(ws, rn.Phase),
					AutomountServiceAccountToken:  ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To(c.TerminationGrace),
					RestartPolicy:                 corev1.RestartPolicyNever,
					NodeSelector:                  s.Runner.NodeSelector,
					Tolerations:                   s.Runner.Tolerations,
					Affinity:                      s.Runner.Affinity,
					PriorityClassName:             s.Runner.PriorityClassName,
					ImagePullSecrets:              imagePullSecrets(c.RunnerImagePullSecrets, s.Runner.ImagePullSecrets),
					Volumes:                       volumes,
					InitContainers:                initContainers,
					Containers:                    []corev1.Container{container},
					SecurityContext:               podSecurityContext(s.Runner.SecurityContext),
				},
			},
		},
	}
}

// runnerResources are the runner container's resources: the user's
// (spec.runner.resources), with the controller's default request for each
// resource the user neither requests nor limits. A limit alone makes the
// kubelet's request the limit, so no default is added under it.
func runnerResources(defaults corev1.ResourceList, user *corev1.ResourceRequirements) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	if user != nil {
		out = *user.DeepCopy()
	}
	for name, q := range defaults {
		if _, ok := out.Requests[name]; ok {
			continue
		}
		if _, ok := out.Limits[name]; ok {
			continue
		}
		if out.Requests == nil {
			out.Requests = corev1.ResourceList{}
		}
		out.Requests[name] = q.DeepCopy()
	}
	return out
}

// podFailurePolicy says what a failed runner Pod means for its Job, whose
// backoffLimit is 0 (any counted failure fails it).
//
// An exit code of the runner's own (RunnerExitCodes) fails the Job at once:
// the runner has reported and a new Pod would only repeat the run. A Pod
// disrupted from outside (DisruptionTarget: preemption, API-initiated or
// taint-based eviction, graceful node shutdown) is different for plans and
// applies. A plan changes nothing but its own plan Secrets, so a disrupted
// plan Pod is ignored and the Job starts a new one. An apply or destroy may
// have changed real resources before it was stopped: it is never repeated
// blindly with the same saved plan; the Job fails and the controller plans
// again from the state the interrupted run wrote back.
func podFailurePolicy(phase string) *batchv1.PodFailurePolicy {
	disrupted := batchv1.PodFailurePolicyActionFailJob
	if phase == magosv1.RunPlan {
		disrupted = batchv1.PodFailurePolicyActionIgnore
	}
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{
			Action:          disrupted,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		},
		{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(RunnerContainer),
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:        slices.Clone(magosv1.RunnerExitCodes),
			},
		},
	}}
}

// escapeExpansion escapes $ as $$ in the values of the controller's own
// env entries: the kubelet expands $(NAME) in every env value against the
// variables defined before it, so a path or plan address holding
// $(TF_VAR_password) would otherwise reach the runner as that Secret's
// value. The Workspace's and operator's own entries keep their expansion.
func escapeExpansion(env []corev1.EnvVar) {
	for i := range env {
		env[i].Value = strings.ReplaceAll(env[i].Value, "$", "$$")
	}
}

// envNames are the names of NAME=VALUE entries.
func envNames(entries []string) []string {
	out := make([]string, 0, len(entries))
	for _, kv := range entries {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	return out
}
