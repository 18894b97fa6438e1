package policy

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scope says where the policies of a Workspace may come from.
type Scope struct {
	// Namespace is the Workspace's namespace.
	Namespace string
	// Namespaced allows the NamespacedValidatingPolicies of Namespace,
	// which the cluster admin grants namespace by namespace; without it
	// they are left out and named in Selection.Ignored.
	Namespaced bool
}

// Selection is what Select found.
type Selection struct {
	// Policies apply to the Workspace.
	Policies []Policy
	// Ignored names (namespace/name) the NamespacedValidatingPolicies the
	// selectors match that the Scope does not allow, sorted.
	Ignored []string
}

// Select returns the JSON-mode policies that apply to a Workspace in
// scope.Namespace: every cluster-scoped ValidatingPolicy, and, where
// scope.Namespaced allows them, every NamespacedValidatingPolicy in the
// namespace, whose labels match ANY of selectors (typically the
// Workspace's and its Project's, so each layer can add policies and a
// Workspace cannot drop its Project's). NamespacedValidatingPolicies the
// scope does not allow are named in Ignored, never dropped silently.
//
// A nil or empty selector selects nothing. Policies whose
// spec.evaluation.mode is not JSON are left out. The result is sorted by
// kind, namespace and name, without duplicates.
//
// Policies are listed as unstructured objects at the preferred served
// version (v1, else v1beta1), so the caller needs no Kyverno scheme. A
// missing ValidatingPolicy kind is an error (the gate cannot be enforced); a
// missing NamespacedValidatingPolicy kind is not.
func Select(ctx context.Context, c client.Reader, scope Scope, selectors ...*metav1.LabelSelector) (Selection, error) {
	sels, err := labelSelectors(selectors)
	if err != nil {
		return Selection{}, err
	}
	if len(sels) == 0 {
		return Selection{}, nil
	}
	seen := map[string]bool{}
	var out Selection
	add := func(items []unstructured.Unstructured, allowed bool) error {
		for i := range items {
			p, err := FromUnstructured(&items[i])
			if err != nil {
				return err
			}
			key := p.Kind() + "/" + p.Name()
			if seen[key] || !p.JSONMode() {
				continue
			}
			seen[key] = true
			if allowed {
				out.Policies = append(out.Policies, p)
			} else {
				out.Ignored = append(out.Ignored, p.Name())
			}
		}
		return nil
	}

	items, served, err := list(ctx, c, KindValidatingPolicy, "", sels)
	if err != nil {
		return Selection{}, err
	}
	if !served {
		return Selection{}, fmt.Errorf("%s.%s is not served by the apiserver: install Kyverno's CRDs", KindValidatingPolicy, Group)
	}
	if err := add(items, true); err != nil {
		return Selection{}, err
	}
	if scope.Namespace != "" {
		items, _, err := list(ctx, c, KindNamespacedValidatingPolicy, scope.Namespace, sels)
		if err != nil {
			return Selection{}, err
		}
		if err := add(items, scope.Namespaced); err != nil {
			return Selection{}, err
		}
	}
	slices.SortFunc(out.Policies, func(a, b Policy) int {
		return cmp.Or(cmp.Compare(a.Kind(), b.Kind()), cmp.Compare(a.Name(), b.Name()))
	})
	slices.Sort(out.Ignored)
	return out, nil
}

// labelSelectors converts the non-empty selectors; nil and empty ones are
// dropped because they must select nothing.
func labelSelectors(selectors []*metav1.LabelSelector) ([]labels.Selector, error) {
	var out []labels.Selector
	for _, s := range selectors {
		if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return nil, fmt.Errorf("invalid policy selector: %w", err)
		}
		out = append(out, sel)
	}
	return out, nil
}

// list lists kind in namespace once per selector at the first served
// version. served is false when no version of kind is served.
func list(ctx context.Context, c client.Reader, kind, namespace string, sels []labels.Selector) (items []unstructured.Unstructured, served bool, err error) {
	for _, version := range servedVersions {
		items = items[:0]
		notServed := false
		for _, sel := range sels {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(schema.GroupVersionKind{Group: Group, Version: version, Kind: kind + "List"})
			opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
			if namespace != "" {
				opts = append(opts, client.InNamespace(namespace))
			}
			if err := c.List(ctx, l, opts...); err != nil {
				if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
					notServed = true
					break
				}
				return nil, true, fmt.Errorf("listing %s.%s/%s: %w", kind, Group, version, err)
			}
			items = append(items, l.Items...)
		}
		if !notServed {
			return items, true, nil
		}
	}
	return nil, false, nil
}
