package configtree

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// fileAnalysis is what one configuration file reads, before paths are
// resolved: its module calls, the paths its functions and attributes
// read, and why what it reads cannot be known, if so.
type fileAnalysis struct {
	calls   []moduleCall
	reads   []pathRead
	unknown string
	refused *RefusedError
}

// moduleCall is a module block's literal source and version.
type moduleCall struct {
	name, source, version string
	// pathArgs names an argument that passes the module a path (a
	// reference to path.*, or a literal "./…" or "../…"), "" if none.
	pathArgs string
}

// readKind is how a path is read.
type readKind uint8

const (
	// readFile reads one file (file, filebase64, filesha256, fileexists…).
	readFile readKind = iota
	// readTemplate reads a template that is itself evaluated
	// (templatefile).
	readTemplate
	// readTree reads a file or everything under a directory (a provider
	// attribute naming a file or directory).
	readTree
	// readFileset reads the files a pattern matches under a path
	// (fileset).
	readFileset
)

// pathRead is a path a configuration reads: literals and references to
// path.module and path.root, as written.
type pathRead struct {
	kind  readKind
	parts []pathPart
	// pattern is fileset's literal pattern.
	pattern string
	what    string // for messages: "file()", "local_file.x filename"
}

// pathPart is a literal, or "module"/"root" for path.module/path.root.
type pathPart struct{ lit, ref string }

// render is the path with path.module = module and path.root = ".", as
// the engine passes it to the file system (relative to the root module's
// directory).
func (r pathRead) render(module string) string {
	var b strings.Builder
	for _, p := range r.parts {
		switch p.ref {
		case "module":
			b.WriteString(module)
		case "root":
			b.WriteString(".")
		default:
			b.WriteString(p.lit)
		}
	}
	return b.String()
}

// Functions of the engine that read a path given as their first argument
// (OpenTofu's lang/functions.go; core:: names are the same functions).
var pathFunctions = map[string]readKind{
	"file": readFile, "filebase64": readFile, "fileexists": readFile,
	"filemd5": readFile, "filesha1": readFile, "filesha256": readFile, "filesha512": readFile,
	"filebase64sha256": readFile, "filebase64sha512": readFile,
	"templatefile": readTemplate,
	"fileset":      readFileset,
}

// unfollowableFunctions read what no analysis of the source can see.
var unfollowableFunctions = map[string]string{
	"templatestring": "evaluates a template held in a value, which may read any path",
}

// Resource and data source types of providers that read local files or
// run local programs: a configuration using one reads what the controller
// cannot follow.
var fileProviders = []string{"local_", "archive_", "external", "template_"}

// pathAttribute says whether an attribute of a resource, data source or
// provider names a local file or directory the provider reads.
func pathAttribute(name string) bool {
	switch name {
	case "filename", "file", "source", "source_file", "source_dir", "working_dir", "program", "config_path", "config_paths",
		"chart", "context", "playbook":
		return true
	}
	return strings.HasSuffix(name, "_file") || strings.HasSuffix(name, "_filename") || strings.HasSuffix(name, "_dir")
}

func (a *fileAnalysis) markUnknown(format string, args ...any) {
	if a.unknown == "" {
		a.unknown = fmt.Sprintf(format, args...)
	}
}

// analyzeNative analyses a configuration file in native syntax.
func analyzeNative(name string, src []byte) *fileAnalysis {
	if err := checkBounds(name, src, false); err != nil {
		return &fileAnalysis{refused: err.(*RefusedError)}
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return &fileAnalysis{unknown: name + " does not parse"}
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return &fileAnalysis{unknown: name + " does not parse"}
	}
	a := &fileAnalysis{}
	for _, b := range body.Blocks {
		a.block(name, b)
	}
	a.visit(name, body)
	return a
}

// visit records the function calls under node, and that a for expression
// binding "path" hides path.module and path.root.
func (a *fileAnalysis) visit(file string, node hclsyntax.Node) {
	_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch e := n.(type) {
		case *hclsyntax.FunctionCallExpr:
			a.call(file, e.Name, e.Args)
		case *hclsyntax.ForExpr:
			if e.KeyVar == "path" || e.ValVar == "path" {
				a.markUnknown("%s: a for expression names its variable path, which hides path.module and path.root", file)
			}
		}
		return nil
	})
}

// block records a top-level block's module call, or the files a
// resource, data source or provider names.
func (a *fileAnalysis) block(file string, b *hclsyntax.Block) {
	switch b.Type {
	case "module":
		call := moduleCall{name: strings.Join(b.Labels, ".")}
		src, ok := b.Body.Attributes["source"]
		if !ok {
			a.markUnknown("%s: module %q has no source (an override file may change its version)", file, call.name)
			return
		}
		for argName, arg := range b.Body.Attributes {
			if !moduleMetaArgument[argName] && passesPath(arg.Expr) {
				call.pathArgs = "argument " + argName
			}
		}
		if call.source, ok = staticString(src.Expr); !ok {
			a.markUnknown("%s: the source of module %q is not a literal string", file, call.name)
			return
		}
		if v, has := b.Body.Attributes["version"]; has {
			if call.version, ok = staticString(v.Expr); !ok {
				a.markUnknown("%s: the version of module %q is not a literal string", file, call.name)
				return
			}
		}
		a.calls = append(a.calls, call)
	case "resource", "data", "ephemeral":
		if len(b.Labels) == 0 {
			return
		}
		what := strings.Join(b.Labels, ".")
		if b.Type != "resource" {
			what = b.Type + "." + what
		}
		if r := providerReads(b.Labels[0]); r != "" {
			a.markUnknown("%s: %s %s", file, what, r)
			return
		}
		if b.Labels[0] == "terraform_remote_state" {
			if be, ok := b.Body.Attributes["backend"]; ok {
				if v, lit := staticString(be.Expr); !lit || v == "local" {
					a.markUnknown("%s: %s may read a state file of the artifact", file, what)
					return
				}
			}
		}
		a.attributes(file, what, b.Body)
	case "provider":
		a.attributes(file, "provider "+strings.Join(b.Labels, "."), b.Body)
	}
}

// providerReads says why a resource type reads what cannot be followed,
// or "".
func providerReads(typ string) string {
	for _, p := range fileProviders {
		if strings.HasPrefix(typ, p) {
			return "reads local files or runs local programs"
		}
	}
	return ""
}

// attributes records the paths named by body's path attributes, in nested
// blocks too.
func (a *fileAnalysis) attributes(file, what string, body *hclsyntax.Body) {
	for name, attr := range body.Attributes {
		if !pathAttribute(name) {
			continue
		}
		exprs := []hclsyntax.Expression{attr.Expr}
		if tuple, ok := attr.Expr.(*hclsyntax.TupleConsExpr); ok {
			exprs = tuple.Exprs
		}
		for _, e := range exprs {
			a.read(file, readTree, what+" "+name, e)
		}
	}
	for _, b := range body.Blocks {
		a.attributes(file, what, b.Body)
	}
}

// call records what a function call reads.
func (a *fileAnalysis) call(file, name string, args []hclsyntax.Expression) {
	name = strings.TrimPrefix(name, "core::")
	if strings.Contains(name, "::") {
		a.markUnknown("%s: it calls the provider function %s, which may read any path", file, name)
		return
	}
	if why, ok := unfollowableFunctions[name]; ok {
		a.markUnknown("%s: %s() %s", file, name, why)
		return
	}
	kind, ok := pathFunctions[name]
	if !ok || len(args) == 0 {
		return
	}
	if kind == readFileset {
		pattern, lit := "", len(args) > 1
		if lit {
			pattern, lit = staticString(args[1])
		}
		if !lit {
			a.markUnknown("%s: fileset() matches a pattern that is not a literal", file)
			return
		}
		parts, ok := pathParts(args[0])
		if !ok {
			a.markUnknown("%s: fileset() reads a path that is not a literal relative to path.module or path.root", file)
			return
		}
		a.reads = append(a.reads, pathRead{kind: kind, parts: parts, pattern: pattern, what: file + ": fileset()"})
		return
	}
	a.read(file, kind, name+"()", args[0])
}

// moduleMetaArgument are a module block's arguments that are not passed
// to the module.
var moduleMetaArgument = map[string]bool{"source": true, "version": true, "count": true, "for_each": true, "depends_on": true, "providers": true}

// passesPath says whether expr may pass a path of the artifact: it
// references path.module, path.root or path.cwd, or holds a literal that
// starts "./" or "../" (or is "." or "..").
func passesPath(expr hclsyntax.Expression) bool {
	found := false
	_ = hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		switch e := n.(type) {
		case *hclsyntax.ScopeTraversalExpr:
			found = found || e.Traversal.RootName() == "path"
		case *hclsyntax.LiteralValueExpr:
			if e.Val.Type() == cty.String && !e.Val.IsNull() {
				found = found || pathLiteral(e.Val.AsString())
			}
		}
		return nil
	})
	return found
}

// pathLiteral says whether s reads as a relative path of the artifact.
func pathLiteral(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, `.\`) || strings.HasPrefix(s, `..\`)
}

// read records the path expr names, or that it is not a literal path.
func (a *fileAnalysis) read(file string, kind readKind, what string, expr hclsyntax.Expression) {
	parts, ok := pathParts(expr)
	if !ok {
		a.markUnknown("%s: %s reads a path that is not a literal relative to path.module or path.root", file, what)
		return
	}
	a.reads = append(a.reads, pathRead{kind: kind, parts: parts, what: file + ": " + what})
}

// pathParts splits a path expression made only of string literals,
// path.module and path.root (in a template or alone); false for anything
// else.
func pathParts(expr hclsyntax.Expression) ([]pathPart, bool) {
	switch e := expr.(type) {
	case *hclsyntax.LiteralValueExpr:
		if e.Val.Type() != cty.String || e.Val.IsNull() {
			return nil, false
		}
		return []pathPart{{lit: e.Val.AsString()}}, true
	case *hclsyntax.TemplateWrapExpr:
		return pathParts(e.Wrapped)
	case *hclsyntax.ParenthesesExpr:
		return pathParts(e.Expression)
	case *hclsyntax.TemplateExpr:
		var out []pathPart
		for _, p := range e.Parts {
			ps, ok := pathParts(p)
			if !ok {
				return nil, false
			}
			out = append(out, ps...)
		}
		return out, true
	case *hclsyntax.ScopeTraversalExpr:
		t := e.Traversal
		if len(t) != 2 || t.RootName() != "path" {
			return nil, false
		}
		attr, ok := t[1].(hcl.TraverseAttr)
		if !ok || (attr.Name != "module" && attr.Name != "root") {
			return nil, false
		}
		return []pathPart{{ref: attr.Name}}, true
	}
	return nil, false
}

// staticString is expr's value when it is a string literal, or a
// template of string literals only. It is decided by the expression's
// shape, never by evaluating it: evaluating a long chain costs time
// quadratic in its length.
func staticString(expr hcl.Expression) (string, bool) {
	e, ok := expr.(hclsyntax.Expression)
	if !ok {
		return "", false
	}
	parts, ok := pathParts(e)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.ref != "" {
			return "", false
		}
		b.WriteString(p.lit)
	}
	return b.String(), true
}
