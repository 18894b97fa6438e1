package workspaceset

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// element is one parameter set.
type element map[string]string

// sources reads what the directories and namespaces generators need.
type sources interface {
	// Dirs lists the directories of the artifact of a source in namespace.
	Dirs(ctx context.Context, namespace string, ref magosv1.SourceReference) ([]string, error)
	// Namespaces lists the namespaces the selector selects (none for an
	// empty one).
	Namespaces(ctx context.Context, selector *metav1.LabelSelector) ([]corev1.Namespace, error)
}

// generateError is a generator that could not yield its elements.
type generateError struct{ msg string }

func (e generateError) Error() string { return e.msg }

// generate yields the elements of every generator of set, in order,
// without duplicates.
func generate(ctx context.Context, src sources, set *magosv1.WorkspaceSet) ([]element, error) {
	var out []element
	for i, g := range set.Spec.Generators {
		var els []element
		var err error
		switch {
		case g.Matrix != nil:
			els, err = matrix(ctx, src, set.Namespace, g.Matrix)
		case g.Merge != nil:
			els, err = merge(ctx, src, set.Namespace, g.Merge)
		default:
			els, err = base(ctx, src, set.Namespace, magosv1.WorkspaceSetBaseGenerator{List: g.List, Directories: g.Directories, Namespaces: g.Namespaces})
		}
		if err != nil {
			return nil, generateError{fmt.Sprintf("spec.generators[%d]: %v", i, err)}
		}
		for _, e := range els {
			if !slices.ContainsFunc(out, func(o element) bool { return maps.Equal(o, e) }) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// base yields the elements of a list, directories or namespaces generator.
func base(ctx context.Context, src sources, namespace string, g magosv1.WorkspaceSetBaseGenerator) ([]element, error) {
	switch {
	case g.List != nil:
		out := make([]element, 0, len(g.List.Elements))
		for _, e := range g.List.Elements {
			out = append(out, maps.Clone(element(e)))
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
		out := make([]element, 0, len(nss))
		for _, ns := range nss {
			e := element{"namespace": ns.Name}
			for k, v := range ns.Labels {
				e["namespace.labels."+k] = v
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no generator set")
}

// directoryElements are the directories an include glob matches and no
// exclude glob does, sorted, each with path, path.basename and path.N.
func directoryElements(dirs, include, exclude []string) ([]element, error) {
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
	var out []element
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
		e := element{"path": dir, "path.basename": path.Base(dir)}
		for i, seg := range strings.Split(dir, "/") {
			e["path."+strconv.Itoa(i)] = seg
		}
		out = append(out, e)
	}
	return out, nil
}

// matrix yields every pair of its two generators' elements, merged (the
// second's parameters win).
func matrix(ctx context.Context, src sources, namespace string, m *magosv1.MatrixGenerator) ([]element, error) {
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
	out := make([]element, 0, len(a)*len(b))
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
// the later generators' elements whose merge keys have the same values.
func merge(ctx context.Context, src sources, namespace string, m *magosv1.MergeGenerator) ([]element, error) {
	var lists [][]element
	for i, g := range m.Generators {
		els, err := base(ctx, src, namespace, g)
		if err != nil {
			return nil, fmt.Errorf("merge.generators[%d]: %w", i, err)
		}
		lists = append(lists, els)
	}
	key := func(e element) (string, bool) {
		var parts []string
		for _, k := range m.MergeKeys {
			v, ok := e[k]
			if !ok {
				return "", false
			}
			parts = append(parts, v)
		}
		return strings.Join(parts, "\x00"), true
	}
	out := make([]element, 0, len(lists[0]))
	for i, e := range lists[0] {
		k, ok := key(e)
		if !ok {
			return nil, fmt.Errorf("merge: element %d of generators[0] lacks a merge key (%s)", i, strings.Join(m.MergeKeys, ", "))
		}
		merged := maps.Clone(e)
		for _, later := range lists[1:] {
			for _, o := range later {
				if ok, found := key(o); found && ok == k {
					maps.Copy(merged, o)
				}
			}
		}
		out = append(out, merged)
	}
	return out, nil
}
