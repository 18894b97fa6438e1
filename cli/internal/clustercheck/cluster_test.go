package clustercheck

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

func TestControllerCheck(t *testing.T) {
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	deployment := func(want, available int32) []appsv1.Deployment {
		return []appsv1.Deployment{{
			ObjectMeta: metav1.ObjectMeta{Name: "magos-workspace-controller"},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(want)},
			Status:     appsv1.DeploymentStatus{AvailableReplicas: available},
		}}
	}
	lease := func(renewedAgo time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("pod-1_x"), LeaseDurationSeconds: ptr.To(int32(15)),
			RenewTime: &metav1.MicroTime{Time: now.Add(-renewedAgo)},
		}}
	}
	tests := []struct {
		name       string
		deps       []appsv1.Deployment
		lease      *coordinationv1.Lease
		status     view.CheckStatus
		detail     string
		adviceHint string
	}{
		{"not installed", nil, nil, view.CheckFail, "no Deployment in magos-system", "helm install magos charts/magos -n magos-system"},
		{"no replica available", deployment(1, 0), lease(time.Second), view.CheckFail, "0/1 available", "describe deployment magos-workspace-controller"},
		{"scaled to zero", deployment(0, 0), nil, view.CheckWarn, "0/0 available", "scaled to 0"},
		{"no Lease", deployment(1, 1), nil, view.CheckFail, "1/1 available; no leader", "logs deployment/magos-workspace-controller"},
		{"a Lease not renewed for twice its duration", deployment(1, 1), lease(31 * time.Second), view.CheckFail, "no leader", "holds the leader Lease"},
		{"leading", deployment(2, 1), lease(5 * time.Second), view.CheckOK, "1/2 available; leader pod-1_x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := controllerCheck("workspace-controller", "magos-system", tt.deps, tt.lease, now)
			assert.Equal(t, tt.status, got.Status)
			assert.Contains(t, got.Detail, tt.detail)
			if tt.adviceHint == "" {
				assert.Empty(t, got.Advice)
			} else {
				assert.Contains(t, got.Advice, tt.adviceHint)
			}
		})
	}
}

func TestCheckKinds(t *testing.T) {
	served := func(gv string, kinds ...string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: gv}
		for _, k := range kinds {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: strings.ToLower(k) + "s", Kind: k})
		}
		return l
	}
	magos := served(magosv1.GroupVersion.String(), "Workspace", "Project", "Rollout", "VariableSet")
	statusOf := func(results []view.CheckResult) map[string]view.CheckStatus {
		m := map[string]view.CheckStatus{}
		for _, r := range results {
			m[r.Name] = r.Status
		}
		return m
	}
	t.Run("no Flux source kind: the sources fail, saying no Workspace can run", func(t *testing.T) {
		results := checkKinds(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{magos}}})
		st := statusOf(results)
		assert.Equal(t, view.CheckOK, st["Workspace"])
		for _, kind := range []string{"GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"} {
			assert.Equal(t, view.CheckFail, st[kind], kind)
		}
		assert.Equal(t, view.CheckWarn, st["ValidatingPolicy"], "Kyverno's kinds stay optional")
		for _, r := range results {
			if r.Name == "GitRepository" {
				assert.Contains(t, r.Advice, "no Flux source kind is served, so no Workspace can run: install Flux 2.6 or later")
			}
		}
	})
	t.Run("Flux before 2.7: only ExternalArtifact is missing, a warning", func(t *testing.T) {
		st := statusOf(checkKinds(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
			magos, served("source.toolkit.fluxcd.io/v1", "GitRepository", "OCIRepository", "Bucket")}}}))
		assert.Equal(t, view.CheckOK, st["GitRepository"])
		assert.Equal(t, view.CheckWarn, st["ExternalArtifact"])
	})
	t.Run("no Magos CRDs fail", func(t *testing.T) {
		st := statusOf(checkKinds(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}))
		assert.Equal(t, view.CheckFail, st["Workspace"])
	})
}

// TestCheckKnowsEveryKind: check looks for every kind of the API and the
// controller of each.
func TestCheckKnowsEveryKind(t *testing.T) {
	var kinds, controllers []string
	for name := range ops.Scheme.KnownTypes(magosv1.GroupVersion) {
		if _, listed := ops.Scheme.KnownTypes(magosv1.GroupVersion)[name+"List"]; listed {
			kinds = append(kinds, name)
			controllers = append(controllers, strings.ToLower(name)+"-controller")
		}
	}
	require.NotEmpty(t, kinds)
	assert.ElementsMatch(t, kinds, servedKinds[0].Kinds, "check's Magos kinds")
	assert.ElementsMatch(t, controllers, controllerNames, "check's controllers")
}
