package configtree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// jsonValue is a JSON value with every object key kept in order,
// duplicates too: HCL's JSON syntax merges repeated block keys ("module"
// twice), where a Go map would keep one.
type jsonValue struct {
	str   *string
	obj   []jsonPair
	arr   []*jsonValue
	isObj bool
	isArr bool
}

type jsonPair struct {
	key string
	val *jsonValue
}

// parseJSON reads src without recursion, refusing nesting past
// maxNesting.
func parseJSON(name string, src []byte) (*jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	type frame struct {
		v       *jsonValue
		key     string
		haveKey bool
	}
	var root *jsonValue
	var stack []*frame
	put := func(v *jsonValue) error {
		if len(stack) == 0 {
			if root != nil {
				return errors.New("more than one value")
			}
			root = v
			return nil
		}
		top := stack[len(stack)-1]
		if top.v.isArr {
			top.v.arr = append(top.v.arr, v)
			return nil
		}
		top.v.obj = append(top.v.obj, jsonPair{key: top.key, val: v})
		top.haveKey = false
		return nil
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				v := &jsonValue{isObj: t == '{', isArr: t == '['}
				if err := put(v); err != nil {
					return nil, err
				}
				if stack = append(stack, &frame{v: v}); len(stack) > maxNesting {
					return nil, &RefusedError{File: name, Why: fmt.Sprintf("it nests deeper than %d levels", maxNesting)}
				}
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top := len(stack) - 1; top >= 0 && stack[top].v.isObj && !stack[top].haveKey {
				stack[top].key, stack[top].haveKey = t, true
				continue
			}
			if err := put(&jsonValue{str: &t}); err != nil {
				return nil, err
			}
		default:
			if err := put(&jsonValue{}); err != nil {
				return nil, err
			}
		}
	}
	if root == nil || len(stack) > 0 {
		return nil, errors.New("unexpected end of JSON")
	}
	return root, nil
}

// analyzeJSON analyses a configuration file in JSON syntax, where every
// string (key or value) is a template.
func analyzeJSON(name string, src []byte) *fileAnalysis {
	root, err := parseJSON(name, src)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		return &fileAnalysis{refused: refused}
	case err != nil || !root.isObj:
		return &fileAnalysis{unknown: name + " does not parse"}
	}
	a := &fileAnalysis{}
	if a.templates(name, root); a.refused != nil {
		return a
	}
	for _, p := range root.obj {
		switch p.key {
		case "module":
			for _, mod := range labels(p.val) {
				for _, body := range blockBodies(mod.val) {
					a.jsonModule(name, mod.key, body)
				}
			}
		case "resource", "data", "ephemeral":
			for _, typ := range labels(p.val) {
				for _, res := range labels(typ.val) {
					what := typ.key + "." + res.key
					if p.key != "resource" {
						what = p.key + "." + what
					}
					for _, body := range blockBodies(res.val) {
						a.jsonResource(name, what, typ.key, body)
					}
				}
			}
		case "provider":
			for _, prov := range labels(p.val) {
				for _, body := range blockBodies(prov.val) {
					a.jsonAttributes(name, "provider "+prov.key, body)
				}
			}
		}
	}
	return a
}

// labels are the label keys of a JSON block value: an object's pairs, or
// the pairs of each object of an array (HCL's JSON syntax accepts both at
// every level of a block's labels).
func labels(v *jsonValue) []jsonPair {
	var out []jsonPair
	for _, o := range blockBodies(v) {
		out = append(out, o.obj...)
	}
	return out
}

// blockBodies are the bodies a JSON block value holds: an object, or an
// array of objects.
func blockBodies(v *jsonValue) []*jsonValue {
	if v.isObj {
		return []*jsonValue{v}
	}
	var out []*jsonValue
	for _, e := range v.arr {
		if e.isObj {
			out = append(out, e)
		}
	}
	return out
}

// walk visits v and every value under it, without recursion, until visit
// returns false.
func (v *jsonValue) walk(visit func(*jsonValue) bool) {
	stack := []*jsonValue{v}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !visit(n) {
			return
		}
		for _, p := range n.obj {
			stack = append(stack, p.val)
		}
		stack = append(stack, n.arr...)
	}
}

// templates records the function calls of every string of v, keys too.
func (a *fileAnalysis) templates(file string, v *jsonValue) {
	v.walk(func(n *jsonValue) bool {
		if n.str != nil {
			a.template(file, *n.str)
		}
		for _, p := range n.obj {
			a.template(file, p.key)
		}
		return a.refused == nil
	})
}

// template records the function calls of one JSON string.
func (a *fileAnalysis) template(file, s string) {
	if !strings.Contains(s, "${") && !strings.Contains(s, "%{") || a.refused != nil {
		return
	}
	if err := checkBounds(file, []byte(s), true); err != nil {
		a.refused = err.(*RefusedError)
		return
	}
	expr, diags := hclsyntax.ParseTemplate([]byte(s), file, hcl.InitialPos)
	if diags.HasErrors() {
		a.markUnknown("%s: a template does not parse", file)
		return
	}
	a.visit(file, expr)
}

// jsonString parses a JSON string value as the template it is.
func jsonString(file string, v *jsonValue) (hclsyntax.Expression, bool) {
	if v == nil || v.str == nil {
		return nil, false
	}
	expr, diags := hclsyntax.ParseTemplate([]byte(*v.str), file, hcl.InitialPos)
	return expr, !diags.HasErrors()
}

// jsonStatic is a JSON string value's text when it is a template of
// literals only (staticString).
func jsonStatic(file string, v *jsonValue) (string, bool) {
	expr, ok := jsonString(file, v)
	if !ok {
		return "", false
	}
	return staticString(expr)
}

// attr is the only value of key in a JSON body; false when it is absent,
// and unknown when repeated.
func (a *fileAnalysis) attr(file, what, key string, body *jsonValue) (*jsonValue, bool) {
	var found *jsonValue
	for _, p := range body.obj {
		if p.key != key {
			continue
		}
		if found != nil {
			a.markUnknown("%s: %s sets %s twice", file, what, key)
			return nil, false
		}
		found = p.val
	}
	return found, found != nil
}

func (a *fileAnalysis) jsonModule(file, name string, body *jsonValue) {
	what := fmt.Sprintf("module %q", name)
	src, ok := a.attr(file, what, "source", body)
	if !ok {
		a.markUnknown("%s: %s has no source (an override file may change its version)", file, what)
		return
	}
	call := moduleCall{name: name}
	for _, p := range body.obj {
		if call.pathArgs != "" {
			break
		}
		if moduleMetaArgument[p.key] {
			continue
		}
		p.val.walk(func(n *jsonValue) bool {
			if expr, ok := jsonString(file, n); ok && passesPath(expr) {
				call.pathArgs = "argument " + p.key
			}
			return call.pathArgs == ""
		})
	}
	if call.source, ok = jsonStatic(file, src); !ok {
		a.markUnknown("%s: the source of %s is not a literal string", file, what)
		return
	}
	if v, has := a.attr(file, what, "version", body); has {
		if call.version, ok = jsonStatic(file, v); !ok {
			a.markUnknown("%s: the version of %s is not a literal string", file, what)
			return
		}
	}
	a.calls = append(a.calls, call)
}

func (a *fileAnalysis) jsonResource(file, what, typ string, body *jsonValue) {
	if r := providerReads(typ); r != "" {
		a.markUnknown("%s: %s %s", file, what, r)
		return
	}
	if typ == "terraform_remote_state" {
		if be, has := a.attr(file, what, "backend", body); has {
			if v, ok := jsonStatic(file, be); !ok || v == "local" {
				a.markUnknown("%s: %s may read a state file of the artifact", file, what)
				return
			}
		}
	}
	a.jsonAttributes(file, what, body)
}

// jsonAttributes records the paths named by path attributes anywhere in
// body (nested blocks are nested objects).
func (a *fileAnalysis) jsonAttributes(file, what string, body *jsonValue) {
	stack := []*jsonValue{body}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range v.obj {
			if !pathAttribute(p.key) {
				stack = append(stack, p.val)
				continue
			}
			values := []*jsonValue{p.val}
			if p.val.isArr {
				values = p.val.arr
			}
			for _, e := range values {
				expr, ok := jsonString(file, e)
				if !ok {
					a.markUnknown("%s: %s %s is not a literal path", file, what, p.key)
					continue
				}
				a.read(file, readTree, what+" "+p.key, expr)
			}
		}
		stack = append(stack, v.arr...)
	}
}
