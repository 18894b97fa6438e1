package executor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMapPath(t *testing.T) {
	mounts := []mount{{path: "/etc/git-ssh/sub", local: "/local/sub"}, {path: "/etc/git-ssh", local: "/local/ssh"}}
	for _, tc := range []struct{ in, want string }{
		{"/etc/git-ssh", "/local/ssh"},
		{"/etc/git-ssh/id", filepath.Join("/local/ssh", "id")},
		{"/etc/git-ssh/sub/x", filepath.Join("/local/sub", "x")},
		{"/etc/git-sshx/id", "/etc/git-sshx/id"},
		{"ssh -i /etc/git-ssh/id -o UserKnownHostsFile=/etc/git-ssh/known_hosts -o BatchMode=yes",
			"ssh -i /local/ssh/id -o UserKnownHostsFile=/local/ssh/known_hosts -o BatchMode=yes"},
		{"KEY=/etc/git-ssh/id", "KEY=/etc/git-ssh/id"},
		{"plain value", "plain value"},
	} {
		assert.Equal(t, tc.want, mapPath(mounts, tc.in), tc.in)
	}
}
