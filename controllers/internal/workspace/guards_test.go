package workspace

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestGuardFlags(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("workspace-controller", flag.ContinueOnError)
	o.BindFlags(fs)
	assert.True(t, o.Guards.NoCrossNamespaceRefs, "cross-namespace references are refused unless allowed")
	assert.False(t, o.Guards.AllowDestroySkipGate, "destroys go through the gate unless skipping it is allowed")
	assert.False(t, o.Guards.ForbidCLIConfig, "a runner CLI configuration is allowed unless forbidden")
	assert.Nil(t, o.Guards.NamespacedPoliciesIn, "no namespace's own policies gate its plans unless allowed")
	require.NoError(t, fs.Parse([]string{
		"--require-project-namespace-selector=magos.dev/tenant",
		"--allowed-runner-images=ghcr.io/magos-dev/magos-runner:*, registry.example/runner@sha256:*",
		"--allowed-runner-images=mirror.example/runner:*",
		"--cluster-policy-selector=policy.magos.dev/scope=cluster",
		"--no-cross-namespace-refs=false",
		"--allow-destroy-skip-gate",
		"--forbid-runner-cli-config",
		"--namespaced-policies-namespace-selector=magos.dev/namespaced-policies=true",
	}))
	g := o.Guards
	assert.False(t, g.NoCrossNamespaceRefs)
	assert.True(t, g.ForbidCLIConfig)
	assert.True(t, g.AllowDestroySkipGate)
	assert.True(t, g.RequireProjectIn.Matches(labels.Set{"magos.dev/tenant": "a"}))
	assert.False(t, g.RequireProjectIn.Matches(labels.Set{}))
	assert.True(t, g.NamespacedPoliciesIn.Matches(labels.Set{"magos.dev/namespaced-policies": "true"}))
	assert.False(t, g.NamespacedPoliciesIn.Matches(labels.Set{}))
	assert.Equal(t, []string{"ghcr.io/magos-dev/magos-runner:*", "registry.example/runner@sha256:*", "mirror.example/runner:*"}, g.AllowedRunnerImages)
	require.NotNil(t, g.ClusterPolicySelector)
	assert.Equal(t, map[string]string{"policy.magos.dev/scope": "cluster"}, g.ClusterPolicySelector.MatchLabels)
	assert.Empty(t, g.ClusterPolicySelector.MatchExpressions)

	require.Error(t, fs.Parse([]string{"--require-project-namespace-selector=a b c"}), "a bad selector is refused when the flag is parsed")
}

func TestGuardsValidate(t *testing.T) {
	tests := []struct {
		name    string
		guards  Guards
		image   string
		wantErr string
	}{
		{name: "no allow-list", image: "anything:1"},
		{name: "default image allowed", guards: Guards{AllowedRunnerImages: []string{"ghcr.io/magos-dev/*:*"}}, image: "ghcr.io/magos-dev/magos-runner:0.1.0"},
		{name: "default image refused", guards: Guards{AllowedRunnerImages: []string{"ghcr.io/magos-dev/*:*"}}, image: "docker.io/magos-runner:1",
			wantErr: `--runner-image "docker.io/magos-runner:1" matches no pattern`},
		{name: "malformed pattern", guards: Guards{AllowedRunnerImages: []string{"ghcr.io/[magos"}}, image: "ghcr.io/magos",
			wantErr: "not a valid pattern"},
		{name: "bad policy selector", guards: Guards{ClusterPolicySelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}},
			image: "x", wantErr: "--cluster-policy-selector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.guards.Validate(tt.image)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestRunnerImageAllowList(t *testing.T) {
	g := Guards{AllowedRunnerImages: []string{"ghcr.io/magos-dev/magos-runner:*", "registry.example/runner@sha256:*"}}
	tests := map[string]bool{
		"ghcr.io/magos-dev/magos-runner:0.1.0":          true,
		"registry.example/runner@sha256:0123abcd":       true,
		"ghcr.io/magos-dev/magos-runner-evil:0.1.0":     false,
		"ghcr.io/magos-dev/magos-runner:0.1.0/../other": false,
		"registry.example/runner:latest":                false,
		"evil.example/ghcr.io/magos-dev/magos-runner:1": false,
	}
	for image, want := range tests {
		assert.Equal(t, want, g.checkRunnerImage(image) == nil, image)
	}
	assert.NoError(t, (&Guards{}).checkRunnerImage("anything"), "no allow-list allows any image")
}

func TestAnnotationsAllowed(t *testing.T) {
	const role = "eks.amazonaws.com/role-arn"
	p := &magosv1.Project{}
	p.Name = "team-a"
	p.Status.AllowedServiceAccountAnnotations = []string{"example.com/any"}
	p.Status.AllowedServiceAccountAnnotationValues = []magosv1.AnnotationRule{
		{Key: role, Values: []string{"arn:aws:iam::111122223333:role/team-a-*", "arn:aws:iam::111122223333:role/shared-reader"}},
		{Key: "iam.gke.io/gcp-service-account", Values: []string{""}},
	}
	tests := []struct {
		name        string
		annotations map[string]string
		wantErr     string
	}{
		{name: "none"},
		{name: "a key allowed with any value", annotations: map[string]string{"example.com/any": "whatever"}},
		{name: "a value a glob matches", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/team-a-deployer"}},
		{name: "an exact value", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/shared-reader"}},
		{name: "another team's role", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/platform-admin"},
			wantErr: `annotation "eks.amazonaws.com/role-arn" has a value Project team-a does not allow`},
		{name: "a glob does not cross a slash", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/team-a-x/admin"},
			wantErr: "does not allow"},
		{name: "an empty pattern matches only the empty value", annotations: map[string]string{"iam.gke.io/gcp-service-account": "admin@p.iam.gserviceaccount.com"},
			wantErr: "does not allow"},
		{name: "an unlisted key", annotations: map[string]string{"azure.workload.identity/client-id": "x"},
			wantErr: `annotation "azure.workload.identity/client-id" is not allowed by Project team-a`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := annotationsAllowed(tt.annotations, p)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
