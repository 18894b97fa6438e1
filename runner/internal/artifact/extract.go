package artifact

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/magos-dev/magos/apis/artifactdigest"
)

// ErrRejected means the artifact is unsafe or too large to extract.
var ErrRejected = errors.New("artifact rejected")

// Limits bound what an artifact may unpack to.
type Limits struct {
	// MaxArchiveBytes is the largest compressed artifact accepted.
	MaxArchiveBytes int64
	// MaxBytes is the most file content extracted in total.
	MaxBytes int64
	// MaxFiles is the most entries (files, directories, links) accepted.
	MaxFiles int
}

// DefaultLimits are generous for Terraform configurations and still keep a
// hostile archive from filling the runner's scratch volume.
func DefaultLimits() Limits {
	return Limits{MaxArchiveBytes: artifactdigest.MaxArtifactBytes, MaxBytes: artifactdigest.MaxUnpackedBytes, MaxFiles: artifactdigest.MaxFiles}
}

// link is a symlink or hard link held back until regular files are written.
type link struct {
	name   string // slash-separated, relative to the root
	target string // as in the archive
	hard   bool
}

// Extract unpacks the gzip'd tar archive r into dir, which must not exist
// yet or be empty. Unsafe or oversized archives return an error wrapping
// ErrRejected; dir may then hold a partial tree and should be discarded.
//
// Every file and directory is made through an os.Root on dir, and links are
// created only after the last regular file, so nothing is ever written
// outside dir or through a link.
func Extract(r io.Reader, dir string, limits Limits) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	fsys, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer fsys.Close()
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: not a gzip stream: %w", ErrRejected, err)
	}
	x := &extraction{fsys: fsys, limits: limits, buf: make([]byte, copyBufferSize), dirs: map[string]*os.Root{}, written: map[string]bool{}}
	defer x.close()
	x.writers = startWriters(x)
	err = x.entries(tar.NewReader(zr))
	if werr := x.writers.stop(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return x.createLinks(dir)
}

// entries extracts every entry of tr, stopping at the first error of its
// own or of a writer.
func (x *extraction) entries(tr *tar.Reader) error {
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: reading the archive: %w", ErrRejected, err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
		if err := x.writers.failed(); err != nil {
			return err
		}
	}
}

// copyBufferSize is the chunk files are written in: most configuration
// files fit in one write.
const copyBufferSize = 256 << 10

// extraction is the state of one Extract.
type extraction struct {
	fsys    *os.Root
	limits  Limits
	writers *writers
	// buf is the reading goroutine's buffer for files too large to queue.
	buf   []byte
	count int
	bytes int64
	// written holds the regular files extracted so far: a name listed
	// twice waits for the first write, so the later entry wins, as in tar.
	written map[string]bool
	links   []link

	mu   sync.Mutex // guards dirs
	dirs map[string]*os.Root
}

// entry checks one tar entry and extracts it: directories and regular
// files at once, links after the last entry; anything else refuses the
// archive.
func (x *extraction) entry(hdr *tar.Header, r io.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		// Metadata only (git archive writes the commit ID in one).
		return nil
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrRejected, fmt.Sprintf(format, args...))
	}
	x.count++
	if x.limits.MaxFiles > 0 && x.count > x.limits.MaxFiles {
		return refuse("more than %d entries", x.limits.MaxFiles)
	}
	name, err := artifactdigest.CleanEntryName(hdr.Name)
	if err != nil {
		return refuse("%v", err)
	}
	perm := hdr.FileInfo().Mode().Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if name == "." {
			return nil
		}
		// The owner can always traverse and write what it extracted, so
		// the tree can be removed whatever the archive says.
		if err := x.fsys.MkdirAll(name, perm|0o700); err != nil {
			return writeError("directory", name, err)
		}
		return nil
	case tar.TypeReg:
		x.bytes += hdr.Size
		if x.limits.MaxBytes > 0 && x.bytes > x.limits.MaxBytes {
			return refuse("more than %d bytes of content", x.limits.MaxBytes)
		}
		if x.written[name] {
			if err := x.writers.wait(); err != nil {
				return err
			}
		}
		x.written[name] = true
		if hdr.Size <= smallFile {
			return x.writers.queue(name, perm, hdr.Size, r)
		}
		return x.writeFile(name, perm, hdr.Size, r)
	case tar.TypeSymlink:
		x.links = append(x.links, link{name: name, target: hdr.Linkname})
		return nil
	case tar.TypeLink:
		x.links = append(x.links, link{name: name, target: hdr.Linkname, hard: true})
		return nil
	case tar.TypeChar, tar.TypeBlock:
		return refuse("entry %q is a device file", hdr.Name)
	case tar.TypeFifo:
		return refuse("entry %q is a named pipe", hdr.Name)
	default:
		return refuse("entry %q has unsupported type %q", hdr.Name, string(hdr.Typeflag))
	}
}

// writeFile writes one regular file of size bytes from r as it reads it.
func (x *extraction) writeFile(name string, perm os.FileMode, size int64, r io.Reader) error {
	f, err := x.create(name, perm)
	if err != nil {
		return err
	}
	n, err := copyBuffer(f, r, x.buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return writeError("writing", name, err)
	}
	if n != size {
		return fmt.Errorf("%w: %q is %d bytes, its header says %d", ErrRejected, name, n, size)
	}
	return nil
}

// maxDirHandles bounds the directories kept open by parent.
const maxDirHandles = 256

// parent makes the directory of the file name and returns where to create
// it: the directory as an os.Root of its own, so the file costs one openat
// instead of one per path element, and the file's base name. Past
// maxDirHandles open directories it returns the tree's root and the whole
// name. The handles stay open until Extract returns.
func (x *extraction) parent(name string) (*os.Root, string, error) {
	dir, base := path.Dir(name), path.Base(name)
	x.mu.Lock()
	defer x.mu.Unlock()
	if d, ok := x.dirs[dir]; ok {
		return d, base, nil
	}
	if err := x.fsys.MkdirAll(dir, 0o750); err != nil {
		return nil, "", err
	}
	if len(x.dirs) >= maxDirHandles {
		return x.fsys, name, nil
	}
	d, err := x.fsys.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	x.dirs[dir] = d
	return d, base, nil
}

// close releases the directory handles.
func (x *extraction) close() {
	for _, d := range x.dirs {
		_ = d.Close()
	}
}

// copyBuffer copies r to w in chunks of buf.
func copyBuffer(w io.Writer, r io.Reader, buf []byte) (int64, error) {
	var n int64
	for {
		nr, rerr := io.ReadFull(r, buf)
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
		}
		switch {
		case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
			return n, nil
		case rerr != nil:
			return n, rerr
		}
	}
}

// createLinks creates the held-back links, hard links first, and checks
// that each one resolves inside dir. Every directory and link is made
// through an os.Root on dir, so nothing is created outside it even when
// links already made would lead there.
func (x *extraction) createLinks(dir string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	fsys, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer fsys.Close()
	for _, hard := range []bool{true, false} {
		for _, l := range x.links {
			if l.hard != hard {
				continue
			}
			if err := createLink(fsys, root, l); err != nil {
				return fmt.Errorf("%w: %w", ErrRejected, err)
			}
		}
	}
	// Every symlink now exists, so each can be resolved completely; a link
	// through other links that ends outside the root is refused here.
	for _, l := range x.links {
		if l.hard {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(l.name)))
		if err != nil {
			return fmt.Errorf("%w: symlink %q is dangling or loops", ErrRejected, l.name)
		}
		if !within(root, real) {
			return fmt.Errorf("%w: symlink %q points outside the artifact", ErrRejected, l.name)
		}
	}
	return nil
}

// createLink creates one link after checking that its parent directory is a
// real directory inside root (not reached through another link) and that its
// target, taken literally, stays inside root. fsys is root opened as an
// os.Root: making the parent directories through it fails instead of
// following a chain of links that ends above root (l0 → ".", l1 → "l0/..",
// …, each harmless taken literally).
func createLink(fsys *os.Root, root string, l link) error {
	abs := filepath.Join(root, filepath.FromSlash(l.name))
	parent := filepath.Dir(abs)
	if err := fsys.MkdirAll(path.Dir(l.name), 0o750); err != nil {
		return fmt.Errorf("link %q: %w", l.name, err)
	}
	if real, err := filepath.EvalSymlinks(parent); err != nil || real != parent {
		return fmt.Errorf("link %q is inside a linked directory", l.name)
	}
	if l.target == "" || strings.ContainsAny(l.target, "\\\x00") {
		return fmt.Errorf("link %q has an invalid target", l.name)
	}
	if l.hard {
		// A hard link's target is a name from the archive, relative to the root.
		target, err := artifactdigest.CleanEntryName(l.target)
		if err != nil {
			return fmt.Errorf("hard link %q: %w", l.name, err)
		}
		src := filepath.Join(root, filepath.FromSlash(target))
		if real, err := filepath.EvalSymlinks(filepath.Dir(src)); err != nil || real != filepath.Dir(src) {
			return fmt.Errorf("hard link %q points through a link", l.name)
		}
		fi, err := fsys.Lstat(target)
		if err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("hard link %q does not point at a regular file of the artifact", l.name)
		}
		return fsys.Link(target, l.name)
	}
	if path.IsAbs(l.target) {
		return fmt.Errorf("symlink %q points at an absolute path", l.name)
	}
	if !within(root, filepath.Join(parent, filepath.FromSlash(l.target))) {
		return fmt.Errorf("symlink %q points outside the artifact", l.name)
	}
	return fsys.Symlink(l.target, l.name)
}

// within reports whether p is root or inside it; both must be clean.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
