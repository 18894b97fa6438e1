package setplan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestNamespacesGeneratorSeesOnlyGrantedNamespaces: a set's namespaces
// generator yields its own namespace and the namespaces an admin labelled
// for the set's namespace (workspacesets.magos.dev/<namespace>: "true"),
// never the others its selector matches; the grants are not parameters.
func TestNamespacesGeneratorSeesOnlyGrantedNamespaces(t *testing.T) {
	ns := func(name string, labels map[string]string) corev1.Namespace {
		return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	src := fakeSources{nss: []corev1.Namespace{
		ns("platform", map[string]string{"tier": "admin"}),
		ns("team-a", map[string]string{"tier": "gold", "workspacesets.magos.dev/platform": "true", "workspacesets.magos.dev/other": "true"}),
		ns("team-b", map[string]string{"tier": "gold", "workspacesets.magos.dev/other": "true"}),
		ns("team-c", map[string]string{"tier": "gold"}),
		ns("team-d", map[string]string{"tier": "gold", "workspacesets.magos.dev/platform": "false"}),
		ns("kube-system", nil),
	}}
	set := setOf(magosv1.WorkspaceSetGenerator{Namespaces: &magosv1.NamespacesGenerator{
		Selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpExists}}}}})
	set.Namespace = "platform"
	got, err := Generate(context.Background(), src, set)
	require.NoError(t, err)
	assert.Equal(t, []Element{
		{"namespace": "platform", "namespace.labels.tier": "admin"},
		{"namespace": "team-a", "namespace.labels.tier": "gold"},
	}, got, "its own namespace and the one granted to it, without the grants")

	for _, tt := range []struct {
		name    string
		set     string
		ns      corev1.Namespace
		visible bool
	}{
		{"its own namespace", "platform", ns("platform", nil), true},
		{"granted to the set's namespace", "platform", ns("team-a", map[string]string{"workspacesets.magos.dev/platform": "true"}), true},
		{"granted to another namespace", "platform", ns("team-a", map[string]string{"workspacesets.magos.dev/other": "true"}), false},
		{"not granted", "platform", ns("team-a", map[string]string{"tier": "gold"}), false},
		{"a grant of another value", "platform", ns("team-a", map[string]string{"workspacesets.magos.dev/platform": "yes"}), false},
		{"a label of another prefix", "platform", ns("team-a", map[string]string{"magos.dev/platform": "true"}), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.visible, namespaceVisible(tt.set, tt.ns))
		})
	}
}
