package oci

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Entry is one file or directory of a layer.
type Entry struct {
	// Path is absolute inside the image, e.g. /etc/passwd.
	Path string
	// Dir makes the entry a directory; Data is then ignored.
	Dir bool
	// Mode is the permission bits (e.g. 0o755); directories default to 0o755, files to 0o644.
	Mode int64
	// UID and GID own the entry (0 = root).
	UID, GID int
	Data     []byte
}

// newLayer returns a gzip'd OCI layer holding entries, every one with the
// modification time mtime and sorted by path, so the same entries always
// give the same digest. Parent directories that entries do not list are
// added as root-owned 0755 directories.
func newLayer(entries []Entry, mtime time.Time) (v1.Layer, error) {
	all := map[string]Entry{}
	for _, e := range entries {
		p := path.Clean(e.Path)
		if !path.IsAbs(p) || p == "/" {
			return nil, fmt.Errorf("layer entry %q: the path must be absolute and below /", e.Path)
		}
		if _, dup := all[p]; dup {
			return nil, fmt.Errorf("layer entry %q: listed twice", e.Path)
		}
		e.Path = p
		all[p] = e
	}
	for p := range all {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = Entry{Path: d, Dir: true}
			}
		}
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := all[p]
		h := &tar.Header{
			Name:    strings.TrimPrefix(p, "/"),
			Uid:     e.UID,
			Gid:     e.GID,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		switch {
		case e.Dir:
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", orDefault(e.Mode, 0o755)
		default:
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, orDefault(e.Mode, 0o644), int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", p, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

func orDefault(mode, def int64) int64 {
	if mode == 0 {
		return def
	}
	return mode
}
