package ops

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The variables whose values the plan's rendering masks are those the
// runner masks: from Secrets, outputRefs or marked sensitive, inline, in
// the runner env, in the Workspace's and the Project's VariableSets; when
// one of those cannot be read, every variable.
func TestSecretVariables(t *testing.T) {
	ctx := context.Background()
	literal := "x"
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "team"}, Spec: magosv1.WorkspaceSpec{
		ProjectRef:      &magosv1.LocalObjectReference{Name: "app"},
		VariableSetRefs: []magosv1.LocalObjectReference{{Name: "own"}},
		Vars: []magosv1.Variable{
			{Name: "plain", Value: &literal},
			{Name: "marked", Value: &literal, Sensitive: true},
			{Name: "from_secret", ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
			{Name: "from_configmap", ValueFrom: &magosv1.VariableSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "k"}}},
			{Name: "from_output", ValueFrom: &magosv1.VariableSource{OutputRef: &magosv1.OutputReference{Workspace: "net", Output: "id"}}},
		},
		Runner: &magosv1.RunnerSpec{Env: []magosv1.EnvEntry{
			{Name: "TF_VAR_runner_secret", ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
			{Name: "API_TOKEN", ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
		}},
	}}
	project := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team"},
		Status: magosv1.ProjectStatus{VariableSetRefs: []magosv1.LocalObjectReference{{Name: "shared"}}}}
	shared := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "team"},
		Status: magosv1.VariableSetStatus{SensitiveEnv: []string{"TF_VAR_db_password", "AWS_SECRET_ACCESS_KEY"}}}
	own := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "own", Namespace: "team"},
		Status: magosv1.VariableSetStatus{SensitiveEnv: []string{"TF_VAR_token"}}}

	c := fake.NewClientBuilder().WithScheme(Scheme).WithObjects(project, shared, own).Build()
	opts := SecretVariables(ctx, c, ws)
	assert.False(t, opts.AllVariablesSensitive)
	assert.ElementsMatch(t, []string{"marked", "from_secret", "from_output", "runner_secret", "db_password", "token"}, opts.SensitiveVariables)

	c = fake.NewClientBuilder().WithScheme(Scheme).WithObjects(project, shared).Build()
	assert.True(t, SecretVariables(ctx, c, ws).AllVariablesSensitive, "a VariableSet that cannot be read")
	c = fake.NewClientBuilder().WithScheme(Scheme).WithObjects(shared, own).Build()
	assert.True(t, SecretVariables(ctx, c, ws).AllVariablesSensitive, "a Project that cannot be read")
}
