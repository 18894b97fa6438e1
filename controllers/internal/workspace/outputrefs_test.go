package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// network writes subnets and label; the dependent reads subnets only.
func outputReadsOf(versions ...magosv1.OutputVersion) []string {
	net := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "network"}, Status: magosv1.WorkspaceStatus{OutputVersions: versions}}
	read := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: "TF_VAR_" + key, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}}
	}
	env := []corev1.EnvVar{read("network-outputs", "subnets"), read("creds", "password"), {Name: "TF_VAR_x", Value: "1"}, read("network-outputs", "subnets")}
	return outputReads(env, map[string]*magosv1.Workspace{"network-outputs": net})
}

func TestOutputReadsFoldOnlyTheOutputsRead(t *testing.T) {
	assert.Equal(t, []string{"network/subnets=p1"}, outputReadsOf(magosv1.OutputVersion{Name: "subnets", PlanID: "p1"}, magosv1.OutputVersion{Name: "label", PlanID: "p1"}))
	assert.Equal(t, []string{"network/subnets="}, outputReadsOf(), "an output not written yet reads as no version")
}

func TestInputsDigestChangesOnlyWithAReadOutput(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	digest := func(versions ...magosv1.OutputVersion) string {
		return runjob.InputsDigest(ws, runjob.Settings{}, nil, outputReadsOf(versions...))
	}
	base := digest(magosv1.OutputVersion{Name: "subnets", PlanID: "p1"}, magosv1.OutputVersion{Name: "label", PlanID: "p1"})
	assert.Equal(t, base, digest(magosv1.OutputVersion{Name: "subnets", PlanID: "p1"}, magosv1.OutputVersion{Name: "label", PlanID: "p2"}),
		"an apply that changed only an output the Workspace does not read leaves its inputs alone")
	assert.NotEqual(t, base, digest(magosv1.OutputVersion{Name: "subnets", PlanID: "p2"}, magosv1.OutputVersion{Name: "label", PlanID: "p1"}),
		"an apply that changed an output the Workspace reads changes its inputs")
	assert.Equal(t, runjob.InputsDigest(ws, runjob.Settings{}, nil, nil), runjob.InputsDigest(ws, runjob.Settings{}, nil, []string{}),
		"a Workspace that reads no outputs keeps the digest it had before outputs were folded in")
}

func TestOutputUnavailable(t *testing.T) {
	ref := &magosv1.OutputReference{Workspace: "network", Output: "subnets"}
	with := func(outputs *magosv1.OutputsSpec, written ...string) *magosv1.Workspace {
		return &magosv1.Workspace{Spec: magosv1.WorkspaceSpec{Outputs: outputs}, Status: magosv1.WorkspaceStatus{Outputs: written}}
	}
	spec := &magosv1.OutputsSpec{SecretName: "network-outputs"}
	assert.Contains(t, outputUnavailable(nil, ref, nil), "does not exist")
	assert.Contains(t, outputUnavailable(with(nil), ref, nil), "spec.outputs is unset")
	assert.Contains(t, outputUnavailable(with(spec), ref, nil), "no outputs yet")
	assert.Contains(t, outputUnavailable(with(spec, "label", "vpc"), ref, nil), "it has label, vpc")
	assert.Empty(t, outputUnavailable(with(spec, "label", "subnets"), ref, nil))
}

func TestVariableEnvRendersOutputRefsAsSecretKeyRefs(t *testing.T) {
	env, sensitive := runjob.VariableEnv([]magosv1.Variable{
		{Name: "subnets", ValueFrom: &magosv1.VariableSource{OutputRef: &magosv1.OutputReference{Workspace: "network", Output: "subnets"}}},
	}, map[string]string{"network": "network-outputs"})
	assert.Equal(t, []corev1.EnvVar{{Name: "TF_VAR_subnets", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "network-outputs"}, Key: "subnets"}}}}, env)
	assert.Equal(t, []string{"TF_VAR_subnets"}, sensitive, "a value read from a Secret is masked")
}
