package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/approvalrules"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// run describes one run the controller wants.
type run struct {
	Phase    string
	ID       string
	Artifact artifact
	// PlanID and PlanDigest: for plan runs the ID to store under; for apply
	// runs the plan to apply and its approved digest. PlanBundleDigest is
	// the stored plan's bundle digest an apply checks.
	PlanID           string
	PlanDigest       string
	PlanBundleDigest string
	Drift            bool
	// Mode is PlanModeDestroy for a destroy plan and its apply.
	Mode magosv1.PlanMode
	// Request is the plan request a plan run plans with (-target,
	// -replace); nil for a full plan.
	Request *magosv1.PlanRequest
	// Number counts the Workspace's runs (status.runs once started);
	// Inputs is the inputs digest the run uses.
	Number int64
	Inputs string
	// ContentDigest is the digest of the files a plan run's configuration
	// reads in Artifact (configtree); empty when unknown.
	ContentDigest string
}

// runID derives a deterministic run ID, so a restarted controller computes
// the same Job name and adopts the Job instead of starting a second one.
func runID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])[:10]
}

// jobName is the deterministic name of a run's Job (at most 63 characters).
func jobName(ws *magosv1.Workspace, r run) string {
	base := ws.Name
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-.")
	}
	return base + "-" + r.Phase + "-" + r.ID
}

// settings are a Workspace's effective engine and runner settings.
type settings struct {
	Engine  magosv1.Engine
	Version string
	Runner  magosv1.RunnerSpec
	// Interval is the drift interval; AskedInterval the shorter one the
	// Workspace or its Project asked for, when --min-interval raised it.
	Interval, AskedInterval time.Duration
	Approval                magosv1.ApprovalMode
	// ApprovalRules are the compiled approval rules (the Workspace's, else
	// its Project's).
	ApprovalRules *approvalrules.Rules
	// ApprovalMaxAge is how long an approval counts (0: for ever).
	ApprovalMaxAge time.Duration
	// Timeout is the run's deadline; AskedTimeout the longer one the
	// Workspace or its Project asked for, when --max-run-timeout cut it.
	Timeout, AskedTimeout time.Duration
	// DestroyGate is how a deletion destroys (Enforce unless set).
	DestroyGate magosv1.DestroyGate
	// Retry is how failed runs are retried.
	Retry retryPolicy
	// RunnerImageSet says the Workspace or its Project chose the runner image.
	RunnerImageSet bool
	// SpecEngineImage is the engine image (template) the Workspace or its
	// Project set for Engine; EngineImage is the image the run uses, empty
	// when the runner image holds the engine.
	SpecEngineImage, EngineImage string
	// Env and Sensitive are the resolved runner environment: Env from
	// VariableSets and inline variables, RunnerEnv from the runner's env;
	// Sensitive names the entries of both to mask.
	Env, RunnerEnv []corev1.EnvVar
	Sensitive      []string
}

// effectiveSettings layers the Workspace's own settings over its Project's
// defaults over the controller's, and resolves the engine image (an error
// stalls the Workspace).
func (r *Reconciler) effectiveSettings(ws *magosv1.Workspace, in inputs) (settings, error) {
	s := settings{Engine: magosv1.EngineOpenTofu, Version: r.Options.DefaultEngineVersion,
		Approval: magosv1.ApprovalAuto, DestroyGate: magosv1.DestroyGateEnforce, Env: in.Env, Sensitive: in.Sensitive,
		Retry: retryPolicy{Interval: r.Options.RetryInterval}}
	var layers []*magosv1.ProjectDefaults
	if in.Project != nil && in.Project.Status.Defaults != nil {
		layers = append(layers, in.Project.Status.Defaults)
	}
	layers = append(layers, &magosv1.ProjectDefaults{Terraform: ws.Spec.Terraform, Interval: ws.Spec.Interval, Approval: ws.Spec.Approval,
		ApprovalMaxAge: ws.Spec.ApprovalMaxAge, Destroy: ws.Spec.Destroy, Retry: ws.Spec.Retry})
	engineImages := map[magosv1.Engine]string{}
	for _, l := range layers {
		if t := l.Terraform; t != nil {
			if t.Engine != "" {
				s.Engine = t.Engine
			}
			if t.Version != "" {
				s.Version = strings.TrimPrefix(t.Version, "v")
			}
			if t.Image != "" {
				engineImages[t.Engine] = t.Image
			}
		}
		if l.Interval != nil {
			s.Interval = l.Interval.Duration
		}
		if l.Approval != "" {
			s.Approval = l.Approval
		}
		if l.Destroy != nil && l.Destroy.Gate != "" {
			s.DestroyGate = l.Destroy.Gate
		}
		if l.ApprovalMaxAge != nil {
			s.ApprovalMaxAge = l.ApprovalMaxAge.Duration
		}
		s.Retry = s.Retry.with(l.Retry)
	}
	rules, field := ws.Spec.ApprovalRules, "spec.approvalRules"
	if len(rules) == 0 && in.Project != nil && in.Project.Status.Defaults != nil {
		rules, field = in.Project.Status.Defaults.ApprovalRules, "the Project's defaults.approvalRules"
	}
	var err error
	if s.ApprovalRules, err = approvalrules.Compile(rules, field); err != nil {
		return s, rerror.Stall(magosv1.ReasonInvalidApprovalRule, err)
	}
	if m := r.Options.MinInterval; s.Interval > 0 && s.Interval < m {
		s.Interval, s.AskedInterval = m, s.Interval
	}
	s.Runner = in.Runner
	s.RunnerImageSet = s.Runner.Image != ""
	var timeout time.Duration
	if s.Runner.Timeout != nil {
		timeout = s.Runner.Timeout.Duration
	}
	s.Timeout, s.AskedTimeout = r.Options.runTimeout(timeout)
	if s.Runner.Image == "" {
		s.Runner.Image = r.Options.RunnerImage
	}
	var runnerSensitive []string
	s.RunnerEnv, runnerSensitive = runnerEnv(s.Runner.Env)
	if err := checkRunnerConfig(&s.Runner, s.RunnerEnv, s.Env, r.Options.VersionsDir); err != nil {
		return s, err
	}
	s.Sensitive = append(slices.Clone(s.Sensitive), runnerSensitive...)
	s.SpecEngineImage = engineImages[s.Engine]
	s.EngineImage, err = r.resolveEngineImage(s)
	return s, err
}

// variableEnv renders the Workspace's inline variables as TF_VAR_ env
// entries; values from Secrets stay valueFrom references, and an outputRef
// becomes one on its Workspace's outputs Secret (outputSecrets, by
// Workspace name). It also returns the names of the entries whose values
// must be masked: every one read from a Secret.
func variableEnv(vars []magosv1.Variable, outputSecrets map[string]string) (env []corev1.EnvVar, sensitive []string) {
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

// runnerContainer is the name of the runner's container in a run's Pod.
const runnerContainer = "runner"

// buildJob renders the Job of run r for ws. The container's environment is
// the user's (VariableSets, inline variables, runner env), then the
// operator's --runner-env, then the controller's own (TF_CLI_CONFIG_FILE
// among them when the runner has a cliConfig): the kubelet keeps the last
// of duplicate names, so the controller's entries win.
func (r *Reconciler) buildJob(ws *magosv1.Workspace, rn run, s settings) *batchv1.Job {
	env := append(slices.Clone(s.Env), s.RunnerEnv...)
	for _, kv := range r.Options.RunnerEnv {
		name, value, _ := strings.Cut(kv, "=")
		env = append(env, corev1.EnvVar{Name: name, Value: value})
	}
	// The operator's values may be credentials: masked like sensitive input.
	sensitive := append(slices.Clone(s.Sensitive), r.Options.RunnerEnv.names()...)
	own := len(env)
	spec := magosv1.RunSpec{
		Namespace: ws.Namespace, Workspace: ws.Name, WorkspaceUID: string(ws.UID), RunID: rn.ID,
		ArtifactDigest: rn.Artifact.Digest, Revision: rn.Artifact.Revision, Path: ws.Spec.Path,
		Engine: string(s.Engine), EngineVersion: s.Version, VersionsDir: r.Options.VersionsDir,
		PlanID: rn.PlanID, PlanDigest: rn.PlanDigest, PlanBundleDigest: rn.PlanBundleDigest,
		StateSecret: magosv1.StateSecretName(ws.Name), LockLease: magosv1.LockLeaseName(ws.Name),
		WorkDir: "/tmp/magos", TerminationMessage: magosv1.DefaultTerminationMessagePath,
		SensitiveEnv: joinSensitive(sensitive), ShutdownWait: r.Options.shutdownWait(),
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
	spec.ArtifactURL, spec.ArtifactTokenFile, tokenVolume, tokenMount = r.Options.ArtifactProxy.artifactAccess(rn.Artifact)
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
	scratch := r.Options.scratchSize()
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
		mounts = append(mounts, corev1.VolumeMount{Name: magosv1.EngineVolume, MountPath: r.Options.VersionsDir, ReadOnly: true})
		initContainers = append(initContainers, engineInitContainer(s.EngineImage))
	}
	userVolumes, userMounts := runnerVolumes(&s.Runner)
	volumes, mounts = append(volumes, userVolumes...), append(mounts, userMounts...)

	container := corev1.Container{
		Name:                     runnerContainer,
		Image:                    s.Runner.Image,
		Args:                     []string{rn.Phase},
		Env:                      env,
		VolumeMounts:             mounts,
		TerminationMessagePath:   magosv1.DefaultTerminationMessagePath,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          hardenedContainer(),
		Resources:                runnerResources(r.Options.runnerRequests(), s.Runner.Resources),
	}

	labels := runnerLabels(ws)
	labels[magosv1.PhaseLabel] = rn.Phase
	labels[magosv1.RunLabel] = rn.ID
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        jobName(ws, rn),
			Namespace:   ws.Namespace,
			Labels:      labels,
			Annotations: runAnnotations(rn),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(s.Timeout.Seconds())),
			TTLSecondsAfterFinished: ptr.To(int32(r.Options.JobTTL.Seconds())),
			PodFailurePolicy:        podFailurePolicy(rn.Phase),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels(s.Runner.PodLabels, labels), Annotations: s.Runner.PodAnnotations},
				Spec: corev1.PodSpec{
					ServiceAccountName:            runnerServiceAccount(ws, rn.Phase),
					AutomountServiceAccountToken:  ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To(r.Options.terminationGrace()),
					RestartPolicy:                 corev1.RestartPolicyNever,
					NodeSelector:                  s.Runner.NodeSelector,
					Tolerations:                   s.Runner.Tolerations,
					Affinity:                      s.Runner.Affinity,
					PriorityClassName:             s.Runner.PriorityClassName,
					ImagePullSecrets:              imagePullSecrets(r.Options.RunnerImagePullSecrets, s.Runner.ImagePullSecrets),
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
				ContainerName: ptr.To(runnerContainer),
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
