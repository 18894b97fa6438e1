package gitserver

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clone runs git clone of url into a new directory with extra environment
// and returns the directory and git's output.
func clone(t *testing.T, url string, env ...string) (string, string, error) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command("git", "clone", "--quiet", url, dst)
	cmd.Env = append(os.Environ(), append([]string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + t.TempDir()}, env...)...)
	out, err := cmd.CombinedOutput()
	return dst, string(out), err
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestServesOnlyClientsWithCredentials(t *testing.T) {
	srv, err := New(t.TempDir(), "magos", "s3cret-pass")
	require.NoError(t, err)
	content := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(content, "main.tf"), []byte(`output "x" { value = 1 }`), 0o644))
	commit, err := srv.Publish("modules", content)
	require.NoError(t, err)
	require.Len(t, commit, 40)

	httpL, sshL := listen(t), listen(t)
	go func() { _ = srv.ServeHTTP(httpL) }()
	go func() { _ = srv.ServeSSH(sshL) }()

	t.Run("http with the password", func(t *testing.T) {
		dst, out, err := clone(t, "http://magos:s3cret-pass@"+httpL.Addr().String()+"/modules.git")
		require.NoError(t, err, out)
		b, err := os.ReadFile(filepath.Join(dst, "main.tf"))
		require.NoError(t, err)
		assert.Contains(t, string(b), `output "x"`)
	})
	t.Run("http without it", func(t *testing.T) {
		before := srv.Refused()
		_, out, err := clone(t, "http://"+httpL.Addr().String()+"/modules.git")
		require.Error(t, err, out)
		assert.Greater(t, srv.Refused(), before)
	})

	keyDir := t.TempDir()
	key, err := srv.ClientKey()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(keyDir, "id"), key, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(keyDir, "known_hosts"), []byte(srv.KnownHosts(sshL.Addr().String())), 0o644))
	sshCommand := func(identity string) string {
		return "GIT_SSH_COMMAND=ssh -F /dev/null -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=" +
			filepath.Join(keyDir, "known_hosts") + " -i " + identity
	}
	_, port, _ := net.SplitHostPort(sshL.Addr().String())
	url := "ssh://git@127.0.0.1:" + port + "/modules.git"

	t.Run("ssh with the key", func(t *testing.T) {
		dst, out, err := clone(t, url, sshCommand(filepath.Join(keyDir, "id")))
		require.NoError(t, err, out)
		_, err = os.Stat(filepath.Join(dst, "main.tf"))
		require.NoError(t, err)
	})
	t.Run("ssh with another key", func(t *testing.T) {
		other, err := New(t.TempDir(), "", "")
		require.NoError(t, err)
		otherKey, err := other.ClientKey()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(keyDir, "other"), otherKey, 0o600))
		_, out, err := clone(t, url, sshCommand(filepath.Join(keyDir, "other")))
		require.Error(t, err)
		assert.True(t, strings.Contains(out, "Permission denied") || strings.Contains(out, "publickey"), out)
	})
}
