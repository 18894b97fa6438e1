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

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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
	if t.rejected != "" {
		return unknown("the runner refuses the artifact: %s", t.rejected)
	}
	if e := t.entries[joinPath(cwd, ".terraform/modules/modules.json")]; e != nil {
		return unknown("%s holds a module manifest, which the engine may follow instead of the configuration", joinPath(cwd, ".terraform"))
	}
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
		if !isConfigFile(name) || ignoredFile(path.Base(name)) {
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
				real, err := t.resolve(c.cwd, path.Clean(path.Join(m.lexical, local)), c.fx)
				if err != nil {
					return nil, fmt.Errorf("%s: module %q: %w", name, call.name, err)
				}
				// The engine resolves a module directory's links
				// (filepath.EvalSymlinks): its path.module, and the paths
				// of the modules it calls, start from the real directory.
				calls = append(calls, module{lexical: relPath(c.cwd, real), real: real})
			case sourcePinned:
				if call.pathArgs != "" {
					return nil, unknown("%s: module %q has the remote source %q and passes it %s, a path it may read", name, call.name, call.source, call.pathArgs)
				}
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
	if r.kind == readFileset {
		// The engine joins the pattern to the path and cleans it: read
		// everything under the pattern's part before its first
		// wildcard, which may leave the path.
		pattern := r.pattern
		if i := strings.IndexAny(pattern, "*?[{\\"); i >= 0 {
			pattern = pattern[:i]
		}
		p = path.Join(p, path.Dir(pattern+"x"))
	}
	if p == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") || path.IsAbs(r.pattern) {
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
			if err := t.checkTemplate(real); err != nil {
				return fmt.Errorf("%s: %w", r.what, err)
			}
		}
	case readFileset:
		return t.readTree(real, c.fx, c.visited)
	}
	return t.readPath(real, c.fx)
}

// relPath is the slash path from directory from to to (both real, ""
// the root), "." when they are the same.
func relPath(from, to string) string {
	split := func(p string) []string {
		if p == "" {
			return nil
		}
		return strings.Split(p, "/")
	}
	f, g := split(from), split(to)
	i := 0
	for i < len(f) && i < len(g) && f[i] == g[i] {
		i++
	}
	parts := make([]string, 0, len(f)-i+len(g)-i)
	for range f[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, g[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// ignoredFile says whether the engine skips a configuration file by its
// name (OpenTofu's configs.IsIgnoredFile: hidden files, editor backups).
func ignoredFile(base string) bool {
	return strings.HasPrefix(base, ".") || strings.HasSuffix(base, "~") ||
		strings.HasPrefix(base, "#") && strings.HasSuffix(base, "#")
}

// checkTemplate parses a template a configuration evaluates (templatefile)
// and says whether it may read a path: any call of a path-reading
// function, templatefile, templatestring or a provider function.
func (t *Tree) checkTemplate(p string) error {
	src, kept := t.templates[p]
	if !kept {
		return unknown("the template %s may call a function that reads a path", displayPath(p))
	}
	parseMu.Lock()
	defer parseMu.Unlock()
	if err := checkBounds(p, src, true); err != nil {
		return err
	}
	expr, diags := hclsyntax.ParseTemplate(src, p, hcl.InitialPos)
	if diags.HasErrors() {
		return unknown("the template %s does not parse", displayPath(p))
	}
	var reads error
	_ = hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || reads != nil {
			return nil
		}
		name := strings.TrimPrefix(call.Name, "core::")
		if _, path := pathFunctions[name]; path || name == "templatestring" || strings.Contains(name, "::") {
			reads = unknown("the template %s calls %s(), which may read a path", displayPath(p), name)
		}
		return nil
	})
	return reads
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
		// Length-prefixed: a name or link target holding a newline cannot
		// shift bytes from one fact to the next.
		v := f.m[k]
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(v), v)
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
