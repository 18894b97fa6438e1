package configtree

import (
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"
)

// maxLinkHops is how many symlinks one path may pass through, as Linux
// allows (ELOOP).
const maxLinkHops = 40

// unknownError says why what a Workspace reads cannot be known.
type unknownError struct{ why string }

func (e *unknownError) Error() string { return e.why }

func unknown(format string, a ...any) error {
	return &unknownError{why: fmt.Sprintf(format, a...)}
}

// resolve follows rel from the real directory base ("" is the root) as the
// kernel does: ".." is the parent of the real directory reached, and a
// symlink is replaced by its target, read from the link's directory. Every
// link passed is recorded in fx. It returns the real path, which need not
// exist; a path leaving the artifact, through too many links or through a
// name the runner refuses is unknown.
func (t *Tree) resolve(base, rel string, fx *facts) (string, error) {
	if path.IsAbs(rel) {
		return "", unknown("%s is outside the artifact", rel)
	}
	parts := strings.Split(rel, "/")
	cur, hops := base, 0
	for len(parts) > 0 {
		p := parts[0]
		parts = parts[1:]
		switch p {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return "", unknown("%s leaves the artifact", rel)
			}
			cur = parentOf(cur)
			continue
		}
		next := joinPath(cur, p)
		e := t.entries[next]
		switch {
		case e == nil || e.kind == kindFile || e.kind == kindDir:
			cur = next
		case e.kind == kindBroken:
			return "", unknown("the runner cannot extract %s", next)
		default:
			if hops++; hops > maxLinkHops {
				return "", unknown("%s passes through more than %d links", rel, maxLinkHops)
			}
			fx.add(next, "link:"+e.target)
			if e.target == "" || path.IsAbs(e.target) {
				return "", unknown("the link %s points outside the artifact", next)
			}
			parts = append(strings.Split(e.target, "/"), parts...)
		}
	}
	return cur, nil
}

// readPath records what reading the real path p gives: a file's content,
// or that it is a directory or absent.
func (t *Tree) readPath(p string, fx *facts) error {
	switch e := t.entries[p]; {
	case e == nil && t.isDir(p):
		fx.add(p, "dir")
	case e == nil:
		fx.add(p, "absent")
	case e.kind == kindFile:
		fx.add(p, fileFact(e))
	case e.kind == kindDir:
		fx.add(p, "dir")
	default:
		return unknown("the runner cannot extract %s", p)
	}
	return nil
}

// fileFact is what a regular file gives a reader: its content and its
// permission bits (a file the runner cannot read fails the plan).
func fileFact(e *entry) string {
	return fmt.Sprintf("file:%s:%o", hex.EncodeToString(e.sum[:]), e.mode)
}

// readTree records a file, or a directory's whole subtree with every link
// in it followed (visited holds the subtrees recorded), or an absence.
func (t *Tree) readTree(p string, fx *facts, visited map[string]bool) error {
	if !t.isDir(p) {
		return t.readPath(p, fx)
	}
	for d := p; ; d = parentOf(d) {
		if visited[d] {
			return nil
		}
		if d == "" {
			break
		}
	}
	visited[p] = true
	fx.add(p, "dir")
	for _, name := range t.subtree(p) {
		switch e := t.entries[name]; e.kind {
		case kindFile:
			fx.add(name, fileFact(e))
		case kindDir:
		case kindBroken:
			return unknown("the runner cannot extract %s", name)
		case kindSymlink:
			if e.target == "" {
				return unknown("the link %s has no target", name)
			}
			real, err := t.resolve(parentOf(name), e.target, fx)
			if err != nil {
				return err
			}
			fx.add(name, "link:"+e.target)
			if err := t.readTree(real, fx, visited); err != nil {
				return err
			}
		}
	}
	return nil
}

// subtree is every entry under directory p ("" is the root), sorted.
func (t *Tree) subtree(p string) []string {
	if p == "" {
		return t.names
	}
	prefix := p + "/"
	i := sort.SearchStrings(t.names, prefix)
	j := i
	for j < len(t.names) && strings.HasPrefix(t.names[j], prefix) {
		j++
	}
	return t.names[i:j]
}

// children is the entries directly in directory p.
func (t *Tree) children(p string) []string {
	var out []string
	for _, name := range t.subtree(p) {
		if parentOf(name) == p {
			out = append(out, name)
		}
	}
	return out
}

// isDir says whether p is a directory of the artifact.
func (t *Tree) isDir(p string) bool {
	if p == "" {
		return true
	}
	if e := t.entries[p]; e != nil {
		return e.kind == kindDir
	}
	return len(t.subtree(p)) > 0
}

// parentOf is p's directory ("" for the root and its children).
func parentOf(p string) string {
	d := path.Dir(p)
	if d == "." || d == "/" {
		return ""
	}
	return d
}

// joinPath joins a real directory ("" is the root) and a name.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// displayPath shows a real path ("" is the root).
func displayPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}
