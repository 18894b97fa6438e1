package v1alpha1

import "strings"

// RunnerVolume mounts a Secret or a ConfigMap read-only into the runner.
// +kubebuilder:validation:XValidation:rule="has(self.secret) != has(self.configMap)",message="exactly one of secret or configMap must be set"
type RunnerVolume struct {
	// Name of the volume, a DNS label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=58
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// MountPath is the absolute, clean path of the volume in the runner
	// container. Paths at, under or over the runner's own (ReservedMountPaths:
	// /, /tmp, /opt/magos, /etc/magos, /magos, /dev, /proc, /sys) are refused.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="mountPath must be absolute"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="mountPath must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.endsWith('/') && !self.contains('//') && !self.matches('/[.](/|$)')",message="mountPath must be clean: no '.' segment, '//' or trailing '/'"
	// +kubebuilder:validation:XValidation:rule="!['/tmp', '/opt/magos', '/etc/magos', '/magos', '/dev', '/proc', '/sys', '/var/run/secrets', '/run/secrets'].exists(r, self == r || self.startsWith(r + '/') || r.startsWith(self + '/'))",message="mountPath must not be at, under or over a path the runner uses (/tmp, /opt/magos, /etc/magos, /magos, /dev, /proc, /sys) or where Kubernetes mounts the runner's token (/var/run/secrets, /run/secrets)"
	MountPath string `json:"mountPath"`

	// Secret mounts the keys of a Secret.
	// +optional
	Secret *SecretVolume `json:"secret,omitempty"`

	// ConfigMap mounts the keys of a ConfigMap.
	// +optional
	ConfigMap *ConfigMapVolume `json:"configMap,omitempty"`
}

// SecretVolume names a Secret and, optionally, which of its keys to mount.
type SecretVolume struct {
	// SecretName of the Secret. Names of state and plan Secrets
	// (tfstate-*, *-plan-NN) are refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('tfstate-')",message="secretName must not name a state Secret (tfstate-*)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('-plan-[0-9][0-9]+$')",message="secretName must not name a plan Secret (*-plan-NN)"
	SecretName string `json:"secretName"`

	// Items maps keys to file paths; without them every key is a file of
	// its own name.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Items []KeyPath `json:"items,omitempty"`
}

// ConfigMapVolume names a ConfigMap and, optionally, which of its keys to
// mount.
type ConfigMapVolume struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Items maps keys to file paths; without them every key is a file of
	// its own name.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Items []KeyPath `json:"items,omitempty"`
}

// KeyPath mounts one key of a Secret or ConfigMap at a relative path.
type KeyPath struct {
	// Key in the Secret or ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`

	// Path of the file, relative to the mount path.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="path must be relative"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="path must not contain '..'"
	Path string `json:"path"`
}

// CLIConfigSpec names the Secret key holding an OpenTofu/Terraform CLI
// configuration.
type CLIConfigSpec struct {
	// SecretName of the Secret. Names of state and plan Secrets
	// (tfstate-*, *-plan-NN) are refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('tfstate-')",message="secretName must not name a state Secret (tfstate-*)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('-plan-[0-9][0-9]+$')",message="secretName must not name a plan Secret (*-plan-NN)"
	SecretName string `json:"secretName"`

	// Key of the Secret holding the configuration; tofurc by default.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:default=tofurc
	// +optional
	Key string `json:"key,omitempty"`
}

// DefaultCLIConfigKey is the Secret key of a CLI configuration unless
// cliConfig.key says otherwise.
const DefaultCLIConfigKey = "tofurc"

// CLIConfigPath is where the runner container finds its CLI configuration
// (TF_CLI_CONFIG_FILE) when cliConfig is set.
const CLIConfigPath = "/etc/magos/cli-config/config.tfrc"

// RunnerSecurityContext are the user and group IDs of the runner Pod; each
// unset one keeps the default (65532). Root (0) is refused.
type RunnerSecurityContext struct {
	// RunAsUser is the UID of every container of the Pod.
	// +kubebuilder:validation:Minimum=1
	// +optional
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// RunAsGroup is the primary GID of every container of the Pod.
	// +kubebuilder:validation:Minimum=1
	// +optional
	RunAsGroup *int64 `json:"runAsGroup,omitempty"`

	// FSGroup owns the Pod's volumes.
	// +kubebuilder:validation:Minimum=1
	// +optional
	FSGroup *int64 `json:"fsGroup,omitempty"`
}

// ReservedMountPaths are the paths the runner Pod uses itself, and where
// Kubernetes mounts its ServiceAccount token; a runner volume may be
// mounted neither at, under nor over one of them (the rule on
// RunnerVolume.mountPath repeats this list; the workspace-controller adds
// its versions directory).
var ReservedMountPaths = []string{"/tmp", "/opt/magos", "/etc/magos", "/magos", "/dev", "/proc", "/sys", "/var/run/secrets", "/run/secrets"}

// MountPathConflict returns the reserved path p is at, under or over, or
// "" when there is none.
func MountPathConflict(p string, reserved []string) string {
	for _, r := range reserved {
		if p == r || strings.HasPrefix(p, r+"/") || strings.HasPrefix(r, p+"/") || p == "/" {
			return r
		}
	}
	return ""
}

// RunnerField names a field of RunnerSpec, or "*" for all of them.
// +kubebuilder:validation:Enum="*";serviceAccountAnnotations;plan;image;resources;nodeSelector;tolerations;timeout;env;volumes;cliConfig;podLabels;podAnnotations;affinity;priorityClassName;imagePullSecrets;securityContext
type RunnerField string

// AllRunnerFields forbids overriding every runner field.
const AllRunnerFields RunnerField = "*"
