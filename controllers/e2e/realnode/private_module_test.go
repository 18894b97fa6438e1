package realnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/gitserver"
	"github.com/magos-dev/magos/tools/harness/realnode"
)

// TestPrivateModulesOnTheNode: the runner image's git and ssh fetch
// git:: module sources from a private repository on the node, over smart
// HTTP with a password from a Secret (git settings in a VariableSet's env)
// and over SSH with an ssh_config, key and known_hosts mounted from a
// Secret at /etc/ssh (a runner volume), as the runner's non-root
// user under a read-only root filesystem. The credentials reach no
// container log.
func TestPrivateModulesOnTheNode(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	ns := newNamespace(t)
	src := newGitSource(t, ns)
	password := fmt.Sprintf("module-pass-%d", time.Now().UnixNano())
	git, err := gitserver.New(t.TempDir(), "magos", password)
	require.NoError(t, err)
	_, err = git.Publish("modules", "../testdata/private-module")
	require.NoError(t, err)
	httpL, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	sshL, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = httpL.Close(); _ = sshL.Close() })
	t.Cleanup(func() {
		if t.Failed() {
			// What git said: the runner Pods' output around the module download.
			for _, line := range strings.Split(readLogs(t, node.PodLogsDir()), "\n") {
				if strings.Contains(line, "git") || strings.Contains(line, "ssh") || strings.Contains(line, "rror") {
					t.Log(line)
				}
			}
		}
	})
	go func() { _ = git.ServeHTTP(httpL) }()
	go func() { _ = git.ServeSSH(sshL) }()

	header := git.AuthHeader()
	key, err := git.ClientKey()
	require.NoError(t, err)
	require.NoError(t, k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: ns},
		Data: map[string][]byte{"header": []byte(header), "id": key, "known_hosts": []byte(git.KnownHosts(sshL.Addr().String())),
			"ssh_config": []byte("Host *\n  IdentityFile /etc/ssh/id\n  IdentitiesOnly yes\n  UserKnownHostsFile /etc/ssh/known_hosts\n  BatchMode yes\n")},
	}))
	require.NoError(t, k8s.Create(ctx, &magosv1.VariableSet{
		ObjectMeta: metav1.ObjectMeta{Name: "git-http", Namespace: ns},
		Spec: magosv1.VariableSetSpec{Env: []magosv1.EnvEntry{
			{Name: "GIT_CONFIG_COUNT", Value: ptr.To("1")},
			{Name: "GIT_CONFIG_KEY_0", Value: ptr.To("http.extraHeader")},
			{Name: "GIT_CONFIG_VALUE_0", ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "git-auth"}, Key: "header"}}},
		}},
	}))

	for _, tc := range []struct {
		name, url string
		shape     func(*magosv1.Workspace)
	}{
		{"over-http", "git::http://" + httpL.Addr().String() + "/modules.git?ref=main", func(ws *magosv1.Workspace) {
			ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "git-http"}}
		}},
		// The image has no shell, which git needs for GIT_SSH_COMMAND; ssh
		// reads its system configuration from the mounted /etc/ssh instead.
		{"over-ssh", "git::ssh://git@" + sshL.Addr().String() + "/modules.git?ref=main", func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{
				Volumes: []magosv1.RunnerVolume{{Name: "ssh", MountPath: "/etc/ssh", Secret: &magosv1.SecretVolume{SecretName: "git-auth",
					Items: []magosv1.KeyPath{{Key: "ssh_config", Path: "ssh_config"}, {Key: "id", Path: "id"}, {Key: "known_hosts", Path: "known_hosts"}}}}},
			}
		}},
	} {
		caller, err := os.ReadFile("../testdata/private-module-caller/main.tf")
		require.NoError(t, err)
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, "main.tf"), []byte(strings.Replace(string(caller), "MODULE_SOURCE", tc.url, 1)), 0o644))
		rev := src.Publish(ctx, tc.name, root)
		ws := &magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: ns},
			Spec: magosv1.WorkspaceSpec{
				SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: tc.name},
				Outputs:   &magosv1.OutputsSpec{SecretName: tc.name + "-outputs"},
			},
		}
		tc.shape(ws)
		require.NoError(t, k8s.Create(ctx, ws))
		waitWorkspace(t, ns, tc.name, 5*time.Minute, "applies with the private module", applied(rev))
		var outputs corev1.Secret
		require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.name + "-outputs"}, &outputs))
		assert.Equal(t, "hello from a private module", string(outputs.Data["text"]), "%s: the module came from the private repository", tc.name)
	}

	logs := readLogs(t, node.PodLogsDir())
	require.Contains(t, logs, "Downloading git::ssh://", "the runner Pods' logs were read")
	keyBody := strings.TrimSpace(strings.Split(string(key), "\n")[1])
	for _, secret := range []string{password, header, keyBody} {
		assert.NotContains(t, logs, secret, "a Git credential leaked into a container log")
	}
}
