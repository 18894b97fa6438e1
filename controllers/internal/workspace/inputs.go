package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// inputsDigest digests everything a plan depends on besides the source
// revision: path, engine, variables (values or references, never the bytes
// behind a reference) and backend. A change re-plans; approval, interval,
// suspend or outputs do not.
func inputsDigest(ws *magosv1.Workspace, s settings) string {
	in := struct {
		Path    string                         `json:"path"`
		Engine  magosv1.Engine                 `json:"engine"`
		Version string                         `json:"version"`
		Vars    []magosv1.Variable             `json:"vars"`
		Sets    []magosv1.LocalObjectReference `json:"sets"`
		Backend *magosv1.BackendSpec           `json:"backend"`
	}{ws.Spec.Path, s.Engine, s.Version, ws.Spec.Vars, ws.Spec.VariableSetRefs, ws.Spec.Backend}
	b, _ := json.Marshal(in)
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
