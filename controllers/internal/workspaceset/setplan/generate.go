package setplan

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Element is one parameter set, the values a template is rendered with.
type Element map[string]string

// Sources reads what the directories and namespaces generators need: the
// package's only I/O, done by the reconciler that implements it.
type Sources interface {
	// Dirs lists the directories of the artifact of a source in namespace.
	Dirs(ctx context.Context, namespace string, ref magosv1.SourceReference) ([]string, error)
	// Namespaces lists the namespaces the selector selects (none for an
	// empty one).
	Namespaces(ctx context.Context, selector *metav1.LabelSelector) ([]corev1.Namespace, error)
}

// GenerateError is a generator that could not yield its elements.
type GenerateError struct{ msg string }

func (e GenerateError) Error() string { return e.msg }

// TooManyError says the generators yield more elements than
// spec.maxElements allows; it is found before they are made where they can
// be counted first (a matrix).
type TooManyError struct{ msg string }

func (e TooManyError) Error() string { return e.msg }

// maxElements is the bound on set's elements (spec.maxElements, else the
// default).
func maxElements(set *magosv1.WorkspaceSet) int {
	if set.Spec.MaxElements != nil {
		return int(*set.Spec.MaxElements)
	}
	return magosv1.DefaultMaxElements
}

// productBound is the product of sizes, math.MaxInt where it would
// overflow, and whether it is within limit: a matrix is counted before it
// is expanded.
func productBound(sizes []int, limit int) (n int, within bool) {
	if slices.Contains(sizes, 0) {
		return 0, true
	}
	n = 1
	for _, s := range sizes {
		if s > math.MaxInt/n {
			return math.MaxInt, false
		}
		n *= s
	}
	return n, n <= limit
}

// Generate yields the elements of every generator of set, in order,
// without duplicates, and stops with a TooManyError once they are more than
// spec.maxElements: a matrix is counted before it is expanded, and the
// elements are deduplicated with a set, so a set asking for millions of
// elements costs no more than its generators' inputs.
func Generate(ctx context.Context, src Sources, set *magosv1.WorkspaceSet) ([]Element, error) {
	limit := maxElements(set)
	var out []Element
	seen := map[string]bool{}
	for i, g := range set.Spec.Generators {
		var els []Element
		var err error
		switch {
		case g.Matrix != nil:
			els, err = matrix(ctx, src, set.Namespace, g.Matrix, limit)
		case g.Merge != nil:
			els, err = merge(ctx, src, set.Namespace, g.Merge, limit)
		default:
			els, err = base(ctx, src, set.Namespace, magosv1.WorkspaceSetBaseGenerator{List: g.List, Directories: g.Directories, Namespaces: g.Namespaces})
		}
		var tm TooManyError
		switch {
		case errors.As(err, &tm):
			return nil, TooManyError{fmt.Sprintf("spec.generators[%d]: %s", i, tm.msg)}
		case err != nil:
			return nil, GenerateError{fmt.Sprintf("spec.generators[%d]: %v", i, err)}
		}
		for _, e := range els {
			k := e.key()
			if seen[k] {
				continue
			}
			if len(out) == limit {
				return nil, TooManyError{fmt.Sprintf("the generators yield more than spec.maxElements (%d) elements", limit)}
			}
			seen[k] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// key identifies e among elements: its parameters, sorted, each name and
// value quoted.
func (e Element) key() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(e)) {
		b.WriteString(strconv.Quote(k))
		b.WriteByte('=')
		b.WriteString(strconv.Quote(e[k]))
		b.WriteByte(0)
	}
	return b.String()
}

// base yields the elements of a list, directories or namespaces generator.
func base(ctx context.Context, src Sources, namespace string, g magosv1.WorkspaceSetBaseGenerator) ([]Element, error) {
	switch {
	case g.List != nil:
		out := make([]Element, 0, len(g.List.Elements))
		for _, e := range g.List.Elements {
			out = append(out, maps.Clone(Element(e)))
		}
		return out, nil
	case g.Directories != nil:
		dirs, err := src.Dirs(ctx, namespace, g.Directories.SourceRef)
		if err != nil {
			return nil, err
		}
		return directoryElements(dirs, g.Directories.Include, g.Directories.Exclude)
	case g.Namespaces != nil:
		nss, err := src.Namespaces(ctx, &g.Namespaces.Selector)
		if err != nil {
			return nil, err
		}
		out := make([]Element, 0, len(nss))
		for _, ns := range nss {
			if !namespaceVisible(namespace, ns) {
				continue
			}
			e := Element{"namespace": ns.Name}
			for k, v := range ns.Labels {
				if !strings.HasPrefix(k, magosv1.WorkspaceSetGrantLabelPrefix) {
					e["namespace.labels."+k] = v
				}
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no generator set")
}

// namespaceVisible says whether a namespaces generator of a set in
// setNamespace may yield ns: its own namespace, or one an admin granted to
// it (magosv1.WorkspaceSetGrantLabelPrefix + setNamespace: "true"). A
// tenant's selector matching every namespace reveals no other: their
// names and labels are not the set's to read.
func namespaceVisible(setNamespace string, ns corev1.Namespace) bool {
	return ns.Name == setNamespace || ns.Labels[magosv1.WorkspaceSetGrantLabelPrefix+setNamespace] == "true"
}

// directoryElements are the directories an include glob matches and no
// exclude glob does, sorted, each with path, path.basename and path.N.
func directoryElements(dirs, include, exclude []string) ([]Element, error) {
	matches := func(globs []string, dir string) (bool, error) {
		for _, g := range globs {
			ok, err := path.Match(g, dir)
			if err != nil {
				return false, fmt.Errorf("glob %q: %w", g, err)
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	}
	var out []Element
	for _, dir := range slices.Sorted(slices.Values(dirs)) {
		in, err := matches(include, dir)
		if err != nil {
			return nil, err
		}
		ex, err := matches(exclude, dir)
		if err != nil {
			return nil, err
		}
		if !in || ex {
			continue
		}
		e := Element{"path": dir, "path.basename": path.Base(dir)}
		for i, seg := range strings.Split(dir, "/") {
			e["path."+strconv.Itoa(i)] = seg
		}
		out = append(out, e)
	}
	return out, nil
}

// matrix yields every pair of its two generators' elements, merged (the
// second's parameters win). It counts the pairs first and refuses more
// than limit (TooManyError) without making any.
func matrix(ctx context.Context, src Sources, namespace string, m *magosv1.MatrixGenerator, limit int) ([]Element, error) {
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("matrix takes two generators, not %d", len(m.Generators))
	}
	a, err := base(ctx, src, namespace, m.Generators[0])
	if err != nil {
		return nil, fmt.Errorf("matrix.generators[0]: %w", err)
	}
	b, err := base(ctx, src, namespace, m.Generators[1])
	if err != nil {
		return nil, fmt.Errorf("matrix.generators[1]: %w", err)
	}
	n, within := productBound([]int{len(a), len(b)}, limit)
	if !within {
		return nil, TooManyError{fmt.Sprintf("the matrix yields %d elements (%d × %d), more than spec.maxElements (%d)", n, len(a), len(b), limit)}
	}
	out := make([]Element, 0, n)
	for _, x := range a {
		for _, y := range b {
			e := maps.Clone(x)
			maps.Copy(e, y)
			out = append(out, e)
		}
	}
	return out, nil
}

// merge yields the first generator's elements, each with the parameters of
// the later generators' elements whose merge keys have the same values. It
// refuses a first generator of more than limit elements (TooManyError)
// before merging, and finds the later elements by key, not by pairs.
func merge(ctx context.Context, src Sources, namespace string, m *magosv1.MergeGenerator, limit int) ([]Element, error) {
	var lists [][]Element
	for i, g := range m.Generators {
		els, err := base(ctx, src, namespace, g)
		if err != nil {
			return nil, fmt.Errorf("merge.generators[%d]: %w", i, err)
		}
		lists = append(lists, els)
	}
	if len(lists) == 0 {
		return nil, fmt.Errorf("merge takes generators")
	}
	if len(lists[0]) > limit {
		return nil, TooManyError{fmt.Sprintf("the merge yields %d elements, more than spec.maxElements (%d)", len(lists[0]), limit)}
	}
	key := func(e Element) (string, bool) {
		var b strings.Builder
		for _, k := range m.MergeKeys {
			v, ok := e[k]
			if !ok {
				return "", false
			}
			b.WriteString(strconv.Quote(v))
			b.WriteByte(0)
		}
		return b.String(), true
	}
	later := make([]map[string][]Element, 0, len(lists)-1)
	for _, l := range lists[1:] {
		byKey := map[string][]Element{}
		for _, o := range l {
			if k, ok := key(o); ok {
				byKey[k] = append(byKey[k], o)
			}
		}
		later = append(later, byKey)
	}
	out := make([]Element, 0, len(lists[0]))
	for i, e := range lists[0] {
		k, ok := key(e)
		if !ok {
			return nil, fmt.Errorf("merge: element %d of generators[0] lacks a merge key (%s)", i, strings.Join(m.MergeKeys, ", "))
		}
		merged := maps.Clone(e)
		for _, byKey := range later {
			for _, o := range byKey[k] {
				maps.Copy(merged, o)
			}
		}
		out = append(out, merged)
	}
	return out, nil
}
