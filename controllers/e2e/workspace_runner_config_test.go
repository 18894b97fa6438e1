package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// TestRunnerEnvAndVolumesReachTheEngine: runner env (a literal and a
// Secret key) and a ConfigMap and a Secret volume reach OpenTofu, which
// reads the mounted files with file(); the Secret's value is masked.
func TestRunnerEnvAndVolumesReachTheEngine(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	word := "sentinel-" + rand.String(16)
	netrc := "machine git.example.invalid login magos password " + rand.String(16) + "\n"
	bundle := "-----BEGIN CERTIFICATE-----\nnot really a certificate\n-----END CERTIFICATE-----\n"
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "words", Namespace: s.ns},
		StringData: map[string]string{"word": word}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "netrc", Namespace: s.ns},
		StringData: map[string]string{"netrc": netrc}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ca", Namespace: s.ns},
		Data: map[string]string{"ca.pem": bundle}}))

	rev := s.gitRepository("infra", copyConfig(t, "runner-config"))
	s.newWorkspace("configured", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{
			Env: []magosv1.EnvEntry{
				{Name: "TF_VAR_word", ValueFrom: secretKey("words", "word")},
				{Name: "TF_VAR_bundle_path", Value: ptr.To("/etc/custom/ca/bundle.pem")},
				{Name: "TF_VAR_netrc_path", Value: ptr.To("/srv/netrc/.netrc")},
			},
			Volumes: []magosv1.RunnerVolume{
				{Name: "ca", MountPath: "/etc/custom/ca", ConfigMap: &magosv1.ConfigMapVolume{Name: "ca", Items: []magosv1.KeyPath{{Key: "ca.pem", Path: "bundle.pem"}}}},
				{Name: "netrc", MountPath: "/srv/netrc", Secret: &magosv1.SecretVolume{SecretName: "netrc", Items: []magosv1.KeyPath{{Key: "netrc", Path: ".netrc"}}}},
			},
		}
	})
	s.waitWorkspace("configured", 3*time.Minute, "applies", appliedRevision(rev))

	out := outputsOf(t, s.ns, "configured")
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum(word)), out["word_digest"], "the Secret-backed runner env reached OpenTofu")
	assert.Equal(t, bundle, out["bundle"], "the ConfigMap volume is mounted where runner env says")
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum(netrc)), out["netrc_digest"], "the Secret volume is mounted with its item path")
	assertNowhere(t, s, word)
	assertNowhere(t, s, strings.TrimSpace(netrc))
}

// TestRunnerCLIConfigReachesTheEngine: with no TF_CLI_CONFIG_FILE from the
// operator, a Workspace's cliConfig Secret is the only way the engine can
// install the magostest provider (from the filesystem mirror; there is no
// other installation method in it), so the apply proves the CLI
// configuration reached the engine. Its credentials block's token appears
// in no log, event, Job, Pod or status.
func TestRunnerCLIConfigReachesTheEngine(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.RunnerEnv = nil }})
	token := "sentinel-" + rand.String(24)
	var cfg strings.Builder
	require.NoError(t, template.Must(template.New("tofurc").Parse(`provider_installation {
  filesystem_mirror {
    path    = "{{.Providers}}"
    include = ["registry.opentofu.org/magos/*"]
  }
}

credentials "example.invalid" {
  token = "{{.Token}}"
}
`)).Execute(&cfg, map[string]string{"Providers": filepath.Join(env.Root, "bin", "providers"), "Token": token}))
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mirror", Namespace: s.ns},
		StringData: map[string]string{"tofurc": cfg.String()}}))

	root := t.TempDir()
	rev := s.gitRepository("infra", copyConfig(t, "cli-config"))
	s.newWorkspace("mirrored", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Vars = []magosv1.Variable{{Name: "root", Value: ptr.To(root)}}
		ws.Spec.Runner = &magosv1.RunnerSpec{CLIConfig: &magosv1.CLIConfigSpec{SecretName: "mirror"}}
	})
	s.waitWorkspace("mirrored", 3*time.Minute, "installs the provider from the mirror and applies", appliedRevision(rev))
	b, err := os.ReadFile(filepath.Join(root, "marker.txt"))
	require.NoError(t, err, "the provider ran")
	assert.Equal(t, "installed from the mirror\n", string(b))
	assertNowhere(t, s, token)
}

// TestProjectRunnerDefaultsAndForbiddenOverrides: a member Workspace
// inherits the Project's runner env and Pod labels (merged by key with its
// own; the cluster allows those label keys), and a Workspace that sets a runner field the Project forbids
// stalls, naming the field, and never runs.
func TestProjectRunnerDefaultsAndForbiddenOverrides(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.Guards.Placement.PodLabelKeys = []string{"team", "tier"} }})
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{
			Defaults: &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{
				Env:       []magosv1.EnvEntry{{Name: "TF_VAR_word", Value: ptr.To("from-the-project")}},
				PodLabels: map[string]string{"team": "platform", "tier": "project"},
			}},
			ForbiddenRunnerOverrides: []magosv1.RunnerField{"env", "cliConfig"},
		}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ca", Namespace: s.ns},
		Data: map[string]string{"ca.pem": "bundle"}}))

	rev := s.gitRepository("infra", copyConfig(t, "runner-config"))
	s.newWorkspace("member", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "platform"}
		ws.Spec.Vars = []magosv1.Variable{{Name: "bundle_path", Value: ptr.To("/srv/ca/ca.pem")}, {Name: "netrc_path", Value: ptr.To("/srv/ca/ca.pem")}}
		ws.Spec.Runner = &magosv1.RunnerSpec{
			PodLabels: map[string]string{"tier": "member"},
			Volumes:   []magosv1.RunnerVolume{{Name: "ca", MountPath: "/srv/ca", ConfigMap: &magosv1.ConfigMapVolume{Name: "ca"}}},
		}
	})
	s.waitWorkspace("member", 3*time.Minute, "applies with the Project's runner env", appliedRevision(rev))
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum("from-the-project")), outputsOf(t, s.ns, "member")["word_digest"], "the Project's runner env reached OpenTofu")
	var pods corev1.PodList
	require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "member"}))
	require.NotEmpty(t, pods.Items)
	for _, p := range pods.Items {
		assert.Equal(t, "platform", p.Labels["team"], "Pod %s has the Project's label", p.Name)
		assert.Equal(t, "member", p.Labels["tier"], "Pod %s has the Workspace's label over the Project's", p.Name)
	}

	s.newWorkspace("rebel", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "platform"}
		ws.Spec.Runner = &magosv1.RunnerSpec{Env: []magosv1.EnvEntry{{Name: "TF_VAR_word", Value: ptr.To("mine")}}}
	})
	ws := s.waitWorkspace("rebel", time.Minute, "stalls", func(ws *magosv1.Workspace) bool {
		return conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	stalled := conditions.Get(ws, magosv1.StalledCondition)
	assert.Equal(t, magosv1.ReasonRunnerOverrideForbidden, stalled.Reason)
	assert.Contains(t, stalled.Message, "spec.runner.env")
	assert.Contains(t, stalled.Message, "forbidden by Project platform")
	require.Never(t, func() bool { return planJobs(t, s.ns, "rebel") > 0 }, 3*time.Second, 250*time.Millisecond,
		"a Workspace overriding a forbidden runner field never runs")
}
