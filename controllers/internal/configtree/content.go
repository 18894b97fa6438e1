package configtree

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Content is what a Workspace reads in an artifact.
type Content struct {
	// Digest covers every byte the Workspace's plan can depend on; ""
	// when that cannot be known.
	Digest string
	// Read lists the module directories and the other paths read, the
	// Workspace's path first.
	Read []string
	// Unknown says why Digest is "".
	Unknown string
	// Refused is set when a configuration file the Workspace reads is
	// beyond what the controller parses (Digest is then "").
	Refused *RefusedError
}

// Options are what a Workspace declares about what it reads.
type Options struct {
	// TriggerPaths are globs, relative to the artifact's root, of files
	// the plan depends on that no analysis sees ("**" matches any number
	// of directories).
	TriggerPaths []string
	// Disabled makes Content unknown: every revision is planned.
	Disabled bool
}

// maxModules is the most local module calls followed for one Workspace.
const maxModules = 1000

// module is a local module reached: its path as the engine names it
// (relative to the root module's directory, cleaned) and its real
// directory in the artifact.
type module struct{ lexical, real string }

// Content is what a Workspace at dir reads: every file under dir and
// under each local module it calls, transitively, every path its
// configuration reads (path-reading functions, provider attributes naming
// files) and every link on the way, resolved as the runner's file system
// and the engine resolve them, and the files opts.TriggerPaths match.
// Whatever cannot be followed exactly makes it unknown (docs/flux.md).
func (t *Tree) Content(dir string, opts Options) Content {
	if opts.Disabled {
		return Content{Unknown: "spec.contentSkip is Disabled"}
	}
	c := &contentWalk{tree: t, fx: &facts{m: map[string]string{}}, visited: map[string]bool{}}
	err := c.walk(dir, opts.TriggerPaths)
	var refused *RefusedError
	var unk *unknownError
	switch {
	case errors.As(err, &refused):
		return Content{Refused: refused, Read: c.read, Unknown: refused.Error()}
	case errors.As(err, &unk):
		return Content{Unknown: unk.why, Read: c.read}
	case err != nil:
		return Content{Unknown: err.Error(), Read: c.read}
	}
	return Content{Digest: c.fx.digest(), Read: c.read}
}

// contentWalk is one Content computation.
type contentWalk struct {
	tree    *Tree
	fx      *facts
	visited map[string]bool // subtrees recorded
	read    []string
	cwd     string // the root module's real directory
}

func (c *contentWalk) note(p string) {
	if p = displayPath(p); !slices.Contains(c.read, p) {
		c.read = append(c.read, p)
	}
}

func (c *contentWalk) walk(dir string, triggers []string) error {
	t := c.tree
	rel := path.Clean(strings.TrimPrefix(dir, "./"))
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return unknown("path %s leaves the artifact", dir)
	}
	if rel == "." {
		rel = ""
	}
	cwd, err := t.resolve("", rel, c.fx)
	if err != nil {
		return err
	}
	if !t.isDir(cwd) {
		return unknown("path %s is not a directory of the artifact", displayPath(rel))
	}
	c.cwd = cwd
	queue := []module{{lexical: ".", real: cwd}}
	seen := map[string]bool{".": true}
	for i := 0; i < len(queue); i++ {
		if i >= maxModules {
			return unknown("it calls more than %d local modules", maxModules)
		}
		calls, err := c.module(queue[i])
		if err != nil {
			return err
		}
		for _, m := range calls {
			if !seen[m.lexical] {
				seen[m.lexical] = true
				queue = append(queue, m)
			}
		}
	}
	for _, glob := range triggers {
		for _, name := range t.names {
			if matchGlob(glob, name) {
				if err := c.trigger(name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// module records everything one module reads and returns the local
// modules it calls.
func (c *contentWalk) module(m module) ([]module, error) {
	t := c.tree
	c.note(m.real)
	if err := t.readTree(m.real, c.fx, c.visited); err != nil {
		return nil, err
	}
	var calls []module
	for _, name := range t.children(m.real) {
		if !isConfigFile(name) {
			continue
		}
		real, err := t.resolve(m.real, path.Base(name), c.fx)
		if err != nil {
			return nil, err
		}
		a, err := t.analysis(real, strings.HasSuffix(name, ".json"))
		if err != nil {
			return nil, err
		}
		for _, call := range a.calls {
			class, local := classifySource(call.source, call.version)
			switch class {
			case sourceUnpinned:
				return nil, unknown("%s: module %q has source %q, whose content can change while it stays the same (pin a version or a commit)", name, call.name, call.source)
			case sourceLocal:
				lexical := path.Clean(path.Join(m.lexical, local))
				real, err := t.resolve(c.cwd, lexical, c.fx)
				if err != nil {
					return nil, fmt.Errorf("%s: module %q: %w", name, call.name, err)
				}
				calls = append(calls, module{lexical: lexical, real: real})
			}
		}
		for _, r := range a.reads {
			if err := c.pathRead(m, r); err != nil {
				return nil, err
			}
		}
	}
	return calls, nil
}

// pathRead records what one path read gives.
func (c *contentWalk) pathRead(m module, r pathRead) error {
	t := c.tree
	p := r.render(m.lexical)
	if p == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return unknown("%s reads %q, outside the artifact's relative paths", r.what, p)
	}
	real, err := t.resolve(c.cwd, path.Clean(p), c.fx)
	if err != nil {
		return fmt.Errorf("%s: %w", r.what, err)
	}
	c.note(real)
	switch r.kind {
	case readTree:
		return t.readTree(real, c.fx, c.visited)
	case readTemplate:
		if e := t.entries[real]; e != nil && e.kind == kindFile && e.mayCall {
			return unknown("%s: the template %s may call a function that reads a path", r.what, displayPath(real))
		}
	}
	return t.readPath(real, c.fx)
}

// trigger records a file a trigger path matches.
func (c *contentWalk) trigger(name string) error {
	e := c.tree.entries[name]
	switch e.kind {
	case kindDir:
		return nil
	case kindSymlink:
		c.fx.add(name, "link:"+e.target)
		return nil
	}
	return c.tree.readPath(name, c.fx)
}

// parseMu serialises parsing: each parse lexes a whole file first, and
// one at a time bounds the memory that takes.
var parseMu sync.Mutex

// analysis analyses the configuration file at real path p once per Tree.
func (t *Tree) analysis(p string, json bool) (*fileAnalysis, error) {
	key := p
	if json {
		key += "\x00json"
	}
	t.mu.Lock()
	a, ok := t.analyses[key]
	t.mu.Unlock()
	if !ok {
		e := t.entries[p]
		src, kept := t.config[p]
		switch {
		case e == nil || e.kind != kindFile:
			return nil, unknown("the configuration file %s is not a regular file of the artifact", displayPath(p))
		case !kept:
			return nil, unknown("the configuration file %s is larger than the controller parses", p)
		}
		parseMu.Lock()
		if json {
			a = analyzeJSON(p, src)
		} else {
			a = analyzeNative(p, src)
		}
		parseMu.Unlock()
		t.mu.Lock()
		t.analyses[key] = a
		t.mu.Unlock()
	}
	switch {
	case a.refused != nil:
		return nil, a.refused
	case a.unknown != "":
		return nil, unknown("%s", a.unknown)
	}
	return a, nil
}

// facts are what a Workspace read, path → what was found there.
type facts struct{ m map[string]string }

func (f *facts) add(p, what string) { f.m[displayPath(p)] = what }

func (f *facts) digest() string {
	keys := make([]string, 0, len(f.m))
	for k := range f.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\n", k, f.m[k])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// matchGlob matches a slash path against a glob whose "**" element
// matches any number of directories and whose other elements are
// path.Match patterns.
func matchGlob(glob, name string) bool {
	return matchParts(strings.Split(path.Clean(strings.TrimPrefix(glob, "/")), "/"), strings.Split(name, "/"))
}

func matchParts(glob, name []string) bool {
	// ok[j] says whether the glob elements seen so far match name[:j].
	ok := make([]bool, len(name)+1)
	ok[0] = true
	for _, g := range glob {
		next := make([]bool, len(name)+1)
		for j := range next {
			switch {
			case g == "**":
				next[j] = ok[j] || (j > 0 && next[j-1])
			case j > 0 && ok[j-1]:
				next[j], _ = path.Match(g, name[j-1])
			}
		}
		ok = next
	}
	return ok[len(name)]
}
