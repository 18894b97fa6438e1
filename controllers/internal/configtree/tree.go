package configtree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/magos-dev/magos/apis/artifactdigest"
)

// Tree is what digests need of an artifact: each entry's content digest or
// link target, and the bytes of its configuration files, parsed only when a
// Workspace reaches their directory. It mirrors how the runner extracts an
// artifact (runner/internal/artifact): later regular files win, links are
// made after every file, a hard link has its target's final content.
type Tree struct {
	entries map[string]*entry
	// names are the entries' names, sorted: a directory's subtree is a
	// range of them.
	names []string
	// config holds the source of each configuration file kept (within
	// Limits); a configuration file not kept makes its directory unknown.
	config map[string][]byte
	// templates holds the bytes of small files that may call a function
	// (mayCall), for a templatefile() of them to be parsed.
	templates map[string][]byte
	// rejected says why the runner refuses to extract the artifact at all
	// ("" when it extracts it): what any Workspace reads is then unknown.
	rejected string

	mu       sync.Mutex
	analyses map[string]*fileAnalysis // by real path (and syntax)
}

// entryKind is what a tar entry makes on disk.
type entryKind uint8

const (
	kindFile entryKind = iota
	kindDir
	kindSymlink
	// kindBroken is a name the runner refuses to make (a link whose name
	// is taken, a hard link to no regular file): whatever reads it is
	// unknown.
	kindBroken
)

type entry struct {
	kind entryKind
	sum  [sha256.Size]byte
	// target is a symlink's target as written in the archive, or a hard
	// link's target name until the link is resolved.
	target string
	hard   bool
	// mayCall says a regular file's bytes contain "file", "::" or
	// "templatestring": as a template (templatefile), it may call a
	// function that reads a path.
	mayCall bool
	// mode is a regular file's permission bits, as the runner extracts it.
	mode int64
}

// Limits bound what reading an artifact keeps and parses.
type Limits struct {
	// MaxEntries is the most tar entries read.
	MaxEntries int
	// MaxBytes is the most file content read.
	MaxBytes int64
	// MaxConfigFileBytes is the largest configuration file parsed; a larger
	// one makes its directory unknown.
	MaxConfigFileBytes int
	// MaxConfigBytes is the most configuration source kept in all.
	MaxConfigBytes int
	// MaxNameBytes is the most bytes of entry names and link targets kept
	// in all (a PAX header can make one name a megabyte long).
	MaxNameBytes int
}

// DefaultLimits are the runner's extraction bounds, and configuration
// sizes no hand-written configuration reaches.
func DefaultLimits() Limits {
	return Limits{
		MaxEntries:         artifactdigest.MaxFiles,
		MaxBytes:           artifactdigest.MaxUnpackedBytes,
		MaxConfigFileBytes: 512 << 10,
		MaxConfigBytes:     32 << 20,
		MaxNameBytes:       32 << 20,
	}
}

// ErrTooLarge means the artifact holds more than Limits allow.
var ErrTooLarge = errors.New("the artifact is larger than the controller reads")

// Read reads a gzipped tarball (a Flux artifact) into a Tree within
// DefaultLimits.
func Read(r io.Reader) (*Tree, error) { return ReadLimited(r, DefaultLimits()) }

// ReadLimited reads a gzipped tarball into a Tree within limits.
func ReadLimited(r io.Reader, limits Limits) (*Tree, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading the artifact: %w", err)
	}
	t := &Tree{entries: map[string]*entry{}, config: map[string][]byte{}, templates: map[string][]byte{}, analyses: map[string]*fileAnalysis{}}
	reject := func(format string, a ...any) {
		if t.rejected == "" {
			t.rejected = fmt.Sprintf(format, a...)
		}
	}
	tr := tar.NewReader(zr)
	var count, names int
	var total int64
	configBytes, templateBytes := 0, 0
	links := map[string]bool{} // names a link shares with another entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the artifact: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if count++; limits.MaxEntries > 0 && count > limits.MaxEntries {
			return nil, fmt.Errorf("%w: more than %d entries", ErrTooLarge, limits.MaxEntries)
		}
		if names += len(h.Name) + len(h.Linkname); limits.MaxNameBytes > 0 && names > limits.MaxNameBytes {
			return nil, fmt.Errorf("%w: more than %d bytes of names", ErrTooLarge, limits.MaxNameBytes)
		}
		name, ok := cleanName(h.Name)
		if !ok {
			if h.Typeflag != tar.TypeDir || path.Clean(h.Name) != "." {
				reject("entry %q has a name the runner refuses", h.Name)
			}
			continue
		}
		switch h.Typeflag {
		case tar.TypeReg:
			if total += h.Size; limits.MaxBytes > 0 && total > limits.MaxBytes {
				return nil, fmt.Errorf("%w: more than %d bytes of content", ErrTooLarge, limits.MaxBytes)
			}
			e, src, err := readEntry(name, tr, limits)
			if err != nil {
				return nil, err
			}
			e.mode = h.Mode & 0o777
			delete(t.templates, name)
			if !isConfigFile(name) && src != nil {
				if e.mayCall && templateBytes+len(src) <= maxTemplateBytes {
					t.templates[name] = src
					templateBytes += len(src)
				}
				src = nil
			}
			if old := t.entries[name]; old != nil && old.kind == kindSymlink {
				links[name] = true // the file is written; the link then cannot be
			}
			t.entries[name] = e
			delete(t.config, name)
			if src != nil && configBytes+len(src) <= limits.MaxConfigBytes {
				t.config[name] = src
				configBytes += len(src)
			}
		case tar.TypeDir:
			if old := t.entries[name]; old == nil {
				t.entries[name] = &entry{kind: kindDir}
			} else if old.kind == kindSymlink {
				links[name] = true
			}
		case tar.TypeSymlink, tar.TypeLink:
			if old := t.entries[name]; old != nil {
				links[name] = true // the runner cannot make the link over it
			}
			t.entries[name] = &entry{kind: kindSymlink, target: h.Linkname, hard: h.Typeflag == tar.TypeLink}
		default:
			t.entries[name] = &entry{kind: kindBroken}
			reject("entry %q has a type the runner refuses (%q)", h.Name, string(h.Typeflag))
		}
	}
	t.breakCollisions(links)
	t.resolveHardLinks()
	t.names = make([]string, 0, len(t.entries))
	for name := range t.entries {
		t.names = append(t.names, name)
	}
	slices.Sort(t.names)
	t.checkLinks(reject)
	return t, nil
}

// maxTemplateBytes is the most bytes of possible templates kept, and
// maxTemplateFileBytes the largest one.
const (
	maxTemplateBytes     = 8 << 20
	maxTemplateFileBytes = 256 << 10
)

// checkLinks rejects the artifact as the runner does when a name is
// broken, or a symlink is empty, absolute, dangling, loops or leaves the
// artifact.
func (t *Tree) checkLinks(reject func(string, ...any)) {
	for _, name := range t.names {
		e := t.entries[name]
		switch e.kind {
		case kindBroken:
			reject("the runner cannot make %s", name)
		case kindSymlink:
			if e.target == "" || strings.ContainsAny(e.target, "\\\x00") {
				reject("the link %s has an invalid target", name)
				continue
			}
			real, err := t.resolve(parentOf(name), e.target, &facts{m: map[string]string{}})
			if err != nil || (t.entries[real] == nil && !t.isDir(real)) {
				reject("the link %s is dangling, loops or leaves the artifact", name)
			}
		}
	}
}

// breakCollisions marks broken every name the runner cannot make: a link
// whose name another entry took, or whose name is a directory of another
// entry, or a name under a link.
func (t *Tree) breakCollisions(taken map[string]bool) {
	for name := range taken {
		t.entries[name] = &entry{kind: kindBroken}
		delete(t.config, name)
	}
	for name := range t.entries {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if d := t.entries[dir]; d != nil && d.kind == kindSymlink {
				t.entries[dir] = &entry{kind: kindBroken}
			}
		}
	}
}

// cleanName is the entry's name as the runner extracts it, or false for a
// name the runner refuses.
func cleanName(name string) (string, bool) {
	name, err := artifactdigest.CleanEntryName(name)
	return name, err == nil && name != "."
}

// readEntry digests a regular file; a configuration file's source is
// returned when it is within the per-file limit.
func readEntry(name string, r io.Reader, limits Limits) (*entry, []byte, error) {
	e := &entry{kind: kindFile}
	h := sha256.New()
	if isConfigFile(name) {
		src, err := io.ReadAll(io.LimitReader(r, int64(limits.MaxConfigFileBytes)+1))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", name, err)
		}
		h.Write(src)
		_, err = io.Copy(h, r)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", name, err)
		}
		e.sum = [sha256.Size]byte(h.Sum(nil))
		e.mayCall = true
		if len(src) > limits.MaxConfigFileBytes {
			src = nil
		}
		return e, src, nil
	}
	s := &callScanner{}
	small, err := io.ReadAll(io.LimitReader(r, maxTemplateFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	_, _ = io.MultiWriter(h, s).Write(small)
	if _, err := io.Copy(io.MultiWriter(h, s), r); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	e.sum = [sha256.Size]byte(h.Sum(nil))
	e.mayCall = s.found
	if len(small) > maxTemplateFileBytes {
		small = nil
	}
	return e, small, nil
}

// callScanner finds "file", "::" or "templatestring" in a stream, across
// write boundaries.
type callScanner struct {
	tail  []byte
	found bool
}

func (s *callScanner) Write(p []byte) (int, error) {
	if s.found {
		return len(p), nil
	}
	buf := append(s.tail, p...)
	if bytes.Contains(buf, []byte("file")) || bytes.Contains(buf, []byte("::")) || bytes.Contains(buf, []byte("templatestring")) {
		s.found = true
		return len(p), nil
	}
	s.tail = append(s.tail[:0], buf[max(0, len(buf)-len("templatestring")+1):]...)
	return len(p), nil
}

// resolveHardLinks gives each hard link its target's final content, as the
// runner links them after every regular file; a hard link to anything but
// a regular file is broken.
func (t *Tree) resolveHardLinks() {
	for name, e := range t.entries {
		if e.kind != kindSymlink || !e.hard {
			continue
		}
		target, ok := cleanName(e.target)
		if te := t.entries[target]; ok && te != nil && te.kind == kindFile {
			t.entries[name] = &entry{kind: kindFile, sum: te.sum, mayCall: te.mayCall, mode: te.mode}
			if src, kept := t.config[target]; kept && isConfigFile(name) {
				t.config[name] = src
			}
			if src, kept := t.templates[target]; kept {
				t.templates[name] = src
			}
			continue
		}
		t.entries[name] = &entry{kind: kindBroken}
	}
}

// isConfigFile says whether the engine reads name as configuration.
func isConfigFile(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json") ||
		strings.HasSuffix(name, ".tofu") || strings.HasSuffix(name, ".tofu.json")
}

// Dirs lists every directory of the artifact that holds an entry, at any
// depth, and their parents, sorted; the root is left out. It parses
// nothing.
func (t *Tree) Dirs() []string {
	seen := map[string]bool{}
	for name, e := range t.entries {
		if e.kind == kindDir {
			continue
		}
		for dir := path.Dir(name); dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
