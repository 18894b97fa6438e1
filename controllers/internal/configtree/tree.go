package configtree

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// Tree is what digests need of an artifact: each file's content digest and
// each directory's local module calls. It holds no file contents.
type Tree struct {
	// files maps a cleaned slash path to its content's SHA-256 (of the
	// link target for a symlink).
	files map[string][sha256.Size]byte
	// calls maps a directory to the directories its configuration files
	// call as local modules, cleaned, relative to the root.
	calls map[string][]string
	// unreadable are directories whose configuration could not be parsed:
	// their calls are unknown.
	unreadable map[string]bool
}

// Read reads a gzipped tarball (a Flux artifact) into a Tree.
func Read(r io.Reader) (*Tree, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading the artifact: %w", err)
	}
	t := &Tree{files: map[string][sha256.Size]byte{}, calls: map[string][]string{}, unreadable: map[string]bool{}}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the artifact: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
			continue // the runner refuses such an artifact before it plans
		}
		switch h.Typeflag {
		case tar.TypeSymlink:
			t.files[name] = sha256.Sum256([]byte("symlink:" + h.Linkname))
		case tar.TypeReg:
			if err := t.addFile(name, tr); err != nil {
				return nil, err
			}
		}
	}
}

// addFile records the file's digest and, for a configuration file, its
// module calls.
func (t *Tree) addFile(name string, r io.Reader) error {
	if !isConfigFile(name) {
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		t.files[name] = [sha256.Size]byte(h.Sum(nil))
		return nil
	}
	src, err := io.ReadAll(io.LimitReader(r, maxConfigFileBytes+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	t.files[name] = sha256.Sum256(src)
	dir := path.Dir(name)
	sources, err := moduleSources(name, src)
	if err != nil || len(src) > maxConfigFileBytes {
		t.unreadable[dir] = true
		return nil
	}
	for _, s := range sources {
		if called, ok := localModule(dir, s); ok && !slices.Contains(t.calls[dir], called) {
			t.calls[dir] = append(t.calls[dir], called)
		}
	}
	return nil
}

// maxConfigFileBytes is the largest configuration file whose module calls
// are read; a larger one makes its directory's calls unknown.
const maxConfigFileBytes = 4 << 20

// isConfigFile says whether the engine reads name as configuration.
func isConfigFile(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json") ||
		strings.HasSuffix(name, ".tofu") || strings.HasSuffix(name, ".tofu.json")
}

// localModule resolves a module source relative to dir when it is a local
// path ("./x", "../x"); a path leaving the artifact is not one it holds.
func localModule(dir, source string) (string, bool) {
	if !strings.HasPrefix(source, "./") && !strings.HasPrefix(source, "../") {
		return "", false
	}
	p := path.Join(dir, source)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// Digest is the digest of what a Workspace at dir reads: every file under
// dir and under each local module it calls, transitively. It returns ""
// when that cannot be known (a configuration that does not parse), and the
// directories read, dir first.
func (t *Tree) Digest(dir string) (digest string, dirs []string) {
	dir = path.Clean(strings.TrimPrefix(dir, "./"))
	dirs = []string{dir}
	for i := 0; i < len(dirs); i++ {
		if t.unreadable[dirs[i]] {
			return "", dirs
		}
		for _, c := range t.calls[dirs[i]] {
			if !slices.Contains(dirs, c) {
				dirs = append(dirs, c)
			}
		}
	}
	var names []string
	for name := range t.files {
		if slices.ContainsFunc(dirs, func(d string) bool { return under(name, d) }) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		sum := t.files[name]
		fmt.Fprintf(h, "%s\x00%s\n", name, hex.EncodeToString(sum[:]))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), dirs
}

// under says whether name lies in directory dir's subtree.
func under(name, dir string) bool {
	return dir == "." || strings.HasPrefix(name, dir+"/")
}

// Dirs lists every directory of the artifact that holds a file, at any
// depth, and their parents, sorted; the root is left out.
func (t *Tree) Dirs() []string {
	seen := map[string]bool{}
	for name := range t.files {
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
