package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// access is one request a Workspace author might make in their namespace.
type access struct {
	verb, group, resource, subresource string
}

// tenantMay are what the chart's tenant ClusterRole grants a Workspace
// author in a namespace it is bound in: the Magos kinds they write, what
// they read of runs, and Secrets and ConfigMaps they create for their
// variables.
var tenantMay = []access{
	{"create", "magos.dev", "workspaces", ""},
	{"update", "magos.dev", "workspaces", ""},
	{"patch", "magos.dev", "workspaces", ""},
	{"delete", "magos.dev", "workspaces", ""},
	{"create", "magos.dev", "variablesets", ""},
	{"delete", "magos.dev", "variablesets", ""},
	{"get", "magos.dev", "projects", ""},
	{"list", "magos.dev", "rollouts", ""},
	{"list", "magos.dev", "workspacesets", ""},
	{"list", "batch", "jobs", ""},
	{"get", "", "pods", "log"},
	{"list", "", "events", ""},
	{"list", "events.k8s.io", "events", ""},
	{"create", "", "secrets", ""},
	{"update", "", "configmaps", ""},
	{"get", "source.toolkit.fluxcd.io", "gitrepositories", ""},
}

// tenantMayNot void the namespace's isolation, each of them granted by
// Kubernetes' edit ClusterRole: a Job or Pod of the author's (as a
// Workspace's runner ServiceAccount, or owned by a Workspace as if it were
// its run), a token of any ServiceAccount, an eviction of a run's Pod,
// reading or rewriting a Workspace's state, plan or outputs Secrets,
// writing status, a Project, a waiver of a policy.
var tenantMayNot = []access{
	{"create", "batch", "jobs", ""},
	{"create", "", "pods", ""},
	{"create", "", "serviceaccounts", "token"},
	{"create", "", "pods", "eviction"},
	{"create", "", "pods", "exec"},
	{"get", "", "secrets", ""},
	{"list", "", "secrets", ""},
	{"update", "", "secrets", ""},
	{"delete", "", "secrets", ""},
	{"update", "magos.dev", "workspaces", "status"},
	{"create", "magos.dev", "projects", ""},
	{"create", "magos.dev", "workspacesets", ""},
	{"create", "policies.kyverno.io", "policyexceptions", ""},
	{"create", "rbac.authorization.k8s.io", "rolebindings", ""},
	{"update", "coordination.k8s.io", "leases", ""},
}

// TestHelmChartTenantRole: the chart ships a ClusterRole for Workspace
// authors, aggregated into nothing, which a RoleBinding grants in one
// namespace. The apiserver's own authorizer answers what a user bound to
// it may do: the Magos kinds they write, reading runs, creating (not
// reading) Secrets; none of what Kubernetes' edit grants that voids the
// namespace's isolation.
func TestHelmChartTenantRole(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system")
	role := chartObject(objs, "ClusterRole", release+"-tenant")
	require.NotNil(t, role, "the tenant ClusterRole is rendered by default")
	for k := range role.GetLabels() {
		assert.NotContains(t, k, "aggregate-to", "the tenant role is aggregated into no other role")
	}
	_, aggregated := role.Object["aggregationRule"]
	assert.False(t, aggregated, "the tenant role aggregates no other role")
	installChart(t, []*unstructured.Unstructured{role})

	bind := func(user, clusterRole string) {
		t.Helper()
		require.NoError(t, env.Client.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}))
	}
	allowed := func(user string, a access) bool {
		t.Helper()
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: a.verb, Group: a.group,
				Resource: a.resource, Subresource: a.subresource},
		}}
		require.NoError(t, env.Client.Create(ctx, review))
		return review.Status.Allowed
	}
	tenant, editor := "tenant-"+rand.String(5), "editor-"+rand.String(5)
	bind(tenant, release+"-tenant")
	bind(editor, aggregatedCopy(t, "edit"))
	for _, a := range tenantMay {
		assert.True(t, allowed(tenant, a), "a Workspace author may %+v", a)
	}
	for _, a := range tenantMayNot {
		assert.False(t, allowed(tenant, a), "a Workspace author may not %+v", a)
	}
	// Why not edit: it grants what voids the namespace's isolation.
	for _, a := range tenantMayNot[:8] {
		assert.True(t, allowed(editor, a), "Kubernetes' edit grants %+v", a)
	}

	release = "m" + rand.String(5)
	assert.Nil(t, chartObject(renderChart(t, release, "magos-system", "--set", "tenantRole.enabled=false"), "ClusterRole", release+"-tenant"))
}

// aggregatedCopy creates a copy of the aggregated ClusterRole name with
// the rules the cluster role aggregation controller of
// kube-controller-manager (which the test control plane does not run)
// would give it, and returns the copy's name.
func aggregatedCopy(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	var role rbacv1.ClusterRole
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, &role))
	require.NotNil(t, role.AggregationRule, "%s is aggregated", name)
	out := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + rand.String(5)}}
	for _, sel := range role.AggregationRule.ClusterRoleSelectors {
		var parts rbacv1.ClusterRoleList
		require.NoError(t, env.Client.List(ctx, &parts, client.MatchingLabels(sel.MatchLabels)))
		for _, p := range parts.Items {
			out.Rules = append(out.Rules, p.Rules...)
		}
	}
	require.NotEmpty(t, out.Rules, "the roles aggregated into %s", name)
	require.NoError(t, env.Client.Create(ctx, out))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), out) })
	return out.Name
}
