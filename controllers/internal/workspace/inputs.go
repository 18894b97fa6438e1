package workspace

import (
	corev1 "k8s.io/api/core/v1"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// inputsDigest digests everything a plan depends on besides the source
// revision: path, engine, the runner environment (values or references,
// never the bytes behind a reference), the VariableSets' inputs digests
// (which change when a referenced Secret or ConfigMap changes) and backend.
// A change re-plans; approval, interval, suspend or outputs do not.
func inputsDigest(ws *magosv1.Workspace, s settings, sets []string) string {
	in := struct {
		Path    string               `json:"path"`
		Engine  magosv1.Engine       `json:"engine"`
		Version string               `json:"version"`
		Env     []corev1.EnvVar      `json:"env"`
		Sets    []string             `json:"sets"`
		Backend *magosv1.BackendSpec `json:"backend"`
	}{ws.Spec.Path, s.Engine, s.Version, s.Env, sets, ws.Spec.Backend}
	b, _ := json.Marshal(in)
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
