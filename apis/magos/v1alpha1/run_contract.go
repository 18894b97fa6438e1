package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The run contract: what the workspace-controller puts into a run's Job,
// what the runner reads, and what the runner reports back. The controller,
// the runner and the local Job executor share these names; RunSpec
// (run_spec.go) carries the environment both ways.

// Labels on every object a run creates or uses.
const (
	// WorkspaceLabel names the Workspace a Job, ServiceAccount or plan Secret belongs to.
	WorkspaceLabel = "magos.dev/workspace"
	// PhaseLabel is the run phase of a Job: plan, apply or destroy.
	PhaseLabel = "magos.dev/phase"
	// RunLabel is the run ID of a Job.
	RunLabel = "magos.dev/run"
	// PlanIDLabel is the plan a plan Secret holds.
	PlanIDLabel = "magos.dev/plan-id"
	// ManagedByLabel marks objects created by Magos.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel.
	ManagedByValue = "magos"
)

// Annotations the controller writes on a run's Job and reads back to adopt
// a run it did not see start. The plan ID is PlanIDAnnotation, the key
// chunk 0 of a stored plan carries too.
const (
	// RevisionAnnotation is the source revision the run runs.
	RevisionAnnotation = "magos.dev/revision"
	// InputsDigestAnnotation is the digest of the inputs the run got.
	InputsDigestAnnotation = "magos.dev/inputs-digest"
	// DriftAnnotation is "true" on a drift re-plan.
	DriftAnnotation = "magos.dev/drift"
	// RunNumberAnnotation is the Workspace's run counter for this run, in decimal.
	RunNumberAnnotation = "magos.dev/run-number"
	// PlanModeAnnotation is the run's PlanMode, absent for a normal plan or apply.
	PlanModeAnnotation = "magos.dev/plan-mode"
	// PlanRequestAnnotation is the JSON of the PlanRequest a plan run
	// plans with, absent for a full plan.
	PlanRequestAnnotation = "magos.dev/plan-request"
	// ArtifactURLAnnotation is the source-controller URL of the artifact
	// the run works on: the artifact proxy fetches it for the run.
	ArtifactURLAnnotation = "magos.dev/artifact-url"
	// ArtifactDigestAnnotation is that artifact's "sha256:<hex>".
	ArtifactDigestAnnotation = "magos.dev/artifact-digest"
	// ContentDigestAnnotation is the digest of the files a plan run's
	// configuration reads in that artifact (PlanStatus.ContentDigest),
	// absent when unknown.
	ContentDigestAnnotation = "magos.dev/content-digest"
)

// The artifact proxy. Where the controller runs one, a runner never talks
// to source-controller: it fetches its artifact from the proxy, presenting
// a ServiceAccount token bound to its Pod with ArtifactTokenAudience, and
// the proxy serves exactly the artifact (URL and digest) of that Pod's Job,
// which must be a run of the Workspace the Job belongs to.
const (
	// ArtifactTokenAudience is the audience of the runner's artifact token;
	// the apiserver refuses it for anything else.
	ArtifactTokenAudience = "artifacts.magos.dev"
	// ArtifactTokenDir is where the runner container mounts that token
	// (file "token"), under the reserved /var/run/secrets.
	ArtifactTokenDir = "/var/run/secrets/magos.dev/artifact"
	// ArtifactProxyPath is the proxy's one endpoint.
	ArtifactProxyPath = "/v1/artifact"
)

// Annotations the runner writes on the errored state Secret
// (ErroredStateSecretName) when it saves state there.
const (
	// ErroredStateRunIDAnnotation is the run that saved the state.
	ErroredStateRunIDAnnotation = "magos.dev/run-id"
	// ErroredStateSavedAtAnnotation is when it saved it, in RFC 3339 (UTC).
	ErroredStateSavedAtAnnotation = "magos.dev/saved-at"
)

// Run phases (the runner's command and the Job's PhaseLabel). A deletion's
// destroy is a plan and an apply in PlanModeDestroy (EnvPlanMode); RunDestroy
// destroys without a plan, only where the destroy gate is skipped.
//
// RunPlanApply is the fast path: one Job, with the apply identity, plans,
// stores the plan for people to read and applies that plan file at once,
// without the apply-time proof. The controller starts it only where no
// decision rests on the rendered plan (approval Auto, no policy selects
// the Workspace, no Rollout gates it, not a destroy, no scoped plan
// request, and the cluster does not ask for separate plan and apply Jobs):
// a tampered plan would gain its author nothing the apply identity does
// not already give. Its plan is recorded with PlanStatus.AppliedWithoutGate.
const (
	RunPlan      = "plan"
	RunApply     = "apply"
	RunDestroy   = "destroy"
	RunPlanApply = "plan-apply"
)

// RunPlans says whether a run of phase makes a plan: a plan run or a fast
// run, which both store a plan under their run ID.
func RunPlans(phase string) bool { return phase == RunPlan || phase == RunPlanApply }

// Environment variables the controller sets on the runner container.
const (
	EnvNamespace          = "MAGOS_NAMESPACE"           // the Workspace's namespace
	EnvWorkspace          = "MAGOS_WORKSPACE"           // the Workspace's name
	EnvWorkspaceUID       = "MAGOS_WORKSPACE_UID"       // owner of the plan Secrets
	EnvRunID              = "MAGOS_RUN_ID"              // this run's ID
	EnvArtifactURL        = "MAGOS_ARTIFACT_URL"        // Flux artifact (tar.gz) URL
	EnvArtifactDigest     = "MAGOS_ARTIFACT_DIGEST"     // "sha256:<hex>" of the artifact
	EnvArtifactTokenFile  = "MAGOS_ARTIFACT_TOKEN_FILE" // bearer token for the artifact proxy (MAGOS_ARTIFACT_URL is the proxy)
	EnvRevision           = "MAGOS_REVISION"            // source revision, for reports
	EnvPath               = "MAGOS_PATH"                // config directory inside the artifact
	EnvEngine             = "MAGOS_ENGINE"              // opentofu or terraform
	EnvEngineVersion      = "MAGOS_ENGINE_VERSION"      // e.g. 1.10.6
	EnvVersionsDir        = "MAGOS_VERSIONS_DIR"        // <dir>/<engine>/<version>/<binary>
	EnvPlanID             = "MAGOS_PLAN_ID"             // plan: ID to store under; apply: ID to apply
	EnvPlanDigest         = "MAGOS_PLAN_DIGEST"         // apply: approved "sha256:<hex>" of the plan JSON
	EnvPlanBundleDigest   = "MAGOS_PLAN_BUNDLE_DIGEST"  // apply: "sha256:<hex>" of the stored plan stream the controller recorded
	EnvStateSecret        = "MAGOS_STATE_SECRET"        // name of the state Secret
	EnvLockLease          = "MAGOS_LOCK_LEASE"          // name of the state lock Lease
	EnvBackendConfig      = "MAGOS_BACKEND_CONFIG"      // path of a user backend block (replaces the default)
	EnvOutputsSecret      = "MAGOS_OUTPUTS_SECRET"      // Secret that receives outputs
	EnvOutputNames        = "MAGOS_OUTPUT_NAMES"        // comma-separated outputs to write; empty = all
	EnvSensitiveEnv       = "MAGOS_SENSITIVE_ENV"       // comma-separated env names whose values are masked
	EnvWorkDir            = "MAGOS_WORK_DIR"            // writable scratch directory
	EnvTerminationMessage = "MAGOS_TERMINATION_MESSAGE" // where to write the RunResult JSON
	EnvDriftCheck         = "MAGOS_DRIFT"               // "true" for a drift re-plan
	EnvPlanMode           = "MAGOS_PLAN_MODE"           // "Destroy": plan a destroy (plan -destroy), or apply one (no outputs written)
	EnvPlanTargets        = "MAGOS_PLAN_TARGETS"        // plan: newline-separated -target addresses
	EnvPlanReplace        = "MAGOS_PLAN_REPLACE"        // plan: newline-separated -replace addresses
	EnvShutdownWait       = "MAGOS_SHUTDOWN_WAIT"       // how long the engine may take to stop once interrupted, e.g. 30s
	EnvErroredState       = "MAGOS_ERRORED_STATE"       // Secret that receives state the engine could not write back
)

// Stopping a run. On SIGTERM (eviction, the Job's deadline, the Job's
// deletion) the runner interrupts the engine (SIGINT), which stops starting
// new operations, waits for those in flight, writes the state and releases
// the lock; the engine is killed if it takes longer than the shutdown wait.
// The runner then saves what the engine could not write back and reports.
// The runner Pod's terminationGracePeriodSeconds is the shutdown wait plus
// ShutdownMargin, so the kubelet's SIGKILL comes after all of that.
const (
	// DefaultShutdownWait is the engine's shutdown wait unless the
	// controller sets another (EnvShutdownWait).
	DefaultShutdownWait = 30 * time.Second
	// ShutdownMargin is the time the runner keeps, after the engine's
	// shutdown wait, to save errored state, stop its state backend (5s) and
	// write its report.
	ShutdownMargin = 30 * time.Second
)

// Exit codes of the runner: every one but 0 is the runner's own verdict on
// the run, which the Job's podFailurePolicy turns into a failed Job at once.
const (
	ExitSucceeded = 0
	ExitFailed    = 1
	ExitUsage     = 2
	ExitStale     = 4
	ExitLocked    = 5
)

// RunnerReach is the runner's command `reach URL`, which kubectl magos
// check runs in a Pod labelled as a runner: it asks URL once (any HTTP
// answer is reached) and exits ExitSucceeded, or ExitUnreachable with why.
const (
	RunnerReach     = "reach"
	ExitUnreachable = 3
)

// RunnerExitCodes are the exit codes by which the runner reports a run
// that did not succeed, as opposed to a runner killed from outside.
var RunnerExitCodes = []int32{ExitFailed, ExitUsage, ExitStale, ExitLocked}

// Reserved environment: the run contract (MAGOS_*), the settings that say
// which engine configuration, plugins, state backend and Kubernetes API the
// runner and the engine use, and the loader and TLS settings under them. No
// user input may set them: VariableSet env is refused at admission (the
// rule on EnvEntry.name repeats this list) and the workspace-controller
// refuses any that reaches it (Stalled, ReservedEnvironment). The
// operator's --runner-env may set engine settings (a provider mirror's
// TF_CLI_CONFIG_FILE, for example) but not MAGOS_*; the controller's own
// entries come last in the container, so they win.
var (
	ReservedEnvPrefixes = []string{"MAGOS_", "TF_HTTP_", "TF_CLI_ARGS", "TF_LOG"}
	ReservedEnvNames    = []string{
		"TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG", "TF_DATA_DIR", "TF_PLUGIN_CACHE_DIR",
		"TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE", "TF_WORKSPACE", "TF_REATTACH_PROVIDERS",
		"TF_IN_AUTOMATION", "TF_INPUT", "CHECKPOINT_DISABLE",
		"KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
		"HOME", "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
	}
)

// IsReservedEnv says whether name is a reserved environment variable.
func IsReservedEnv(name string) bool {
	for _, p := range ReservedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return slices.Contains(ReservedEnvNames, name)
}

// DefaultTerminationMessagePath is where Kubernetes reads a container's
// termination message from.
const DefaultTerminationMessagePath = "/dev/termination-log"

// Run results.
const (
	// ResultRunning is the result of a run in progress (status.currentRun).
	ResultRunning   = "Running"
	ResultSucceeded = "Succeeded"
	ResultFailed    = "Failed"
	// ResultStale: the stored plan no longer matches the approved digest or
	// the state moved on; it must be re-planned, not retried.
	ResultStale = "Stale"
	// ResultLocked: the state lock is held by another run.
	ResultLocked = "Locked"
)

// Reasons of a RunResult (RunResult.Reason). They are CamelCase so that the
// controller can copy them into conditions and events unchanged.
const (
	// ReasonSucceeded: the run did what it was asked to.
	ReasonSucceeded = "Succeeded"
	// ReasonInvalidConfig: the runner's environment is missing or malformed.
	ReasonInvalidConfig = "InvalidConfig"
	// ReasonKubernetesClient: the runner could not set up its Kubernetes client.
	ReasonKubernetesClient = "KubernetesClientFailed"
	// ReasonArtifactFetchFailed: the source artifact could not be downloaded or unpacked.
	ReasonArtifactFetchFailed = "ArtifactFetchFailed"
	// ReasonArtifactDigestMismatch: the artifact's bytes do not match EnvArtifactDigest.
	ReasonArtifactDigestMismatch = "ArtifactDigestMismatch"
	// ReasonArtifactRejected: the artifact holds an entry the runner refuses
	// (a path or symlink leaving its root, a file too large).
	ReasonArtifactRejected = "ArtifactRejected"
	// ReasonPathNotFound: EnvPath is not a directory inside the artifact.
	ReasonPathNotFound = "PathNotFound"
	// ReasonEngineNotFound: the requested engine and version is not installed or does not run.
	ReasonEngineNotFound = "EngineNotFound"
	// ReasonBackendFailed: the state backend could not be set up.
	ReasonBackendFailed = "BackendFailed"
	// ReasonInitFailed: the engine's init failed.
	ReasonInitFailed = "InitFailed"
	// ReasonPlanFailed: the engine could not make or render the plan.
	ReasonPlanFailed = "PlanFailed"
	// ReasonPlanStoreFailed: the plan Secrets could not be written or read.
	ReasonPlanStoreFailed = "PlanStoreFailed"
	// ReasonPlanNotFound: an apply found no stored plan (ResultStale).
	ReasonPlanNotFound = "PlanNotFound"
	// ReasonPlanCorrupt: the stored plan fails its checksums (ResultStale).
	ReasonPlanCorrupt = "PlanCorrupt"
	// ReasonPlanDigestMismatch: the stored plan is not the approved one
	// (EnvPlanID or EnvPlanDigest differ, or no bundle digest was recorded;
	// ResultStale).
	ReasonPlanDigestMismatch = "PlanDigestMismatch"
	// ReasonPlanBinaryMismatch: the stored plan was rewritten after it was
	// recorded (EnvPlanBundleDigest differs), or its binary plan does not
	// render to the approved plan JSON, or its configuration snapshot
	// differs from the verified artifact, or its backend is not the one the
	// runner configures; nothing was applied.
	ReasonPlanBinaryMismatch = "PlanBinaryMismatch"
	// ReasonPlanStale: the state changed after the plan was made (ResultStale).
	ReasonPlanStale = "PlanStale"
	// ReasonApplyFailed: the engine's apply failed.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonDestroyFailed: the engine's destroy failed.
	ReasonDestroyFailed = "DestroyFailed"
	// ReasonOutputsFailed: the apply succeeded but the outputs could not be written.
	ReasonOutputsFailed = "OutputsFailed"
	// ReasonStateLocked: another run holds the state lock (ResultLocked).
	ReasonStateLocked = "StateLocked"
	// ReasonCanceled: the run was interrupted (SIGTERM) before it finished.
	ReasonCanceled = "Canceled"
	// ReasonRunFailed: the run failed for a reason not named above.
	ReasonRunFailed = "RunFailed"
)

// +kubebuilder:object:generate=false

// RunResult is the runner's report, written as JSON to the container's
// termination message (Kubernetes keeps at most 4 KiB of it). It never holds
// a variable or output value.
type RunResult struct {
	Phase   string `json:"phase"`
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	// Reason is a CamelCase reason for conditions, e.g. ArtifactDigestMismatch.
	Reason string `json:"reason,omitempty"`
	// Plan fields (plan runs).
	PlanID     string `json:"planID,omitempty"`
	PlanDigest string `json:"planDigest,omitempty"`
	Add        int32  `json:"add,omitempty"`
	Change     int32  `json:"change,omitempty"`
	Destroy    int32  `json:"destroy,omitempty"`
	HasChanges bool   `json:"hasChanges,omitempty"`
	// Storage is the name prefix of the plan Secrets.
	Storage string `json:"storage,omitempty"`
	// Outputs are the names of the outputs written (apply runs).
	Outputs []string `json:"outputs,omitempty"`
	// ChangedOutputs are the names among Outputs whose value differs from
	// what the outputs Secret held before (apply runs); the runner leaves
	// the Secret untouched when none does.
	ChangedOutputs []string `json:"changedOutputs,omitempty"`
	// LockHolder is who holds the state lock (ResultLocked).
	LockHolder string `json:"lockHolder,omitempty"`
	// PlanChunks is how many plan Secrets a plan needs when it found fewer
	// reserved (ReasonPlanStorageExhausted).
	PlanChunks int `json:"planChunks,omitempty"`
	// ErroredState names the Secret holding state the engine could not
	// write back to the state Secret (ReasonStateNotSaved); "" when there
	// was none or it could not be saved either (the message says which).
	ErroredState string `json:"erroredState,omitempty"`
	// Steps are how long the run's steps took; nil from a runner that
	// does not report them.
	Steps *RunSteps `json:"steps,omitempty"`
	// Contract is the major version of the run contract the runner speaks
	// (RunContractMajor of its build); 0 from a runner that predates it.
	Contract int `json:"contract,omitempty"`
	// RunnerVersion is the runner's build version.
	RunnerVersion string `json:"runnerVersion,omitempty"`
}

// RunContractMajor is the major version of the run contract: what the
// controller and the runner exchange (the run's environment, the plan
// Secrets' format, this report) and the checks the runner makes for the
// controller (the apply-time proof). A change either side cannot read, or
// a check the controller relies on, raises it. The controller does not
// trust the report of a runner of another major version, or of none.
const RunContractMajor = 1

// maxRunnerVersionLen bounds the runner version a report may carry.
const maxRunnerVersionLen = 64

// +kubebuilder:object:generate=false

// RunSteps are how long the steps of a run took, in seconds rounded to the
// millisecond; a step the run did not reach is 0. The step timings add at
// most about 100 bytes to the termination message.
type RunSteps struct {
	// Fetch: downloading, verifying and extracting the source artifact.
	Fetch float64 `json:"fetch,omitempty"`
	// Init: the engine's init.
	Init float64 `json:"init,omitempty"`
	// Engine: the engine's plan, apply or destroy itself.
	Engine float64 `json:"engine,omitempty"`
	// Render: the engine's `show -json` of the plan, which a plan renders
	// for the policy gate and an apply renders again to check that the
	// binary plan is the approved one.
	Render float64 `json:"render,omitempty"`
	// Storage: a plan's writing of its plan Secrets; an apply's loading of
	// the approved plan.
	Storage float64 `json:"storage,omitempty"`
}

// ReasonStateNotSaved: an apply or destroy changed real resources but the
// engine could not write the resulting state back. The state Secret is
// stale; the run saved the engine's errored state to
// ErroredStateSecretName (RunResult.ErroredState) if it could. The
// controller starts no run until someone restores the state.
const ReasonStateNotSaved = "StateNotSaved"

// ReasonStateTooLarge: the state would not fit the state Secret
// (MaxStateSecretBytes gzip'd); an apply checks this before it applies.
const ReasonStateTooLarge = "StateTooLarge"

// MaxStateSecretBytes is the most gzip'd state one Secret holds: the
// apiserver refuses a Secret whose data exceeds 1 MiB; the rest of the
// object needs a little room.
const MaxStateSecretBytes = 1<<20 - 4<<10

// ReasonPlanStorageExhausted: the plan needs more plan Secrets than the
// controller reserved; the controller reserves RunResult.PlanChunks and
// plans again (the run's Result is ResultStale).
const ReasonPlanStorageExhausted = "PlanStorageExhausted"

// Plan storage: a plan is stored as gzip(tar{plan.json, plan.txt, plan.bin})
// (plan.txt optional) split into chunks of at most PlanChunkBytes, one
// Secret each, named PlanSecretName(workspace, i). Chunk 0 is written last and carries the
// annotations below; a reader verifies PlanSHA256Annotation over the joined
// chunks. Names are fixed per Workspace so the runner's Role can name them.
//
// The runner may not create Secrets (it could mint a token for any
// ServiceAccount of its namespace), so the controller reserves the chunk
// Secrets, empty, before a run: DefaultPlanChunks of them, more once a plan
// needed more (RunResult.PlanChunks), up to MaxPlanChunks.
const (
	PlanSecretType       = "magos.dev/plan"
	PlanChunkKey         = "chunk"
	PlanChunkBytes       = 768 * 1024
	MaxPlanChunks        = 128
	DefaultPlanChunks    = 4
	PlanChunksAnnotation = "magos.dev/chunks"
	PlanSHA256Annotation = "magos.dev/sha256"
	PlanDigestAnnotation = "magos.dev/plan-digest" // sha256 of plan.json
	PlanIDAnnotation     = "magos.dev/plan-id"
	PlanBinaryFile       = "plan.bin"
	PlanJSONFile         = "plan.json"
	// PlanTextFile is the plan rendered for people (the engine's show
	// output without colour, masked like every runner output, sensitive
	// values redacted by the engine); optional in a bundle.
	PlanTextFile = "plan.txt"
)

// State storage, compatible with the OpenTofu/Terraform "kubernetes" backend
// layout: the state Secret holds gzip'd state JSON under key StateKey and a
// Lease of the same suffix is the lock.
const (
	StateKey = "tfstate"
)

// StateSecretLabels are the labels of a Workspace's state Secret: the
// kubernetes backend's own and Magos's. The controller creates the Secret
// with them before the first run and accepts an existing one only when it
// carries them; it has no owner, so the state outlives the Workspace.
func StateSecretLabels(workspace string) map[string]string {
	return map[string]string{
		"tfstate":             "true",
		"tfstateSecretSuffix": workspace,
		"tfstateWorkspace":    "default",
		WorkspaceLabel:        workspace,
		ManagedByLabel:        ManagedByValue,
	}
}

// PlanStoragePrefix is the name prefix of a Workspace's plan Secrets
// (RunResult.Storage); PlanSecretName appends the chunk number.
func PlanStoragePrefix(workspace string) string { return workspace + "-plan" }

// PlanSecretName is the name of chunk i of a Workspace's stored plan.
func PlanSecretName(workspace string, i int) string {
	return fmt.Sprintf("%s-%02d", PlanStoragePrefix(workspace), i)
}

// ErroredStateSecretName is the Secret the runner saves state to when the
// engine could not write it back after changing real resources (the
// engine's errored.tfstate): gzip'd state JSON under StateKey, like the
// state Secret, but without the backend's labels. The controller creates
// it before every apply and destroy; the runner may only update it.
func ErroredStateSecretName(workspace string) string { return "tfstate-errored-" + workspace }

// StateSecretName is the default state Secret of a Workspace.
func StateSecretName(workspace string) string { return "tfstate-default-" + workspace }

// LockLeaseName is the default state lock Lease of a Workspace.
func LockLeaseName(workspace string) string { return "lock-tfstate-default-" + workspace }

// RunnerServiceAccountName is the ServiceAccount a Workspace's apply and
// destroy runs use.
func RunnerServiceAccountName(workspace string) string { return "magos-runner-" + workspace }

// PlanRunnerServiceAccountName is the read-only ServiceAccount a
// Workspace's plan runs (also drift checks) use.
func PlanRunnerServiceAccountName(workspace string) string { return "magos-plan-runner-" + workspace }

// runReasons is the closed set of reasons a RunResult may carry.
var runReasons = map[string]bool{
	ReasonSucceeded: true, ReasonInvalidConfig: true, ReasonKubernetesClient: true, ReasonArtifactFetchFailed: true,
	ReasonArtifactDigestMismatch: true, ReasonArtifactRejected: true, ReasonPathNotFound: true, ReasonEngineNotFound: true,
	ReasonBackendFailed: true, ReasonInitFailed: true, ReasonPlanFailed: true, ReasonPlanStoreFailed: true,
	ReasonPlanNotFound: true, ReasonPlanCorrupt: true, ReasonPlanDigestMismatch: true, ReasonPlanBinaryMismatch: true,
	ReasonPlanStale: true, ReasonApplyFailed: true, ReasonDestroyFailed: true, ReasonOutputsFailed: true,
	ReasonStateLocked: true, ReasonCanceled: true, ReasonRunFailed: true, ReasonStateNotSaved: true,
	ReasonStateTooLarge: true, ReasonPlanStorageExhausted: true,
}

// runResults is the closed set of results a finished run reports.
var runResults = map[string]bool{ResultSucceeded: true, ResultFailed: true, ResultStale: true, ResultLocked: true}

// Sanitized returns the report as the controller may use it: the runner
// runs configuration code, so a result outside the closed set is Failed,
// a success has reason Succeeded, a failure's reason outside the closed
// set (or empty) is RunFailed, and a runner version longer than 64 bytes
// or with other than printable ASCII is "invalid"; the message is kept.
func (r RunResult) Sanitized() RunResult {
	if len(r.RunnerVersion) > maxRunnerVersionLen || strings.ContainsFunc(r.RunnerVersion, func(c rune) bool { return c <= ' ' || c > '~' }) {
		r.RunnerVersion = "invalid"
	}
	if !runResults[r.Result] {
		r.Result = ResultFailed
	}
	switch {
	case r.Result == ResultSucceeded:
		r.Reason = ReasonSucceeded
	case !runReasons[r.Reason] || r.Reason == ReasonSucceeded:
		r.Reason = ReasonRunFailed
	}
	return r
}

// RunContainerSecurityContext is the security context of every container
// of a run's Pod, and of any Pod that stands in for one (`kubectl magos
// check --images`): non-root, read-only root filesystem, no privilege
// escalation, no capabilities, the runtime's default seccomp profile. It
// meets the restricted Pod Security level.
func RunContainerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             new(true),
		ReadOnlyRootFilesystem:   new(true),
		AllowPrivilegeEscalation: new(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
