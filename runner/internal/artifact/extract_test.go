package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entry is one tar entry of a test archive.
type entry struct {
	name     string
	typ      byte
	body     string
	linkname string
}

func file(name, body string) entry { return entry{name: name, typ: tar.TypeReg, body: body} }
func dir(name string) entry        { return entry{name: name, typ: tar.TypeDir} }
func symlink(name, target string) entry {
	return entry{name: name, typ: tar.TypeSymlink, linkname: target}
}
func hardlink(name, target string) entry {
	return entry{name: name, typ: tar.TypeLink, linkname: target}
}

// archive builds a gzip'd tar of entries.
func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.linkname, Mode: 0o644}
		switch e.typ {
		case tar.TypeXGlobalHeader:
			hdr = &tar.Header{Typeflag: e.typ, PAXRecords: map[string]string{"comment": "0123abcd"}}
		case tar.TypeReg:
			hdr.Size = int64(len(e.body))
		case tar.TypeDir:
			hdr.Mode = 0o755
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if e.typ == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func TestExtractKeepsSafeTrees(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	data := archive(t,
		entry{name: "pax_global_header", typ: tar.TypeXGlobalHeader},
		dir("infra/"),
		file("infra/main.tf", `resource "terraform_data" "a" {}`),
		file("./infra/modules/m/main.tf", "# module"),
		symlink("infra/shared", "modules/m"),
		symlink("infra/up.tf", "../top.tf"),
		file("top.tf", "# top"),
		hardlink("infra/copy.tf", "infra/main.tf"),
	)
	require.NoError(t, Extract(bytes.NewReader(data), root, DefaultLimits()))

	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		return string(b)
	}
	assert.Equal(t, `resource "terraform_data" "a" {}`, read("infra/main.tf"))
	assert.Equal(t, "# module", read("infra/shared/main.tf"))
	assert.Equal(t, "# top", read("infra/up.tf"))
	assert.Equal(t, `resource "terraform_data" "a" {}`, read("infra/copy.tf"))
	_, err := os.Stat(filepath.Join(root, "pax_global_header"))
	assert.True(t, os.IsNotExist(err), "the pax global header is metadata, not a file")

	got, err := ConfigDir(root, "infra")
	require.NoError(t, err)
	real, _ := filepath.EvalSymlinks(filepath.Join(root, "infra"))
	assert.Equal(t, real, got)
}

// A name listed twice keeps the later entry, as tar does, and a file larger
// than the copy buffer arrives whole.
func TestExtractWritesWhatTarWould(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	data := archive(t, dir("d/"), file("d/a.tf", "first"), file("d/a.tf", "second"), file("big.tf", strings.Repeat("x", 3*copyBufferSize+7)))
	require.NoError(t, Extract(bytes.NewReader(data), root, DefaultLimits()))

	b, err := os.ReadFile(filepath.Join(root, "d", "a.tf"))
	require.NoError(t, err)
	assert.Equal(t, "second", string(b), "a name listed twice keeps the later entry")
	fi, err := os.Stat(filepath.Join(root, "big.tf"))
	require.NoError(t, err)
	assert.EqualValues(t, 3*copyBufferSize+7, fi.Size(), "a file larger than the copy buffer is written whole")
}

func TestExtractRefuses(t *testing.T) {
	small := Limits{MaxArchiveBytes: 1 << 20, MaxBytes: 100, MaxFiles: 3}
	tests := []struct {
		name    string
		limits  Limits
		entries []entry
		wantErr string
	}{
		{name: "parent traversal", entries: []entry{file("../evil.tf", "x")}, wantErr: "leaves the root"},
		{name: "nested parent traversal", entries: []entry{file("a/../../evil.tf", "x")}, wantErr: "leaves the root"},
		{name: "trailing parent element", entries: []entry{dir("a/..")}, wantErr: "leaves the root"},
		{name: "absolute path", entries: []entry{file("/tmp/evil.tf", "x")}, wantErr: "absolute path"},
		{name: "backslash", entries: []entry{file(`..\evil.tf`, "x")}, wantErr: "is invalid"},
		{name: "symlink to a parent", entries: []entry{symlink("l", "../outside")}, wantErr: "points outside the artifact"},
		{name: "symlink to an absolute path", entries: []entry{symlink("l", "/etc/passwd")}, wantErr: "absolute path"},
		{
			name:    "symlink escaping through another symlink",
			entries: []entry{symlink("here", "."), symlink("q", "here/../secret.txt")},
			wantErr: "symlink \"q\" points outside the artifact",
		},
		{
			name:    "link inside a linked directory",
			entries: []entry{dir("sub/"), symlink("d", "sub"), symlink("d/x", "../../secret.txt")},
			wantErr: "inside a linked directory",
		},
		{name: "dangling symlink", entries: []entry{symlink("l", "missing.tf")}, wantErr: "dangling"},
		{name: "hard link to a parent", entries: []entry{hardlink("h", "../secret.txt")}, wantErr: "leaves the root"},
		{name: "hard link to an absolute path", entries: []entry{hardlink("h", "/etc/passwd")}, wantErr: "absolute path"},
		{name: "character device", entries: []entry{{name: "dev", typ: tar.TypeChar}}, wantErr: "device file"},
		{name: "block device", entries: []entry{{name: "dev", typ: tar.TypeBlock}}, wantErr: "device file"},
		{name: "named pipe", entries: []entry{{name: "fifo", typ: tar.TypeFifo}}, wantErr: "named pipe"},
		{name: "oversized content", limits: small, entries: []entry{file("a", string(make([]byte, 60))), file("b", string(make([]byte, 60)))}, wantErr: "more than 100 bytes of content"},
		{name: "file over a directory", entries: []entry{dir("d/"), file("d", "x")}, wantErr: `file "d"`},
		{name: "too many files", limits: small, entries: []entry{file("a", ""), file("b", ""), file("c", ""), file("d", "")}, wantErr: "more than 3 entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(base, "secret.txt"), []byte("outside"), 0o600))
			limits := tt.limits
			if limits == (Limits{}) {
				limits = DefaultLimits()
			}
			err := Extract(bytes.NewReader(archive(t, tt.entries...)), filepath.Join(base, "root"), limits)
			require.ErrorIs(t, err, ErrRejected)
			assert.ErrorContains(t, err, tt.wantErr)

			// Nothing was written next to the root.
			names, rerr := os.ReadDir(base)
			require.NoError(t, rerr)
			for _, n := range names {
				assert.Contains(t, []string{"root", "secret.txt"}, n.Name())
			}
		})
	}
}

func TestExtractRefusesGarbage(t *testing.T) {
	err := Extract(bytes.NewReader([]byte("not a gzip stream")), filepath.Join(t.TempDir(), "root"), DefaultLimits())
	require.ErrorIs(t, err, ErrRejected)
}

func TestConfigDirStaysInside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(root, "f.tf"), nil, 0o600))
	require.NoError(t, os.Symlink("..", filepath.Join(root, "up")))

	_, err := ConfigDir(root, "missing")
	assert.ErrorContains(t, err, "not in the artifact")
	_, err = ConfigDir(root, "f.tf")
	assert.ErrorContains(t, err, "not a directory")
	_, err = ConfigDir(root, "up")
	assert.ErrorContains(t, err, "leaves the artifact")
	_, err = ConfigDir(root, "a")
	assert.NoError(t, err)
}

// More directories than are kept open still extract whole.
func TestExtractManyDirectories(t *testing.T) {
	var entries []entry
	for i := range maxDirHandles + 50 {
		entries = append(entries, file(fmt.Sprintf("m%03d/main.tf", i), fmt.Sprint(i)))
	}
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, Extract(bytes.NewReader(archive(t, entries...)), root, DefaultLimits()))
	for i := range maxDirHandles + 50 {
		b, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("m%03d", i), "main.tf"))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i), string(b))
	}
}

// A tree the archive cannot make rejects it; a failure of the runner's own
// filesystem does not, so the run is retried rather than stalled.
func TestWriteErrorRejectsOnlyTheArchivesFaults(t *testing.T) {
	for errno, rejected := range map[syscall.Errno]bool{
		syscall.ENOTDIR: true, syscall.EISDIR: true, syscall.EEXIST: true, syscall.ENAMETOOLONG: true,
		syscall.ENOSPC: false, syscall.EMFILE: false, syscall.EIO: false, syscall.EDQUOT: false,
	} {
		err := writeError("file", "a/b.tf", &os.PathError{Op: "openat", Path: "b.tf", Err: errno})
		assert.Equal(t, rejected, errors.Is(err, ErrRejected), "%v", errno)
		assert.ErrorIs(t, err, errno)
		assert.ErrorContains(t, err, `"a/b.tf"`)
	}
}
