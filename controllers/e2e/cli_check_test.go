package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCLICheck: `kubectl magos check` on a cluster with the CRDs (Magos's,
// Flux's, Kyverno's) reports them served; with no controller installed it
// fails, naming each controller and how to install it; a controller whose
// Deployment is available and whose leader Lease is renewed is ok.
func TestCLICheck(t *testing.T) {
	ctx := context.Background()
	s := newStackWith(t, stackOptions{NoControllers: true})

	r := s.magos("check", "--install-namespace", s.ns)
	t.Logf("%s", r)
	require.Equal(t, 1, r.code, "%s", r)
	for _, kind := range []string{"Workspace", "Project", "Rollout", "VariableSet", "WorkspaceSet", "GitRepository", "OCIRepository", "Bucket", "ExternalArtifact", "ValidatingPolicy"} {
		assert.Regexp(t, `(?m)^ok\s+`+kind+`\s`, r.stdout, "%s", r)
	}
	assert.Regexp(t, `(?m)^ok\s+Kubernetes\s+v1\.`, r.stdout, "%s", r)
	assert.Regexp(t, `(?m)^fail\s+workspace-controller\s+no Deployment in `+s.ns, r.stdout, "%s", r)
	assert.Contains(t, r.stdout, "→ install Magos: helm install magos charts/magos -n "+s.ns, "%s", r)
	assert.Contains(t, r.stderr, "5 check(s) failed: workspace-controller, project-controller, rollout-controller, variableset-controller, workspaceset-controller", "%s", r)

	// An available Deployment whose leader renewed the Lease just now.
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "magos-workspace-controller", Labels: map[string]string{"app.kubernetes.io/name": "workspace-controller"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "ghcr.io/magos-dev/workspace-controller:dev"}}},
			},
		},
	}
	require.NoError(t, env.Client.Create(ctx, dep))
	dep.Status = appsv1.DeploymentStatus{Replicas: 1, AvailableReplicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1}
	require.NoError(t, env.Client.Status().Update(ctx, dep))
	r = s.magos("check", "--install-namespace", s.ns)
	assert.Regexp(t, `(?m)^fail\s+workspace-controller\s+Deployment magos-workspace-controller: 1/1 available; no leader`, r.stdout, "%s", r)

	require.NoError(t, env.Client.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "magos-workspace-controller"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("magos-workspace-controller-0_1"), LeaseDurationSeconds: ptr.To(int32(15)),
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}))
	r = s.magos("check", "--install-namespace", s.ns)
	assert.Regexp(t, `(?m)^ok\s+workspace-controller\s+Deployment magos-workspace-controller: 1/1 available; leader magos-workspace-controller-0_1`, r.stdout, "%s", r)
	assert.Contains(t, r.stderr, "4 check(s) failed", "%s", r)
}
