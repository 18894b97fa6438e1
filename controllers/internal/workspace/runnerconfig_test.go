package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// runnerTestReconciler is a Reconciler whose settings need no apiserver.
func runnerTestReconciler() *Reconciler {
	return &Reconciler{Options: config.Options{RunnerImage: "runner:1", VersionsDir: "/opt/magos/engines", DefaultEngineVersion: "1.10.6",
		EngineImages: map[magosv1.Engine]string{magosv1.EngineOpenTofu: "engine:{version}"}}}
}

func projectWithRunner(rs *magosv1.RunnerSpec, forbidden ...magosv1.RunnerField) *magosv1.Project {
	return &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "platform"},
		Status: magosv1.ProjectStatus{Defaults: &magosv1.ProjectDefaults{Runner: rs}, ForbiddenRunnerOverrides: forbidden}}
}

func workspaceWithRunner(rs *magosv1.RunnerSpec) *magosv1.Workspace {
	return &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: magosv1.WorkspaceSpec{Runner: rs}}
}

func literal(name, value string) magosv1.EnvEntry {
	return magosv1.EnvEntry{Name: name, Value: ptr.To(value)}
}

func fromSecret(name, secret, key string) magosv1.EnvEntry {
	return magosv1.EnvEntry{Name: name, ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}}
}

func mounted(name, mountPath, configMap string) magosv1.RunnerVolume {
	return magosv1.RunnerVolume{Name: name, MountPath: mountPath, ConfigMap: &magosv1.ConfigMapVolume{Name: configMap}}
}

// TestRunnerSettingsInheritProjectDefaults pins the merge of a Workspace's
// runner over its Project's defaults.runner: env and volumes by name,
// labels and annotations by key, pull secrets by name, the IDs one by one,
// everything else replaced; the Project is left as it was.
func TestRunnerSettingsInheritProjectDefaults(t *testing.T) {
	p := projectWithRunner(&magosv1.RunnerSpec{
		Env:               []magosv1.EnvEntry{literal("A", "project"), literal("B", "project")},
		Volumes:           []magosv1.RunnerVolume{mounted("ca", "/etc/ssl/certs", "ca"), mounted("netrc", "/srv/netrc", "netrc")},
		PodLabels:         map[string]string{"team": "infra", "tier": "project"},
		PodAnnotations:    map[string]string{"sidecar.istio.io/inject": "false"},
		ImagePullSecrets:  []magosv1.LocalObjectReference{{Name: "project-registry"}},
		SecurityContext:   &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](3000)},
		CLIConfig:         &magosv1.CLIConfigSpec{SecretName: "project-mirror"},
		PriorityClassName: "project",
		NodeSelector:      map[string]string{"pool": "infra", "zone": "a"},
		Timeout:           &metav1.Duration{Duration: 20 * time.Minute},
	})
	before := p.DeepCopy()
	ws := workspaceWithRunner(&magosv1.RunnerSpec{
		Env:               []magosv1.EnvEntry{literal("B", "workspace"), fromSecret("C", "creds", "token")},
		Volumes:           []magosv1.RunnerVolume{mounted("netrc", "/srv/other-netrc", "team-netrc"), mounted("keys", "/srv/keys", "keys")},
		PodLabels:         map[string]string{"tier": "workspace"},
		ImagePullSecrets:  []magosv1.LocalObjectReference{{Name: "team-registry"}, {Name: "project-registry"}},
		SecurityContext:   &magosv1.RunnerSecurityContext{RunAsGroup: ptr.To[int64](2000)},
		PriorityClassName: "workspace",
		NodeSelector:      map[string]string{"pool": "team"},
	})

	s, err := settingsOf(runnerTestReconciler(), ws, inputs{Project: p})
	require.NoError(t, err)
	rs := s.Runner
	assert.Equal(t, []magosv1.EnvEntry{literal("A", "project"), literal("B", "workspace"), fromSecret("C", "creds", "token")}, rs.Env, "env merges by name")
	assert.Equal(t, []magosv1.RunnerVolume{mounted("ca", "/etc/ssl/certs", "ca"), mounted("netrc", "/srv/other-netrc", "team-netrc"), mounted("keys", "/srv/keys", "keys")},
		rs.Volumes, "volumes merge by name")
	assert.Equal(t, map[string]string{"team": "infra", "tier": "workspace"}, rs.PodLabels, "labels merge by key")
	assert.Equal(t, map[string]string{"sidecar.istio.io/inject": "false"}, rs.PodAnnotations, "annotations are inherited")
	assert.Equal(t, []magosv1.LocalObjectReference{{Name: "project-registry"}, {Name: "team-registry"}}, rs.ImagePullSecrets, "pull secrets are a union")
	assert.Equal(t, &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](2000), FSGroup: ptr.To[int64](3000)},
		rs.SecurityContext, "IDs merge one by one")
	assert.Equal(t, "project-mirror", rs.CLIConfig.SecretName, "an unset cliConfig is inherited")
	assert.Equal(t, "workspace", rs.PriorityClassName, "single values replace")
	assert.Equal(t, map[string]string{"pool": "team"}, rs.NodeSelector, "the node selector is replaced whole, as before")
	assert.Equal(t, 20*time.Minute, s.Timeout, "an unset timeout is inherited")
	assert.Equal(t, []string{"C"}, s.Sensitive, "a Secret-backed runner env entry is masked")
	assert.Equal(t, before, p, "merging leaves the Project untouched")
}

// TestRunnerConfigRefusedAtReconcile pins what the controller refuses in
// the effective runner configuration, whatever admission let through.
func TestRunnerConfigRefusedAtReconcile(t *testing.T) {
	tests := []struct {
		name       string
		project    *magosv1.RunnerSpec
		workspace  *magosv1.RunnerSpec
		varEnv     []corev1.EnvVar
		versions   string
		wantReason string
		wantMsg    string
	}{
		{name: "reserved env name", workspace: &magosv1.RunnerSpec{Env: []magosv1.EnvEntry{literal("TF_CLI_CONFIG_FILE", "/x")}},
			wantReason: magosv1.ReasonReservedEnvironment, wantMsg: "TF_CLI_CONFIG_FILE"},
		{name: "env name a variable sets too", workspace: &magosv1.RunnerSpec{Env: []magosv1.EnvEntry{literal("TF_VAR_region", "x")}},
			varEnv: []corev1.EnvVar{{Name: "TF_VAR_region", Value: "y"}}, wantReason: magosv1.ReasonDuplicateVariable, wantMsg: "TF_VAR_region is set by both"},
		{name: "Project and Workspace volumes at one path", project: &magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{mounted("a", "/srv/x", "a")}},
			workspace: &magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{mounted("b", "/srv/x", "b")}}, wantReason: magosv1.ReasonInvalidRunnerConfig, wantMsg: "both mounted at /srv/x"},
		{name: "mount over a custom versions directory", workspace: &magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{mounted("a", "/usr/local", "a")}},
			versions: "/usr/local/engines", wantReason: magosv1.ReasonInvalidRunnerConfig, wantMsg: "/usr/local/engines"},
		{name: "label key Kubernetes refuses", workspace: &magosv1.RunnerSpec{PodLabels: map[string]string{"a b": "x"}},
			wantReason: magosv1.ReasonInvalidRunnerConfig, wantMsg: `label "a b"`},
		{name: "label value Kubernetes refuses", workspace: &magosv1.RunnerSpec{PodLabels: map[string]string{"team": "a/b"}},
			wantReason: magosv1.ReasonInvalidRunnerConfig, wantMsg: `label "team"`},
		{name: "annotation key Kubernetes refuses", project: &magosv1.RunnerSpec{PodAnnotations: map[string]string{"-x": "y"}},
			wantReason: magosv1.ReasonInvalidRunnerConfig, wantMsg: `annotation "-x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runnerTestReconciler()
			if tt.versions != "" {
				r.Options.VersionsDir = tt.versions
			}
			in := inputs{Env: tt.varEnv}
			if tt.project != nil {
				in.Project = projectWithRunner(tt.project)
			}
			_, err := settingsOf(r, workspaceWithRunner(tt.workspace), in)
			require.Error(t, err)
			re, ok := rerror.As(err)
			require.True(t, ok, "a typed error: %v", err)
			assert.True(t, re.Stalling, "a spec error stalls")
			assert.Equal(t, tt.wantReason, re.Reason)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

// TestRunnerInputsDigest pins which runner settings re-plan: those the
// engine sees (env, volumes, CLI configuration), not Pod placement or
// metadata; and that a Workspace without them keeps its digest.
func TestRunnerInputsDigest(t *testing.T) {
	r := runnerTestReconciler()
	digest := func(rs *magosv1.RunnerSpec) string {
		ws := workspaceWithRunner(rs)
		s, err := settingsOf(r, ws, inputs{})
		require.NoError(t, err)
		return runjob.InputsDigest(ws, s.Settings, nil, nil)
	}
	base := digest(nil)
	for name, rs := range map[string]*magosv1.RunnerSpec{
		"env":       {Env: []magosv1.EnvEntry{literal("HTTPS_PROXY", "http://proxy")}},
		"volumes":   {Volumes: []magosv1.RunnerVolume{mounted("ca", "/etc/ssl/certs", "ca")}},
		"cliConfig": {CLIConfig: &magosv1.CLIConfigSpec{SecretName: "mirror"}},
	} {
		assert.NotEqual(t, base, digest(rs), "%s is an input", name)
	}
	for name, rs := range map[string]*magosv1.RunnerSpec{
		"podLabels":         {PodLabels: map[string]string{"a": "b"}},
		"podAnnotations":    {PodAnnotations: map[string]string{"a": "b"}},
		"affinity":          {Affinity: &corev1.Affinity{}},
		"priorityClassName": {PriorityClassName: "high"},
		"imagePullSecrets":  {ImagePullSecrets: []magosv1.LocalObjectReference{{Name: "reg"}}},
		"securityContext":   {SecurityContext: &magosv1.RunnerSecurityContext{RunAsUser: ptr.To[int64](1000)}},
	} {
		assert.Equal(t, base, digest(rs), "%s is pod placement, not an input", name)
	}
	assert.Equal(t, digestWithoutRunnerInputs(workspaceWithRunner(nil), r.Options.DefaultEngineVersion), base,
		"a Workspace without runner inputs keeps the digest it had before they existed")
}

// digestWithoutRunnerInputs is the inputs digest as it was computed before
// runner inputs existed, for a Workspace with no VariableSets.
func digestWithoutRunnerInputs(ws *magosv1.Workspace, version string) string {
	in := struct {
		Path    string               `json:"path"`
		Engine  magosv1.Engine       `json:"engine"`
		Version string               `json:"version"`
		Env     []corev1.EnvVar      `json:"env"`
		Sets    []string             `json:"sets"`
		Backend *magosv1.BackendSpec `json:"backend"`
	}{ws.Spec.Path, magosv1.EngineOpenTofu, version, nil, nil, ws.Spec.Backend}
	b, _ := json.Marshal(in)
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// TestRunnerVolumesCannotReadStorage pins that runner volumes and the CLI
// configuration go through the same storage guard as env: a Secret Magos
// keeps for the Workspace's runs is refused before any Job exists.
func TestRunnerVolumesCannotReadStorage(t *testing.T) {
	ws := workspaceWithRunner(&magosv1.RunnerSpec{
		Volumes: []magosv1.RunnerVolume{mounted("ca", "/etc/ssl/certs", "ca"),
			{Name: "loot", MountPath: "/srv/loot", Secret: &magosv1.SecretVolume{SecretName: "web-outputs"}}},
		CLIConfig: &magosv1.CLIConfigSpec{SecretName: "web-plan-00"},
	})
	ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: "web-outputs"}
	rs := runjob.EffectiveRunner(ws, nil)
	refs := runnerSecretRefs(&rs)
	assert.Equal(t, []secretRef{{Secret: "web-outputs", Entry: "runner volume loot"}, {Secret: "web-plan-00", Entry: "runner cliConfig"}}, refs,
		"ConfigMap volumes read no Secret")
	for _, ref := range refs {
		_, err := (&Reconciler{}).checkStorageRefs(context.Background(), ws, []secretRef{ref})
		re, ok := rerror.As(err)
		require.True(t, ok, "refused: %v", err)
		assert.Equal(t, magosv1.ReasonStorageReferenceNotAllowed, re.Reason)
		assert.True(t, re.Stalling)
		assert.Contains(t, err.Error(), ref.Entry+" reads Secret "+ref.Secret)
	}
}
