package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/gitserver"
)

// privateModule serves testdata/private-module from a Git server that wants
// a password over HTTP and a key over SSH, and writes the root
// configuration testdata/private-module-caller calling it from url (a
// git:: source with %s for the address of the server's transport that
// serve starts). It returns the server, that address and the
// configuration's directory.
func privateModule(t *testing.T, password, url string, serve func(*gitserver.Server, net.Listener) error) (*gitserver.Server, string, string) {
	t.Helper()
	srv, err := gitserver.New(t.TempDir(), "magos", password)
	require.NoError(t, err)
	_, err = srv.Publish("modules", filepath.Join("testdata", "private-module"))
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() { _ = serve(srv, l) }()

	root := copyConfig(t, "private-module-caller")
	editConfig(t, root, "MODULE_SOURCE", fmt.Sprintf(url, l.Addr().String()))
	return srv, l.Addr().String(), root
}

// A module source in a private Git repository over HTTP is fetched with
// credentials from a Secret, given to git through environment entries of
// a VariableSet (git's GIT_CONFIG_COUNT/KEY/VALUE settings); without them
// the run fails at init instead of waiting for a password prompt; the
// credentials appear in no log, event, status or Job.
func TestPrivateGitModuleOverHTTP(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	password := "module-pass-" + rand.String(12)
	srv, _, root := privateModule(t, password, "git::http://%s/modules.git?ref=main", (*gitserver.Server).ServeHTTP)
	header := srv.AuthHeader()
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: s.ns},
		StringData: map[string]string{"header": header},
	}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.VariableSet{
		ObjectMeta: metav1.ObjectMeta{Name: "git", Namespace: s.ns},
		Spec: magosv1.VariableSetSpec{Env: []magosv1.EnvEntry{
			{Name: "GIT_CONFIG_COUNT", Value: ptr.To("1")},
			{Name: "GIT_CONFIG_KEY_0", Value: ptr.To("http.extraHeader")},
			{Name: "GIT_CONFIG_VALUE_0", ValueFrom: secretKey("git-auth", "header")},
		}},
	}))
	rev := s.gitRepository("infra", root)

	// Without credentials: init fails, and the server refused the fetch.
	s.newWorkspace("no-credentials", "infra", nil)
	ws := s.waitWorkspace("no-credentials", 3*time.Minute, "fails at init", func(ws *magosv1.Workspace) bool {
		r := ws.Status.LastRun()
		return r != nil && r.Result == magosv1.ResultFailed
	})
	assert.Equal(t, magosv1.ReasonInitFailed, ws.Status.LastRun().Reason)
	assert.Positive(t, srv.Refused(), "the server refused the fetch without credentials")

	s.newWorkspace("private", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "git"}}
	})
	s.waitWorkspace("private", 3*time.Minute, "applies with the private module", appliedRevision(rev))
	assert.Equal(t, "hello from a private module", outputsOf(t, s.ns, "private")["text"], "the module came from the private repository")
	assertNowhere(t, s, password)
	assertNowhere(t, s, header)
}

// A module source in a private Git repository over SSH is fetched with a
// key and known_hosts from a Secret mounted into the runner
// (spec.runner.volumes) and an ssh command in spec.runner.env; without the
// key the run fails at init; the key appears in no log, event, status or
// Job.
func TestPrivateGitModuleOverSSH(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	srv, addr, root := privateModule(t, "", "git::ssh://git@%s/modules.git?ref=main", (*gitserver.Server).ServeSSH)
	key, err := srv.ClientKey()
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-ssh", Namespace: s.ns},
		Data:       map[string][]byte{"id": key, "known_hosts": []byte(srv.KnownHosts(addr))},
	}))
	rev := s.gitRepository("infra", root)
	sshRunner := func(keyFile string) *magosv1.RunnerSpec {
		return &magosv1.RunnerSpec{
			Volumes: []magosv1.RunnerVolume{{Name: "git-ssh", MountPath: "/etc/git-ssh", Secret: &magosv1.SecretVolume{SecretName: "git-ssh"}}},
			Env: []magosv1.EnvEntry{{Name: "GIT_SSH_COMMAND", Value: ptr.To(
				"ssh -F /dev/null -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=/etc/git-ssh/known_hosts -i /etc/git-ssh/" + keyFile)}},
		}
	}

	// With a key file that is not there: init fails, the server refused.
	s.newWorkspace("no-key", "infra", func(ws *magosv1.Workspace) { ws.Spec.Runner = sshRunner("missing") })
	ws := s.waitWorkspace("no-key", 3*time.Minute, "fails at init", func(ws *magosv1.Workspace) bool {
		r := ws.Status.LastRun()
		return r != nil && r.Result == magosv1.ResultFailed
	})
	assert.Equal(t, magosv1.ReasonInitFailed, ws.Status.LastRun().Reason)
	assert.Positive(t, srv.Refused(), "the server refused the connection without the key")

	s.newWorkspace("private", "infra", func(ws *magosv1.Workspace) { ws.Spec.Runner = sshRunner("id") })
	s.waitWorkspace("private", 3*time.Minute, "applies with the private module", appliedRevision(rev))
	assert.Equal(t, "hello from a private module", outputsOf(t, s.ns, "private")["text"], "the module came from the private repository")
	assertNowhere(t, s, strings.TrimSpace(strings.Split(string(key), "\n")[1]))
}
