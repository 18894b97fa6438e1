package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

func TestSourceGuards(t *testing.T) {
	ws := func(ns string) *magosv1.Workspace {
		return &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ws"},
			Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra", Namespace: ns}}}
	}
	project := func(rules ...magosv1.SourceRule) *magosv1.Project {
		return &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p"},
			Status: magosv1.ProjectStatus{SourceAllowList: rules}}
	}
	reason := func(err error) string {
		if r, ok := rerror.As(err); ok {
			return r.Reason
		}
		return ""
	}

	strict := &Guards{NoCrossNamespaceRefs: true}
	assert.NoError(t, strict.CheckSourceNamespace(ws("")), "its own namespace")
	assert.NoError(t, strict.CheckSourceNamespace(ws("team-a")), "its own namespace, named")
	assert.Equal(t, magosv1.ReasonCrossNamespaceSourceNotAllowed, reason(strict.CheckSourceNamespace(ws("flux-system"))))
	assert.NoError(t, (&Guards{}).CheckSourceNamespace(ws("flux-system")), "allowed by the admin")

	for _, tt := range []struct {
		name string
		ws   *magosv1.Workspace
		p    *magosv1.Project
		ok   bool
	}{
		{"no list: the Project's namespace", ws(""), project(), true},
		{"no list: not another namespace", ws("flux-system"), project(), false},
		{"a rule by namespace", ws("flux-system"), project(magosv1.SourceRule{Namespace: "flux-system"}), true},
		{"a rule by glob", ws("flux-system"), project(magosv1.SourceRule{Kind: "Git*", Namespace: "flux-*", Name: "infra"}), true},
		{"a rule of another kind", ws("flux-system"), project(magosv1.SourceRule{Kind: "OCIRepository", Namespace: "*"}), false},
		{"a list without the own namespace", ws(""), project(magosv1.SourceRule{Namespace: "flux-system"}), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, SourceAllowed(tt.ws, tt.p))
			if err := CheckProjectSource(tt.ws, tt.p); tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Equal(t, magosv1.ReasonSourceNotAllowed, reason(err))
			}
		})
	}
}
