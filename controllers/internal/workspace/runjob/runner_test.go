package runjob

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestForbiddenRunnerOverrides pins which Workspace runner fields a
// Project's forbiddenRunnerOverrides refuses, and that the message names
// each of them.
func TestForbiddenRunnerOverrides(t *testing.T) {
	rs := &magosv1.RunnerSpec{Image: "mine:1", PodLabels: map[string]string{"a": "b"}, CLIConfig: &magosv1.CLIConfigSpec{SecretName: "mine"}}
	tests := []struct {
		name      string
		forbidden []magosv1.RunnerField
		runner    *magosv1.RunnerSpec
		want      []string
	}{
		{name: "nothing forbidden", runner: rs},
		{name: "a field the Workspace does not set", forbidden: []magosv1.RunnerField{"affinity"}, runner: rs},
		{name: "one forbidden field set", forbidden: []magosv1.RunnerField{"cliConfig", "affinity"}, runner: rs, want: []string{"spec.runner.cliConfig"}},
		{name: "everything forbidden", forbidden: []magosv1.RunnerField{magosv1.AllRunnerFields}, runner: rs,
			want: []string{"spec.runner.cliConfig", "spec.runner.image", "spec.runner.podLabels"}},
		{name: "no runner at all", forbidden: []magosv1.RunnerField{magosv1.AllRunnerFields}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRunnerOverrides(&magosv1.Workspace{Spec: magosv1.WorkspaceSpec{Runner: tt.runner}},
				&magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Status: magosv1.ProjectStatus{ForbiddenRunnerOverrides: tt.forbidden}})
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			re, ok := rerror.As(err)
			require.True(t, ok)
			assert.True(t, re.Stalling)
			assert.Equal(t, magosv1.ReasonRunnerOverrideForbidden, re.Reason)
			assert.Contains(t, err.Error(), "forbidden by Project platform")
			assert.Contains(t, err.Error(), strings.Join(tt.want, ", "))
		})
	}
}

// TestEveryRunnerFieldCanBeForbidden pins that forbiddenRunnerOverrides
// knows every field of RunnerSpec, so a new field cannot slip past a
// Project that forbids "*".
func TestEveryRunnerFieldCanBeForbidden(t *testing.T) {
	typ := reflect.TypeFor[magosv1.RunnerSpec]()
	var fields []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	var known []string
	for f := range runnerFieldSet {
		known = append(known, string(f))
	}
	assert.ElementsMatch(t, fields, known)
}
