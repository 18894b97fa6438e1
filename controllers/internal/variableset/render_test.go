package variableset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func secretKey(name, key string) *magosv1.VariableSource {
	return &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

func configMapKey(name, key string) *magosv1.VariableSource {
	return &magosv1.VariableSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

func found(rv string, keys ...string) observedObject {
	return observedObject{Found: true, ResourceVersion: rv, Keys: keys}
}

func envNames(env []corev1.EnvVar) []string {
	names := make([]string, 0, len(env))
	for _, e := range env {
		names = append(names, e.Name)
	}
	return names
}

func TestRender(t *testing.T) {
	tests := []struct {
		name           string
		spec           magosv1.VariableSetSpec
		objs           map[objectRef]observedObject
		wantEnv        []corev1.EnvVar
		wantSensitive  []string
		wantReferences []magosv1.ReferenceStatus
		wantMissing    []string
		wantOptional   int
	}{
		{
			name: "empty spec renders nothing",
		},
		{
			name: "literal and HCL values pass as they are; sensitive literals are listed",
			spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{
				{Name: "region", Value: ptr.To("eu-west-1")},
				{Name: "zones", Value: ptr.To(`["a", "b"]`), HCL: true},
				{Name: "token", Value: ptr.To("not-really-secret"), Sensitive: true},
			}},
			wantEnv: []corev1.EnvVar{
				{Name: "TF_VAR_region", Value: "eu-west-1"},
				{Name: "TF_VAR_token", Value: "not-really-secret"},
				{Name: "TF_VAR_zones", Value: `["a", "b"]`},
			},
			wantSensitive:  []string{"TF_VAR_token"},
			wantReferences: []magosv1.ReferenceStatus{},
		},
		{
			name: "key references pass through; Secret ones are sensitive, ConfigMap ones only when marked",
			spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{
				{Name: "password", ValueFrom: secretKey("db", "password")},
				{Name: "tags", ValueFrom: configMapKey("settings", "tags"), HCL: true},
				{Name: "license", ValueFrom: configMapKey("settings", "license"), Sensitive: true},
			}},
			objs: map[objectRef]observedObject{
				{KindSecret, "db"}:          found("1", "password"),
				{KindConfigMap, "settings"}: found("2", "license", "tags"),
			},
			wantEnv: []corev1.EnvVar{
				{Name: "TF_VAR_license", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "license"}}},
				{Name: "TF_VAR_password", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
				{Name: "TF_VAR_tags", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "tags"}}},
			},
			wantSensitive: []string{"TF_VAR_license", "TF_VAR_password"},
			wantReferences: []magosv1.ReferenceStatus{
				{Kind: KindConfigMap, Name: "settings", Key: "license", Ready: true},
				{Kind: KindConfigMap, Name: "settings", Key: "tags", Ready: true},
				{Kind: KindSecret, Name: "db", Key: "password", Ready: true},
			},
		},
		{
			name: "a missing object and a missing key are named",
			spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{
				{Name: "password", ValueFrom: secretKey("db-creds", "password")},
				{Name: "user", ValueFrom: secretKey("db-creds", "user")},
				{Name: "flags", ValueFrom: configMapKey("absent", "flags")},
			}},
			objs: map[objectRef]observedObject{
				{KindSecret, "db-creds"}: found("1", "user"),
			},
			wantEnv: []corev1.EnvVar{
				{Name: "TF_VAR_flags", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "flags"}}},
				{Name: "TF_VAR_password", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-creds"}, Key: "password"}}},
				{Name: "TF_VAR_user", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-creds"}, Key: "user"}}},
			},
			wantSensitive: []string{"TF_VAR_password", "TF_VAR_user"},
			wantReferences: []magosv1.ReferenceStatus{
				{Kind: KindConfigMap, Name: "absent", Key: "flags", Message: "ConfigMap absent not found"},
				{Kind: KindSecret, Name: "db-creds", Key: "password", Message: "Secret db-creds has no key password"},
				{Kind: KindSecret, Name: "db-creds", Key: "user", Ready: true},
			},
			wantMissing: []string{"ConfigMap absent not found", "Secret db-creds has no key password"},
		},
		{
			name: "optional references may be missing",
			spec: magosv1.VariableSetSpec{
				Variables: []magosv1.Variable{{Name: "extra", ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "extras"}, Key: "extra", Optional: ptr.To(true)}}}},
				From: []magosv1.WholeObjectSource{{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "maybe", Optional: true}}},
			},
			wantEnv: []corev1.EnvVar{
				{Name: "TF_VAR_extra", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "extras"}, Key: "extra", Optional: ptr.To(true)}}},
			},
			wantSensitive: []string{"TF_VAR_extra"},
			wantReferences: []magosv1.ReferenceStatus{
				{Kind: KindConfigMap, Name: "maybe", Message: "ConfigMap maybe not found (optional, missing)"},
				{Kind: KindSecret, Name: "extras", Key: "extra", Message: "Secret extras not found (optional, missing)"},
			},
			wantOptional: 2,
		},
		{
			name: "whole sources expand to key references; odd keys are skipped and noted",
			spec: magosv1.VariableSetSpec{From: []magosv1.WholeObjectSource{
				{SecretRef: &magosv1.OptionalObjectReference{Name: "cloud"}},
				{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "common", Optional: true}},
			}},
			objs: map[objectRef]observedObject{
				{KindSecret, "cloud"}:     found("7", ".dockerconfigjson", "1st", "api_key"),
				{KindConfigMap, "common"}: {Found: true, ResourceVersion: "8", Keys: []string{"region"}, BinaryKeys: []string{"blob"}},
			},
			wantEnv: []corev1.EnvVar{
				{Name: "TF_VAR_api_key", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cloud"}, Key: "api_key"}}},
				{Name: "TF_VAR_region", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "common"}, Key: "region", Optional: ptr.To(true)}}},
			},
			wantSensitive: []string{"TF_VAR_api_key"},
			wantReferences: []magosv1.ReferenceStatus{
				{Kind: KindConfigMap, Name: "common", Ready: true,
					Message: "skipped binaryData keys, which environment variables cannot read: blob"},
				{Kind: KindSecret, Name: "cloud", Ready: true,
					Message: "skipped keys that are not Terraform identifiers: .dockerconfigjson, 1st"},
			},
		},
		{
			name: "a key only in binaryData is named as unreadable",
			spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{{Name: "blob", ValueFrom: configMapKey("bin", "blob")}}},
			objs: map[objectRef]observedObject{{KindConfigMap, "bin"}: {Found: true, ResourceVersion: "3", BinaryKeys: []string{"blob"}}},
			wantEnv: []corev1.EnvVar{{Name: "TF_VAR_blob", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "bin"}, Key: "blob"}}}},
			wantReferences: []magosv1.ReferenceStatus{{Kind: KindConfigMap, Name: "bin", Key: "blob",
				Message: "ConfigMap bin has key blob only in binaryData, which environment variables cannot read"}},
			wantMissing: []string{"ConfigMap bin has key blob only in binaryData, which environment variables cannot read"},
		},
		{
			name: "precedence: later from wins, variables beat from, env beats all",
			spec: magosv1.VariableSetSpec{
				From: []magosv1.WholeObjectSource{
					{SecretRef: &magosv1.OptionalObjectReference{Name: "first"}},
					{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "second"}},
				},
				Variables: []magosv1.Variable{{Name: "b", Value: ptr.To("from-variable")}},
				Env: []magosv1.EnvEntry{
					{Name: "TF_VAR_c", Value: ptr.To("from-env")},
					{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: secretKey("aws", "secret")},
					{Name: "AWS_REGION", Value: ptr.To("eu-west-1")},
				},
			},
			objs: map[objectRef]observedObject{
				{KindSecret, "first"}:     found("1", "a", "b", "c"),
				{KindConfigMap, "second"}: found("2", "a"),
				{KindSecret, "aws"}:       found("3", "secret"),
			},
			wantEnv: []corev1.EnvVar{
				{Name: "AWS_REGION", Value: "eu-west-1"},
				{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "aws"}, Key: "secret"}}},
				{Name: "TF_VAR_a", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "second"}, Key: "a"}}},
				{Name: "TF_VAR_b", Value: "from-variable"},
				{Name: "TF_VAR_c", Value: "from-env"},
			},
			wantSensitive: []string{"AWS_SECRET_ACCESS_KEY"},
			wantReferences: []magosv1.ReferenceStatus{
				{Kind: KindConfigMap, Name: "second", Ready: true},
				{Kind: KindSecret, Name: "aws", Key: "secret", Ready: true},
				{Kind: KindSecret, Name: "first", Ready: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: tt.spec}
			got := render(vs, tt.objs)
			if tt.wantEnv == nil {
				tt.wantEnv = []corev1.EnvVar{}
			}
			if tt.wantReferences == nil {
				tt.wantReferences = []magosv1.ReferenceStatus{}
			}
			assert.Equal(t, tt.wantEnv, got.Env)
			assert.Equal(t, tt.wantSensitive, got.Sensitive)
			assert.Equal(t, tt.wantReferences, got.References)
			assert.Equal(t, tt.wantMissing, got.Missing)
			assert.Equal(t, tt.wantOptional, got.OptionalMissing)
			assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, got.Digest)
			for _, s := range got.Sensitive {
				assert.Contains(t, envNames(got.Env), s, "every sensitive name is an entry of env")
			}
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	spec := magosv1.VariableSetSpec{
		Variables: []magosv1.Variable{{Name: "z", Value: ptr.To("1")}, {Name: "a", ValueFrom: secretKey("s", "k")}},
		From:      []magosv1.WholeObjectSource{{SecretRef: &magosv1.OptionalObjectReference{Name: "w"}}},
	}
	objs := map[objectRef]observedObject{{KindSecret, "s"}: found("1", "k"), {KindSecret, "w"}: found("2", "m", "b", "x")}
	objs[objectRef{KindSecret, "w"}] = found("2", "b", "m", "x")
	vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: spec}
	first := render(vs, objs)
	for range 20 {
		require.Equal(t, first, render(vs, objs))
	}
	assert.Equal(t, []string{"TF_VAR_a", "TF_VAR_b", "TF_VAR_m", "TF_VAR_x", "TF_VAR_z"}, envNames(first.Env))
}

func TestInputsDigest(t *testing.T) {
	refs := []objectRef{{KindConfigMap, "c"}, {KindSecret, "s"}}
	objs := map[objectRef]observedObject{{KindConfigMap, "c"}: found("10"), {KindSecret, "s"}: found("11")}
	base := inputsDigest(1, refs, objs)

	assert.Equal(t, base, inputsDigest(1, refs, map[objectRef]observedObject{
		{KindConfigMap, "c"}: found("10", "other", "keys"), {KindSecret, "s"}: found("11", "do", "not", "count")}),
		"keys and contents do not enter the digest")
	assert.NotEqual(t, base, inputsDigest(2, refs, objs), "a new generation changes the digest")
	assert.NotEqual(t, base, inputsDigest(1, refs, map[objectRef]observedObject{
		{KindConfigMap, "c"}: found("10"), {KindSecret, "s"}: found("12")}), "a new resourceVersion changes the digest")
	assert.NotEqual(t, base, inputsDigest(1, refs, map[objectRef]observedObject{{KindConfigMap, "c"}: found("10")}),
		"a missing object changes the digest")
	assert.NotEqual(t, base, inputsDigest(1, []objectRef{{KindSecret, "c"}, {KindSecret, "s"}}, map[objectRef]observedObject{
		{KindSecret, "c"}: found("10"), {KindSecret, "s"}: found("11")}), "the kind enters the digest")
}

func TestReferencedObjectsAndIndex(t *testing.T) {
	vs := &magosv1.VariableSet{Spec: magosv1.VariableSetSpec{
		Variables: []magosv1.Variable{{Name: "a", ValueFrom: secretKey("s", "k")}, {Name: "b", ValueFrom: secretKey("s", "l")}},
		From: []magosv1.WholeObjectSource{
			{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "c"}},
			{SecretRef: &magosv1.OptionalObjectReference{Name: "w"}},
		},
		Env: []magosv1.EnvEntry{{Name: "X", ValueFrom: configMapKey("s", "x")}},
	}}
	assert.Equal(t, []objectRef{{KindConfigMap, "c"}, {KindConfigMap, "s"}, {KindSecret, "s"}, {KindSecret, "w"}},
		referencedObjects(&vs.Spec))
	assert.Equal(t, []string{"ConfigMap/c", "ConfigMap/s", "Secret/s", "Secret/w"}, indexReferences(vs))
}
