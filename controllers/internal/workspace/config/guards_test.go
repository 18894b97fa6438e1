package config

import (
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	digest := "sha256:" + strings.Repeat("0123abcd", 8)
	g := Guards{AllowedRunnerImages: []string{"ghcr.io/magos-dev/magos-runner:*", "registry.example/runner@" + digest}}
	tests := map[string]bool{
		"ghcr.io/magos-dev/magos-runner:0.1.0":          true,
		"registry.example/runner@" + digest:             true,
		"ghcr.io/magos-dev/magos-runner-evil:0.1.0":     false,
		"ghcr.io/magos-dev/magos-runner:0.1.0/../other": false,
		"registry.example/runner:latest":                false,
		"evil.example/ghcr.io/magos-dev/magos-runner:1": false,
	}
	for image, want := range tests {
		assert.Equal(t, want, g.CheckRunnerImage(image) == nil, image)
	}
	assert.NoError(t, (&Guards{}).CheckRunnerImage("anything"), "no allow-list allows any image")
}
