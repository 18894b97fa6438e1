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

// Select returns the JSON-mode policies that apply to a Workspace in
// namespace: every cluster-scoped ValidatingPolicy, and every
// NamespacedValidatingPolicy in namespace, whose labels match ANY of
// selectors (typically the Workspace's and its Project's, so each layer can
// add policies and a Workspace cannot drop its Project's).
//
// A nil or empty selector selects nothing. Policies whose
// spec.evaluation.mode is not JSON are left out. The result is sorted by
// kind, namespace and name, without duplicates.
//
// Policies are listed as unstructured objects at the preferred served
// version (v1, else v1beta1), so the caller needs no Kyverno scheme. A
// missing ValidatingPolicy kind is an error (the gate cannot be enforced); a
// missing NamespacedValidatingPolicy kind is not.
func Select(ctx context.Context, c client.Reader, namespace string, selectors ...*metav1.LabelSelector) ([]Policy, error) {
	sels, err := labelSelectors(selectors)
	if err != nil {
		return nil, err
	}
	if len(sels) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []Policy
	add := func(items []unstructured.Unstructured) error {
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
			out = append(out, p)
		}
		return nil
	}

	items, served, err := list(ctx, c, KindValidatingPolicy, "", sels)
	if err != nil {
		return nil, err
	}
	if !served {
		return nil, fmt.Errorf("%s.%s is not served by the apiserver: install Kyverno's CRDs", KindValidatingPolicy, Group)
	}
	if err := add(items); err != nil {
		return nil, err
	}
	if namespace != "" {
		items, _, err := list(ctx, c, KindNamespacedValidatingPolicy, namespace, sels)
		if err != nil {
			return nil, err
		}
		if err := add(items); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b Policy) int {
		return cmp.Or(cmp.Compare(a.Kind(), b.Kind()), cmp.Compare(a.Name(), b.Name()))
	})
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
