package policy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// testLabel scopes the cluster-scoped policies a test creates to that test.
const testLabel = "policy.magos.dev/test"

// createPolicy creates a policy of kind at apiVersion policies.kyverno.io/
// version in namespace ("" for cluster scope) with labels and the given
// spec lines after `evaluation:`, and deletes it after the test.
func createPolicy(t *testing.T, version, kind, namespace, name, mode string, labels map[string]string, spec string) {
	t.Helper()
	doc := fmt.Sprintf("apiVersion: %s/%s\nkind: %s\nmetadata:\n  name: %s\nspec:\n  evaluation:\n    mode: %s\n%s",
		policy.Group, version, kind, name, mode, policytest.Indent(spec, "  "))
	u := &unstructured.Unstructured{}
	require.NoError(t, yamlUnmarshal([]byte(doc), &u.Object))
	u.SetNamespace(namespace)
	u.SetLabels(labels)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, env.Client.Create(ctx, u), "creating %s %s", kind, name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.Delete(ctx, u)
	})
}

// TestSelect pins which policies a Workspace gets, against the real
// apiserver, with policies created as v1 and as v1beta1 objects.
func TestSelect(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	other := env.NewNamespace(t)
	run := map[string]string{testLabel: ns}
	with := func(kv ...string) map[string]string {
		l := map[string]string{testLabel: ns}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return l
	}
	createPolicy(t, "v1", policy.KindValidatingPolicy, "", ns+"-project", "JSON", with("layer", "project"), policytest.SpecAlwaysPass)
	createPolicy(t, "v1beta1", policy.KindValidatingPolicy, "", ns+"-workspace", "JSON", with("layer", "workspace"), policytest.SpecAlwaysPass)
	createPolicy(t, "v1", policy.KindValidatingPolicy, "", ns+"-both", "JSON", with("layer", "workspace", "baseline", "true"), policytest.SpecAlwaysPass)
	createPolicy(t, "v1", policy.KindValidatingPolicy, "", ns+"-unselected", "JSON", with("layer", "other"), policytest.SpecRequireEnv)
	createPolicy(t, "v1", policy.KindValidatingPolicy, "", ns+"-admission", "Kubernetes", with("layer", "project"), policytest.SpecAlwaysPass)
	createPolicy(t, "v1beta1", policy.KindNamespacedValidatingPolicy, ns, "team", "JSON", with("layer", "workspace"), policytest.SpecAlwaysPass)
	createPolicy(t, "v1", policy.KindNamespacedValidatingPolicy, other, "elsewhere", "JSON", with("layer", "workspace"), policytest.SpecAlwaysPass)

	sel := func(kv ...string) *metav1.LabelSelector { return &metav1.LabelSelector{MatchLabels: with(kv...)} }
	tests := []struct {
		name      string
		namespace string
		selectors []*metav1.LabelSelector
		want      []string
		// notAllowed leaves the namespace's own policies out; ignored
		// are those the selectors match.
		notAllowed bool
		ignored    []string
	}{
		{
			name:      "the union of the Workspace's and the Project's selectors",
			namespace: ns,
			selectors: []*metav1.LabelSelector{sel("layer", "workspace"), sel("layer", "project")},
			want:      []string{ns + "-both", ns + "-project", ns + "-workspace", ns + "/team"},
		},
		{
			name:      "a policy both select appears once",
			namespace: ns,
			selectors: []*metav1.LabelSelector{sel("layer", "workspace"), sel("baseline", "true")},
			want:      []string{ns + "-both", ns + "-workspace", ns + "/team"},
		},
		{
			name:      "the Project's selector alone: Kubernetes-mode policies are left out",
			namespace: ns,
			selectors: []*metav1.LabelSelector{nil, sel("layer", "project")},
			want:      []string{ns + "-project"},
		},
		{
			name:      "match expressions",
			namespace: ns,
			selectors: []*metav1.LabelSelector{{
				MatchLabels:      run,
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "layer", Operator: metav1.LabelSelectorOpIn, Values: []string{"project", "other"}}},
			}},
			want: []string{ns + "-project", ns + "-unselected"},
		},
		{
			name:      "a namespace gets its own namespaced policies, not another's",
			namespace: other,
			selectors: []*metav1.LabelSelector{sel("layer", "workspace")},
			want:      []string{ns + "-both", ns + "-workspace", other + "/elsewhere"},
		},
		{
			name:       "a namespace not allowed namespaced policies: its own are ignored, and named",
			namespace:  ns,
			selectors:  []*metav1.LabelSelector{sel("layer", "workspace")},
			notAllowed: true,
			want:       []string{ns + "-both", ns + "-workspace"},
			ignored:    []string{ns + "/team"},
		},
		{
			name:      "no namespace: cluster-scoped policies only",
			selectors: []*metav1.LabelSelector{sel("layer", "workspace")},
			want:      []string{ns + "-both", ns + "-workspace"},
		},
		{
			name:      "nil and empty selectors select nothing",
			namespace: ns,
			selectors: []*metav1.LabelSelector{nil, {}},
		},
		{
			name:      "no selector selects nothing",
			namespace: ns,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policy.Select(context.Background(), env.Client, policy.Scope{Namespace: tt.namespace, Namespaced: !tt.notAllowed}, tt.selectors...)
			require.NoError(t, err)
			assert.Equal(t, tt.ignored, got.Ignored)
			names := []string{}
			for _, p := range got.Policies {
				names = append(names, p.Name())
				assert.True(t, p.JSONMode())
			}
			if tt.want == nil {
				tt.want = []string{}
			}
			// Selection of other tests' policies never leaks in: every
			// selector here carries this test's label (except "no selector").
			assert.ElementsMatch(t, tt.want, names)
		})
	}

	t.Run("an invalid selector is an error", func(t *testing.T) {
		_, err := policy.Select(context.Background(), env.Client, policy.Scope{Namespace: ns}, &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "layer", Operator: "Near"}},
		})
		require.ErrorContains(t, err, "invalid policy selector")
	})
}

// TestSelectThenEvaluate: a failing policy that is not selected is not
// applied; once selected, it blocks.
func TestSelectThenEvaluate(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	createPolicy(t, "v1", policy.KindValidatingPolicy, "", ns+"-pass", "JSON",
		map[string]string{testLabel: ns, "layer": "project"}, policytest.SpecAlwaysPass)
	createPolicy(t, "v1beta1", policy.KindValidatingPolicy, "", ns+"-require-env", "JSON",
		map[string]string{testLabel: ns, "layer": "strict"}, policytest.SpecRequireEnv)
	e := startedEngine(t)
	planJSON := planOf(2, map[string]string{"owner": "team-a"})

	project := &metav1.LabelSelector{MatchLabels: map[string]string{testLabel: ns, "layer": "project"}}
	selection, err := policy.Select(context.Background(), env.Client, policy.Scope{Namespace: ns}, project)
	require.NoError(t, err)
	v := e.Evaluate(context.Background(), ns, selection.Policies, planJSON)
	assert.True(t, v.Passed, v.Message)
	assert.Equal(t, []string{ns + "-pass"}, v.Policies)

	workspace := &metav1.LabelSelector{MatchLabels: map[string]string{testLabel: ns, "layer": "strict"}}
	selection, err = policy.Select(context.Background(), env.Client, policy.Scope{Namespace: ns}, workspace, project)
	require.NoError(t, err)
	v = e.Evaluate(context.Background(), ns, selection.Policies, planJSON)
	assert.False(t, v.Passed, v.Message)
	require.Len(t, v.Violations, 1)
	assert.Equal(t, ns+"-require-env", v.Violations[0].Policy)
	assert.Equal(t, "every resource needs an env tag", v.Violations[0].Message)
}

// versionReader serves ValidatingPolicies at the versions in served only,
// as an apiserver with an older or partial Kyverno install would.
type versionReader struct {
	served map[schema.GroupVersionKind][]unstructured.Unstructured
	listed []schema.GroupVersionKind
}

func (r *versionReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{}, "")
}

func (r *versionReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	gvk := list.GetObjectKind().GroupVersionKind()
	r.listed = append(r.listed, gvk)
	items, ok := r.served[gvk]
	if !ok {
		return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	list.(*unstructured.UnstructuredList).Items = items
	return nil
}

// TestSelectServedVersions: listing falls back from v1 to v1beta1, and a
// NamespacedValidatingPolicy kind that is not served is no error, while a
// missing ValidatingPolicy kind is.
func TestSelectServedVersions(t *testing.T) {
	vpol := func(name string) unstructured.Unstructured {
		u := unstructured.Unstructured{}
		u.SetAPIVersion(policy.Group + "/v1beta1")
		u.SetKind(policy.KindValidatingPolicy)
		u.SetName(name)
		require.NoError(t, unstructured.SetNestedField(u.Object, "JSON", "spec", "evaluation", "mode"))
		return u
	}
	listKind := func(version, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: policy.Group, Version: version, Kind: kind + "List"}
	}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}

	r := &versionReader{served: map[schema.GroupVersionKind][]unstructured.Unstructured{
		listKind("v1beta1", policy.KindValidatingPolicy): {vpol("old-install")},
	}}
	got, err := policy.Select(context.Background(), r, policy.Scope{Namespace: "team-a", Namespaced: true}, selector)
	require.NoError(t, err)
	require.Len(t, got.Policies, 1)
	assert.Equal(t, "old-install", got.Policies[0].Name())
	assert.Equal(t, []schema.GroupVersionKind{
		listKind("v1", policy.KindValidatingPolicy),
		listKind("v1beta1", policy.KindValidatingPolicy),
		listKind("v1", policy.KindNamespacedValidatingPolicy),
		listKind("v1beta1", policy.KindNamespacedValidatingPolicy),
	}, r.listed)

	_, err = policy.Select(context.Background(), &versionReader{}, policy.Scope{Namespace: "team-a"}, selector)
	require.ErrorContains(t, err, "ValidatingPolicy.policies.kyverno.io is not served")
}
