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

	fluxtar "github.com/fluxcd/pkg/tar"
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
	return Limits{MaxArchiveBytes: 256 << 20, MaxBytes: 1 << 30, MaxFiles: 100_000}
}

// link is a symlink or hard link held back until regular files are written.
type link struct {
	name   string // slash-separated, relative to the root
	target string // as in the archive
	hard   bool
}

// extractor carries the state of one extraction through fluxtar's filter.
type extractor struct {
	limits Limits
	files  int
	links  []link
	// refused is the first reason to refuse the archive; once set, reading
	// stops.
	refused error
}

// Extract unpacks the gzip'd tar archive r into dir, which must not exist
// yet or be empty. Unsafe or oversized archives return an error wrapping
// ErrRejected; dir may then hold a partial tree and should be discarded.
func Extract(r io.Reader, dir string, limits Limits) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	e := &extractor{limits: limits}
	// fluxtar cannot stop from its filter, so the reader fails as soon as the
	// filter has refused an entry.
	src := &stopReader{r: r, stop: func() error { return e.refused }}
	err := fluxtar.Untar(src, dir, fluxtar.WithMaxUntarSize(int(limits.MaxBytes)), fluxtar.WithFilter(e.filter))
	if e.refused != nil {
		return e.refused
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return e.createLinks(dir)
}

// filter sees every entry before fluxtar extracts it. It returns true to
// skip the entry: links are skipped and created later, and once the archive
// is refused everything is skipped.
func (e *extractor) filter(name string, fi os.FileInfo) bool {
	if e.refused != nil {
		return true
	}
	refuse := func(format string, args ...any) bool {
		e.refused = fmt.Errorf("%w: %s", ErrRejected, fmt.Sprintf(format, args...))
		return true
	}
	e.files++
	if e.limits.MaxFiles > 0 && e.files > e.limits.MaxFiles {
		return refuse("more than %d entries", e.limits.MaxFiles)
	}
	clean, err := cleanName(name)
	if err != nil {
		return refuse("%v", err)
	}
	hdr, _ := fi.Sys().(*tar.Header)
	if hdr == nil {
		return refuse("entry %q has no tar header", name)
	}
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeDir:
		return false
	case tar.TypeXGlobalHeader:
		// Metadata only (git archive writes the commit ID in one).
		return true
	case tar.TypeSymlink:
		e.links = append(e.links, link{name: clean, target: hdr.Linkname})
		return true
	case tar.TypeLink:
		e.links = append(e.links, link{name: clean, target: hdr.Linkname, hard: true})
		return true
	case tar.TypeChar, tar.TypeBlock:
		return refuse("entry %q is a device file", name)
	case tar.TypeFifo:
		return refuse("entry %q is a named pipe", name)
	default:
		return refuse("entry %q has unsupported type %q", name, string(hdr.Typeflag))
	}
}

// cleanName checks an entry name and returns it cleaned: relative, without
// any ".." element, NUL or backslash.
func cleanName(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "\\\x00") {
		return "", fmt.Errorf("entry name %q is invalid", name)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("entry %q has an absolute path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry %q leaves the root with '..'", name)
		}
	}
	return path.Clean(name), nil
}

// createLinks creates the held-back links, hard links first, and checks
// that each one resolves inside dir. Every directory and link is made
// through an os.Root on dir, so nothing is created outside it even when
// links already made would lead there.
func (e *extractor) createLinks(dir string) error {
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
		for _, l := range e.links {
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
	for _, l := range e.links {
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
		target, err := cleanName(l.target)
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

// stopReader reads from r until stop returns an error.
type stopReader struct {
	r    io.Reader
	stop func() error
}

func (s *stopReader) Read(p []byte) (int, error) {
	if err := s.stop(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}
