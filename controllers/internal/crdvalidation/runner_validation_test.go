package crdvalidation

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func withRunner(rs magosv1.RunnerSpec) client.Object {
	return workspace(func(ws *magosv1.Workspace) { ws.Spec.Runner = &rs })
}

func secretVolume(name, mountPath, secret string) magosv1.RunnerVolume {
	return magosv1.RunnerVolume{Name: name, MountPath: mountPath, Secret: &magosv1.SecretVolume{SecretName: secret}}
}

func configMapVolume(name, mountPath string, items ...magosv1.KeyPath) magosv1.RunnerVolume {
	return magosv1.RunnerVolume{Name: name, MountPath: mountPath, ConfigMap: &magosv1.ConfigMapVolume{Name: "bundle", Items: items}}
}

// TestRunnerSpecValidation pins every admission refusal of the runner
// configuration (spec.runner, and Project defaults.runner, which share the
// type) and that the configuration a platform team needs is accepted.
func TestRunnerSpecValidation(t *testing.T) {
	env.Require(t)
	type testCase struct {
		name string
		obj  client.Object
		// wantFields are substrings the refusal must contain; empty means
		// the object must be accepted.
		wantFields []string
	}
	tests := []testCase{
		{name: "full runner configuration", obj: withRunner(magosv1.RunnerSpec{
			Env: []magosv1.EnvEntry{{Name: "HTTPS_PROXY", Value: ptr.To("http://proxy:3128")}, {Name: "GITHUB_TOKEN", ValueFrom: secretRef("gh", "token")}},
			Volumes: []magosv1.RunnerVolume{
				secretVolume("netrc", "/home/runner/netrc", "netrc"),
				configMapVolume("ca", "/etc/ssl/certs", magosv1.KeyPath{Key: "ca.pem", Path: "ca-certificates.crt"}),
			},
			CLIConfig:         &magosv1.CLIConfigSpec{SecretName: "mirror"},
			PodLabels:         map[string]string{"sidecar.istio.io/inject": "false", "team": "infra"},
			PodAnnotations:    map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
			Affinity:          &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"infra"}}}}}}}},
			PriorityClassName: "infra-runs",
			ImagePullSecrets:  []magosv1.LocalObjectReference{{Name: "registry"}},
			SecurityContext:   &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000), FSGroup: ptr.To[int64](1000)},
		})},
		{name: "project forbidding overrides with runner defaults", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{CLIConfig: &magosv1.CLIConfigSpec{SecretName: "mirror", Key: "config"}}}
			p.Spec.ForbiddenRunnerOverrides = []magosv1.RunnerField{"cliConfig", "image"}
		})},

		// Environment.
		{name: "runner env with value and valueFrom", obj: withRunner(magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: "A", Value: ptr.To("x"), ValueFrom: secretRef("s", "k")}}}),
			wantFields: []string{"spec.runner.env[0]", "value and valueFrom are mutually exclusive"}},
		{name: "runner env from a state Secret", obj: withRunner(magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: "A", ValueFrom: secretRef(magosv1.StateSecretName("victim"), "tfstate")}}}),
			wantFields: []string{"spec.runner.env[0].valueFrom", "must not name a state or plan Secret"}},
		{name: "duplicate runner env", obj: withRunner(magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: "A", Value: ptr.To("1")}, {Name: "A", Value: ptr.To("2")}}}),
			wantFields: []string{"spec.runner.env[1]", "Duplicate value"}},

		// Volumes.
		{name: "relative mount path", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "etc/ssl", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].mountPath", "must be absolute"}},
		{name: "mount path with ..", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/../tmp", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].mountPath", "must not contain '..'"}},
		{name: "mount path with a trailing slash", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].mountPath", "must be clean"}},
		{name: "mount path with a . segment", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/./x", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].mountPath", "must be clean"}},
		{name: "mount path at the root", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].mountPath"}},
		{name: "mount path over the versions directory", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/opt", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].mountPath", "must not be at, under or over a path the runner uses"}},
		{name: "duplicate volume names", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/a", "ca"), secretVolume("a", "/srv/b", "ca")}}),
			wantFields: []string{"spec.runner.volumes[1]", "Duplicate value"}},
		{name: "duplicate mount paths", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/a", "ca"), secretVolume("b", "/srv/a", "ca")}}),
			wantFields: []string{"spec.runner.volumes", "each volume needs its own mountPath"}},
		{name: "volume naming both a Secret and a ConfigMap", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{{Name: "a", MountPath: "/srv/a",
			Secret: &magosv1.SecretVolume{SecretName: "s"}, ConfigMap: &magosv1.ConfigMapVolume{Name: "c"}}}}),
			wantFields: []string{"spec.runner.volumes[0]", "exactly one of secret or configMap"}},
		{name: "volume naming neither", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{{Name: "a", MountPath: "/srv/a"}}}),
			wantFields: []string{"spec.runner.volumes[0]", "exactly one of secret or configMap"}},
		{name: "volume name that is not a DNS label", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("CA_bundle", "/srv/a", "ca")}}),
			wantFields: []string{"spec.runner.volumes[0].name"}},
		{name: "volume of a state Secret", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/a", magosv1.StateSecretName("victim"))}}),
			wantFields: []string{"spec.runner.volumes[0].secret.secretName", "must not name a state Secret"}},
		{name: "volume of a plan Secret", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/srv/a", magosv1.PlanSecretName("victim", 0))}}),
			wantFields: []string{"spec.runner.volumes[0].secret.secretName", "must not name a plan Secret"}},
		{name: "item path that is absolute", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{configMapVolume("a", "/srv/a", magosv1.KeyPath{Key: "k", Path: "/etc/passwd"})}}),
			wantFields: []string{"spec.runner.volumes[0].configMap.items[0].path", "must be relative"}},
		{name: "item path with ..", obj: withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{configMapVolume("a", "/srv/a", magosv1.KeyPath{Key: "k", Path: "x/../../y"})}}),
			wantFields: []string{"spec.runner.volumes[0].configMap.items[0].path", "must not contain '..'"}},

		{name: "runner env reading a dependency's output", obj: withRunner(magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: "VPC",
			ValueFrom: &magosv1.VariableSource{OutputRef: &magosv1.OutputReference{Workspace: "network", Output: "vpc_id"}}}}}),
			wantFields: []string{"spec.runner.env", "outputRef is only for a Workspace's spec.vars"}},

		// CLI configuration.
		{name: "CLI configuration from a state Secret", obj: withRunner(magosv1.RunnerSpec{CLIConfig: &magosv1.CLIConfigSpec{SecretName: magosv1.StateSecretName("victim")}}),
			wantFields: []string{"spec.runner.cliConfig.secretName", "must not name a state Secret"}},
		{name: "CLI configuration from a plan Secret", obj: withRunner(magosv1.RunnerSpec{CLIConfig: &magosv1.CLIConfigSpec{SecretName: magosv1.PlanSecretName("victim", 12)}}),
			wantFields: []string{"spec.runner.cliConfig.secretName", "must not name a plan Secret"}},
		{name: "CLI configuration key with a slash", obj: withRunner(magosv1.RunnerSpec{CLIConfig: &magosv1.CLIConfigSpec{SecretName: "mirror", Key: "../x"}}),
			wantFields: []string{"spec.runner.cliConfig.key"}},

		// Pod metadata and placement.
		{name: "pod label under magos.dev", obj: withRunner(magosv1.RunnerSpec{PodLabels: map[string]string{magosv1.PhaseLabel: "apply"}}),
			wantFields: []string{"spec.runner.podLabels", "keys under magos.dev/ are reserved"}},
		{name: "pod label under a magos.dev subdomain", obj: withRunner(magosv1.RunnerSpec{PodLabels: map[string]string{"run.magos.dev/x": "y"}}),
			wantFields: []string{"spec.runner.podLabels", "keys under magos.dev/ are reserved"}},
		{name: "pod annotation under magos.dev", obj: withRunner(magosv1.RunnerSpec{PodAnnotations: map[string]string{"magos.dev/run": "x"}}),
			wantFields: []string{"spec.runner.podAnnotations", "keys under magos.dev/ are reserved"}},
		{name: "pod annotation unconfining AppArmor", obj: withRunner(magosv1.RunnerSpec{PodAnnotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/runner": "unconfined"}}),
			wantFields: []string{"spec.runner.podAnnotations", "AppArmor or seccomp"}},
		{name: "priority class that is not a name", obj: withRunner(magosv1.RunnerSpec{PriorityClassName: "High Priority"}),
			wantFields: []string{"spec.runner.priorityClassName"}},
		{name: "image pull secret without a name", obj: withRunner(magosv1.RunnerSpec{ImagePullSecrets: []magosv1.LocalObjectReference{{}}}),
			wantFields: []string{"spec.runner.imagePullSecrets[0].name"}},

		// Security context.
		{name: "runner as root", obj: withRunner(magosv1.RunnerSpec{SecurityContext: &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](0)}}),
			wantFields: []string{"spec.runner.securityContext.runAsUser", "greater than or equal to 1"}},
		{name: "runner in the root group", obj: withRunner(magosv1.RunnerSpec{SecurityContext: &magosv1.RunnerSecurityContext{RunAsGroup: ptr.To[int64](0)}}),
			wantFields: []string{"spec.runner.securityContext.runAsGroup", "greater than or equal to 1"}},
		{name: "volumes owned by the root group", obj: withRunner(magosv1.RunnerSpec{SecurityContext: &magosv1.RunnerSecurityContext{FSGroup: ptr.To[int64](0)}}),
			wantFields: []string{"spec.runner.securityContext.fsGroup", "greater than or equal to 1"}},

		// The same type on Project defaults.
		{name: "project default runner as root", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{SecurityContext: &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](0)}}}
		}), wantFields: []string{"spec.defaults.runner.securityContext.runAsUser"}},
		{name: "project default volume over /tmp", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", "/tmp/x", "ca")}}}
		}), wantFields: []string{"spec.defaults.runner.volumes[0].mountPath", "must not be at, under or over"}},
		{name: "project forbidding an unknown field", obj: project(func(p *magosv1.Project) {
			p.Spec.ForbiddenRunnerOverrides = []magosv1.RunnerField{"hostNetwork"}
		}), wantFields: []string{"spec.forbiddenRunnerOverrides[0]", "Unsupported value"}},
	}

	// Every reserved name is refused in runner env as in VariableSet env.
	for _, name := range append(append([]string{}, magosv1.ReservedEnvNames...), "MAGOS_X", "TF_LOG_PATH") {
		tests = append(tests, testCase{name: "reserved runner env " + name,
			obj:        withRunner(magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: name, Value: ptr.To("x")}}}),
			wantFields: []string{"spec.runner.env[0].name", "name is reserved"}})
	}
	// A volume at, under or over every reserved path is refused.
	for _, p := range magosv1.ReservedMountPaths {
		for _, mount := range []string{p, p + "/sub"} {
			tests = append(tests, testCase{name: "volume at " + mount,
				obj:        withRunner(magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{secretVolume("a", mount, "ca")}}),
				wantFields: []string{"spec.runner.volumes[0].mountPath", "must not be at, under or over"}})
		}
	}

	ns := env.NewNamespace(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj.DeepCopyObject().(client.Object)
			obj.SetNamespace(ns)
			err := env.Client.Create(context.Background(), obj)
			if len(tt.wantFields) == 0 {
				require.NoError(t, err, "valid object was refused")
				return
			}
			require.Error(t, err, "invalid object was accepted")
			require.True(t, apierrors.IsInvalid(err), "want an Invalid error, got %v", err)
			for _, want := range tt.wantFields {
				assert.Contains(t, err.Error(), want, fmt.Sprintf("refusal should name %q", want))
			}
		})
	}
}

// TestMountPathConflictMatchesAdmission pins the Go list the controller
// checks at reconcile against the admission rule's.
func TestMountPathConflictMatchesAdmission(t *testing.T) {
	for _, p := range magosv1.ReservedMountPaths {
		assert.Equal(t, p, magosv1.MountPathConflict(p+"/x", magosv1.ReservedMountPaths))
	}
	assert.Equal(t, "/opt/magos", magosv1.MountPathConflict("/opt", magosv1.ReservedMountPaths), "a mount over a reserved path hides it")
	assert.Empty(t, magosv1.MountPathConflict("/etc/ssl/certs", magosv1.ReservedMountPaths))
	assert.Empty(t, magosv1.MountPathConflict("/tmpfoo", magosv1.ReservedMountPaths), "a sibling with the same prefix is not under it")
}
