package artifactproxy

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestTheSourceGuardsHoldAtTheProxy: a Workspace the reconciler refuses
// for its source, one in another namespace where the cluster forbids
// cross-namespace references or one its Project's allow-list does not
// name, gets no artifact from the proxy either: not for a Job a tenant
// made for it, nor for a run recorded before the guard applied.
func TestTheSourceGuardsHoldAtTheProxy(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := env.NewNamespace(t)
	theirs := f.publish(other, "secret-infra", []byte("another team's configuration"))
	own := f.publish(f.ns, "infra", []byte("this team's configuration"))
	allowCross := newServer(t)
	allowCross.Guards.NoCrossNamespaceRefs = false

	t.Run("a tenant's Job for a Workspace reading another namespace", func(t *testing.T) {
		ws := f.newWorkspace("cross-tenant", other, "secret-infra", nil)
		token := f.newPod(f.newJob(ws, "cross-tenant-own", magosv1.RunPlan, theirs), "")
		code, body := f.fetchFrom(later(t), token)
		assert.Equal(t, http.StatusForbidden, code, "%s", body)
	})

	t.Run("a recorded run of a Workspace reading another namespace", func(t *testing.T) {
		ws := f.newWorkspace("cross", other, "secret-infra", nil)
		job := f.newJob(ws, "cross-plan-1", magosv1.RunPlan, theirs)
		f.record(ws, job, nil)
		token := f.newPod(job, "")
		code, body := f.fetch(token)
		assert.Equal(t, http.StatusForbidden, code, "%s", body)
		code, body = f.fetchFrom(allowCross, token)
		require.Equal(t, http.StatusOK, code, "served where the cluster allows cross-namespace sources: %s", body)
		assert.Equal(t, theirs.Digest, sha256Digest(body))
	})

	t.Run("a source the Project does not allow", func(t *testing.T) {
		p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "team"},
			Spec: magosv1.ProjectSpec{SourceAllowList: []magosv1.SourceRule{{Kind: "GitRepository", Namespace: f.ns, Name: "infra"}}}}
		require.NoError(t, env.Client.Create(ctx, p))
		p.Status.SourceAllowList = p.Spec.SourceAllowList
		require.NoError(t, env.Client.Status().Update(ctx, p))
		member := func(ws *magosv1.Workspace) { ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "team"} }

		ws := f.newWorkspace("unlisted", other, "secret-infra", member)
		job := f.newJob(ws, "unlisted-plan-1", magosv1.RunPlan, theirs)
		f.record(ws, job, nil)
		code, body := f.fetchFrom(allowCross, f.newPod(job, ""))
		assert.Equal(t, http.StatusForbidden, code, "not in the allow-list: %s", body)

		ws = f.newWorkspace("listed", "", "infra", member)
		job = f.newJob(ws, "listed-plan-1", magosv1.RunPlan, own)
		f.record(ws, job, nil)
		code, body = f.fetchFrom(allowCross, f.newPod(job, ""))
		require.Equal(t, http.StatusOK, code, "in the allow-list: %s", body)
		assert.Equal(t, own.Digest, sha256Digest(body))

		ws = f.newWorkspace("no-project", "", "infra", func(ws *magosv1.Workspace) { ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "missing"} })
		job = f.newJob(ws, "no-project-plan-1", magosv1.RunPlan, own)
		f.record(ws, job, nil)
		code, body = f.fetchFrom(allowCross, f.newPod(job, ""))
		assert.Equal(t, http.StatusForbidden, code, "a Project that does not exist allows nothing: %s", body)
	})
}
