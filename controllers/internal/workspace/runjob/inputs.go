package runjob

import (
	corev1 "k8s.io/api/core/v1"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// InputsDigest digests everything a plan depends on besides the source
// revision: path, engine, the runner environment (values or references,
// never the bytes behind a reference), the VariableSets' inputs digests
// (which change when a referenced Secret or ConfigMap changes), backend and
// the dependency outputs read ("<workspace>/<output>=<planID>", see
// outputReads: which apply last changed each, never a digest of a value).
// A change re-plans; approval, interval, suspend or outputs do not.
//
// Of the runner settings, those that change what the engine sees are
// inputs: its env, volumes and CLI configuration (as references, like the
// variables: a changed Secret or ConfigMap behind them is used from the next
// run on, but does not re-plan by itself). Pod placement and metadata
// (labels, annotations, affinity, priority, node selector, tolerations,
// pull secrets, IDs, resources, timeout) are not. Each runner input is left
// out of the digest while unset, so Workspaces without them keep the
// digest they had.
func InputsDigest(ws *magosv1.Workspace, s Settings, sets, outputs []string) string {
	in := struct {
		Path      string                 `json:"path"`
		Engine    magosv1.Engine         `json:"engine"`
		Version   string                 `json:"version"`
		Env       []corev1.EnvVar        `json:"env"`
		Sets      []string               `json:"sets"`
		Backend   *magosv1.BackendSpec   `json:"backend"`
		RunnerEnv []corev1.EnvVar        `json:"runnerEnv,omitempty"`
		Volumes   []magosv1.RunnerVolume `json:"volumes,omitempty"`
		CLIConfig *magosv1.CLIConfigSpec `json:"cliConfig,omitempty"`
		Outputs   []string               `json:"outputs,omitempty"`
	}{ws.Spec.Path, s.Engine, s.Version, s.Env, sets, ws.Spec.Backend, s.RunnerEnv, s.Runner.Volumes, s.Runner.CLIConfig, outputs}
	b, _ := json.Marshal(in)
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
