package planfile

import (
	"bufio"
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// defaultWorkspace is the only state workspace Magos runs use.
const defaultWorkspace = "default"

// CheckRunnerBackend checks that the saved plan's backend is the runner's
// own state server: an `http` backend with no attribute set (the runner
// gives the engine the addresses and credentials through the
// environment), in the default workspace. A plan whose backend names an
// address would send the state, with every secret in it, there.
func (f *File) CheckRunnerBackend() error {
	b := f.Backend
	if b.Type != "http" || b.Workspace != defaultWorkspace {
		return fmt.Errorf("%w: its backend is %q (workspace %q), not the runner's http backend", ErrMismatch, b.Type, b.Workspace)
	}
	if set := setAttributes(b.Config); len(set) > 0 {
		return fmt.Errorf("%w: its http backend sets %s; the runner's sets none", ErrMismatch, strings.Join(set, ", "))
	}
	return nil
}

// CheckUserBackend checks the saved plan's backend against the Workspace's
// own backend block (the file the runner writes as the override): the
// same type, the default workspace, and the same attributes, with equal
// values where the block gives a literal (a string, number or boolean).
// An attribute the block does not set must be unset in the plan.
func (f *File) CheckUserBackend(block []byte) error {
	want, err := parseBackendBlock(block)
	if err != nil {
		return err
	}
	b := f.Backend
	if b.Type != want.typ || b.Workspace != defaultWorkspace {
		return fmt.Errorf("%w: its backend is %q (workspace %q), not the Workspace's %q backend", ErrMismatch, b.Type, b.Workspace, want.typ)
	}
	for _, name := range setAttributes(b.Config) {
		lit, mentioned := want.attrs[name]
		if !mentioned {
			return fmt.Errorf("%w: its %s backend sets %s, which the Workspace's backend does not", ErrMismatch, b.Type, name)
		}
		if lit != nil && !sameLiteral(lit, b.Config[name]) {
			return fmt.Errorf("%w: its %s backend's %s differs from the Workspace's backend", ErrMismatch, b.Type, name)
		}
	}
	for name, lit := range want.attrs {
		if lit != nil && b.Config[name] == nil {
			return fmt.Errorf("%w: its %s backend does not set %s, which the Workspace's backend sets", ErrMismatch, b.Type, name)
		}
	}
	return nil
}

// setAttributes lists, sorted, the attributes of config that are set.
func setAttributes(config map[string]any) []string {
	var set []string
	for k, v := range config {
		if v != nil {
			set = append(set, k)
		}
	}
	sort.Strings(set)
	return set
}

// backendBlock is what a backend block sets: its type and, per attribute
// or nested block, the literal value (nil when it is not a literal).
type backendBlock struct {
	typ   string
	attrs map[string]any
}

var (
	backendHeader = regexp.MustCompile(`(?:^|[\s{])backend\s+"([^"]+)"\s*\{\s*(\}\s*)?$`)
	attribute     = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(.*?)\s*$`)
	nestedBlock   = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\{`)
)

// parseBackendBlock reads the backend block of a Workspace's backend
// file: the attributes at its top level and the names of its nested
// blocks.
func parseBackendBlock(src []byte) (backendBlock, error) {
	bb := backendBlock{attrs: map[string]any{}}
	depth := -1 // brace depth inside the backend block; -1 before it
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := stripComment(sc.Text())
		if depth < 0 {
			if m := backendHeader.FindStringSubmatch(line); m != nil {
				bb.typ = m[1]
				if m[2] != "" {
					return bb, nil
				}
				depth = 0
			}
			continue
		}
		if depth == 0 {
			if strings.TrimSpace(line) == "}" {
				return bb, nil
			}
			if m := attribute.FindStringSubmatch(line); m != nil {
				bb.attrs[m[1]] = literal(m[2])
			} else if m := nestedBlock.FindStringSubmatch(line); m != nil {
				bb.attrs[m[1]] = nil
			}
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if depth < 0 {
			return bb, nil
		}
	}
	if bb.typ == "" {
		return bb, fmt.Errorf("the Workspace's backend configuration has no backend block")
	}
	return bb, nil
}

// literal parses a string, number or boolean literal; nil for anything
// else (an expression, a list, an object).
func literal(s string) any {
	s = strings.TrimSuffix(strings.TrimSpace(s), ",")
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) && !strings.Contains(u, "${") {
		return u
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return nil
}

// sameLiteral compares a literal with a decoded msgpack value.
func sameLiteral(lit, v any) bool {
	if f, ok := lit.(float64); ok {
		switch n := v.(type) {
		case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
			return reflect.ValueOf(n).Convert(reflect.TypeOf(float64(0))).Float() == f
		case float32:
			return float64(n) == f
		case float64:
			return n == f
		case string:
			g, err := strconv.ParseFloat(n, 64)
			return err == nil && g == f
		}
		return false
	}
	return lit == v
}

// stripComment drops a # or // comment that is not inside a string.
func stripComment(line string) string {
	in := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && in:
			i++
		case c == '"':
			in = !in
		case !in && (c == '#' || (c == '/' && i+1 < len(line) && line[i+1] == '/')):
			return line[:i]
		}
	}
	return line
}
