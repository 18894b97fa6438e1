package realnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a node whose test process was killed leaves on the host (its
// network namespace, mount namespace, cgroups and directory) is removed by
// the next Start's sweep.
func TestSweepRemovesWhatAKilledNodeLeft(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root (network and mount namespaces, cgroups); not under -short")
	}
	l, err := lock(os.TempDir())
	require.NoError(t, err)
	defer l.Close()

	ctx := context.Background()
	dir, err := os.MkdirTemp("", nodePrefix)
	require.NoError(t, err)
	id := filepath.Base(dir)
	ns, err := createNetns(ctx, id)
	require.NoError(t, err)
	_ = ns.fd.Close() // the process that held it is gone
	_, err = createMountns(ctx, filepath.Join(dir, "ns"), nil)
	require.NoError(t, err)
	cg, err := createCgroupRoot(id)
	require.NoError(t, err)
	// The node's process dies here without Stop.

	left := func() []string {
		var out []string
		for _, p := range append([]string{dir, filepath.Join(netnsDir, id)}, cg.dirs...) {
			if pathExists(p) {
				out = append(out, p)
			}
		}
		for _, m := range mountPoints() {
			if strings.HasPrefix(m, dir) {
				out = append(out, "mount "+m)
			}
		}
		return out
	}
	require.NotEmpty(t, left(), "the killed node left its namespaces, cgroups and directory")
	require.NoError(t, sweepStale(t.Logf))
	assert.Empty(t, left(), "the sweep removed everything the killed node left")
}

// A node whose directory and network namespace are gone but whose cgroups
// (and the processes in them) stayed is found by its cgroups.
func TestSweepFindsANodeByItsCgroups(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root (cgroups); not under -short")
	}
	l, err := lock(os.TempDir())
	require.NoError(t, err)
	defer l.Close()
	dir, err := os.MkdirTemp("", nodePrefix)
	require.NoError(t, err)
	id := filepath.Base(dir)
	require.NoError(t, os.Remove(dir))
	cg, err := createCgroupRoot(id)
	require.NoError(t, err)
	require.NotEmpty(t, cg.dirs)
	require.NoError(t, sweepStale(t.Logf))
	for _, d := range cg.dirs {
		assert.False(t, pathExists(d), "the sweep removed %s", d)
	}
}
