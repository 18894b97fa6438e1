package workspace

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestSecretRefsNamesEachSecretOnce(t *testing.T) {
	ref := func(name string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
	}
	env := []corev1.EnvVar{
		{Name: "TF_VAR_b", ValueFrom: ref("net-outputs")},
		{Name: "TF_VAR_a", Value: "literal"},
		{Name: "TF_VAR_c", ValueFrom: ref("creds")},
		{Name: "TF_VAR_d", ValueFrom: ref("net-outputs")},
		{Name: "TF_VAR_e", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "k"}}},
	}
	assert.Equal(t, []secretRef{{Secret: "creds", Entry: "TF_VAR_c"}, {Secret: "net-outputs", Entry: "TF_VAR_b"}}, secretRefs(env))
}

func TestStorageOwner(t *testing.T) {
	tests := []struct {
		name    string
		labels  map[string]string
		owner   string
		storage bool
	}{
		{"a user's Secret", map[string]string{"app": "db"}, "", false},
		{"a Magos Secret", map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "net"}, "net", true},
		{"a kubernetes backend state Secret", map[string]string{"tfstate": "true", "tfstateSecretSuffix": "net"}, "net", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner, ok := storageOwner(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}})
			assert.Equal(t, tt.storage, ok)
			assert.Equal(t, tt.owner, owner)
		})
	}
}

func TestOutputsReadRefused(t *testing.T) {
	dep := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "net", UID: "u-net"},
		Spec: magosv1.WorkspaceSpec{Outputs: &magosv1.OutputsSpec{SecretName: "net-outputs"}}}
	secret := func(name, kind, uid string) *metav1.PartialObjectMetadata {
		s := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if uid != "" {
			s.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: "net", UID: types.UID("u-" + uid), Controller: new(true)}}
		}
		return s
	}
	tests := []struct {
		name   string
		secret *metav1.PartialObjectMetadata
		dep    *magosv1.Workspace
		want   string
	}{
		{"a dependency's outputs", secret("net-outputs", magosv1.WorkspaceKind, "net"), dep, ""},
		{"not a dependency", secret("net-outputs", magosv1.WorkspaceKind, "net"), nil, "not in spec.dependsOn"},
		{"a dependency's plan", secret("net-plan-00", magosv1.WorkspaceKind, "net"), dep, "not that Workspace's outputs Secret"},
		{"outputs of that name controlled by another", secret("net-outputs", magosv1.WorkspaceKind, "other"), dep, "not controlled by that Workspace"},
		{"outputs of that name controlled by no one", secret("net-outputs", "", ""), dep, "not controlled by that Workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outputsReadRefused(tt.secret, "net", tt.dep)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tt.want)
		})
	}
}

func TestOwnStorage(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: magosv1.WorkspaceSpec{Outputs: &magosv1.OutputsSpec{SecretName: "app-out"}}}
	for name, own := range map[string]bool{
		"app-out": true, "tfstate-default-app": true, "tfstate-errored-app": true, "app-plan-00": true, "app-plan-127": true,
		"app-plan-": false, "app-plan-x1": false, "app-planner": false, "net-outputs": false, "tfstate-default-app2": false,
	} {
		assert.Equal(t, own, ownStorage(ws, name), name)
	}
}

func TestWithoutAbsentLeavesOutOnlyOptionalReadsOfAbsentSecrets(t *testing.T) {
	ref := func(name string, optional *bool) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k", Optional: optional}
	}
	env := func(name string, sel *corev1.SecretKeySelector) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: sel}}
	}
	all := []corev1.EnvVar{
		env("TF_VAR_later", ref("later", new(true))),
		env("TF_VAR_present", ref("present", new(true))),
		env("TF_VAR_required", ref("later", nil)),
		{Name: "TF_VAR_literal", Value: "x"},
		{Name: "TF_VAR_cm", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "later"}, Key: "k", Optional: new(true)}}},
	}
	tests := []struct {
		name   string
		absent map[string]bool
		want   []string
	}{
		{"nothing absent", nil, []string{"TF_VAR_later", "TF_VAR_present", "TF_VAR_required", "TF_VAR_literal", "TF_VAR_cm"}},
		{"an absent Secret's optional reads go", map[string]bool{"later": true},
			[]string{"TF_VAR_present", "TF_VAR_required", "TF_VAR_literal", "TF_VAR_cm"}},
		{"a Secret the check saw stays", map[string]bool{"other": true},
			[]string{"TF_VAR_later", "TF_VAR_present", "TF_VAR_required", "TF_VAR_literal", "TF_VAR_cm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, e := range withoutAbsent(all, tt.absent) {
				names = append(names, e.Name)
			}
			assert.Equal(t, tt.want, names)

			var entries []magosv1.EnvEntry
			for _, e := range all {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					entries = append(entries, magosv1.EnvEntry{Name: e.Name, ValueFrom: &magosv1.VariableSource{SecretKeyRef: e.ValueFrom.SecretKeyRef}})
				}
			}
			names = nil
			for _, e := range runnerEnvWithout(entries, tt.absent) {
				names = append(names, e.Name)
			}
			want := slices.DeleteFunc(slices.Clone(tt.want), func(n string) bool { return n == "TF_VAR_literal" || n == "TF_VAR_cm" })
			assert.Equal(t, want, names, "runner env entries")
		})
	}
	assert.Len(t, all, 5, "the input is not changed")
}
