package workspace

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/controllers/internal/approvalrules"
)

// countingReader counts the Secrets read through it.
type countingReader struct {
	client.Reader
	reads atomic.Int64
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		c.reads.Add(1)
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// fakeSecrets writes planstore's Secrets into a fake client.
type fakeSecrets struct {
	c  client.Client
	ns string
}

func (s fakeSecrets) Get(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	return sec, s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, sec)
}

func (s fakeSecrets) Update(ctx context.Context, sec *corev1.Secret, _ metav1.UpdateOptions) (*corev1.Secret, error) {
	sec.Namespace = s.ns
	return sec, s.c.Update(ctx, sec)
}

// storedPlan stores a plan of ws changing the named terraform_data
// resources, in a fake client, and returns the client and the plan's
// status as the controller records it.
func storedPlan(t *testing.T, ws *magosv1.Workspace, id string, names ...string) (client.Client, *magosv1.PlanStatus) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	owner := planstore.WorkspaceOwner(ws.Name, string(ws.UID))
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	for i := range 2 {
		chunk := planstore.EmptyChunk(ws.Name, i, owner)
		chunk.Namespace = ws.Namespace
		require.NoError(t, c.Create(context.Background(), chunk))
	}
	var changes []string
	for _, n := range names {
		changes = append(changes, fmt.Sprintf(`{"address":"terraform_data.%s","mode":"managed","type":"terraform_data","name":%q,"change":{"actions":["create"]}}`, n, n))
	}
	json := fmt.Appendf(nil, `{"format_version":"1.2","resource_changes":[%s]}`, strings.Join(changes, ","))
	meta, err := planstore.Store(context.Background(), fakeSecrets{c: c, ns: ws.Namespace}, planstore.Input{
		Workspace: ws.Name, Owner: owner, ID: id, JSON: json, Binary: []byte("binary plan"),
	})
	require.NoError(t, err)
	return c, &magosv1.PlanStatus{ID: id, Digest: meta.Digest, BundleDigest: meta.SHA256, Add: int32(len(names)), HasChanges: true}
}

// TestApprovalRulesReadTheStoredPlanOncePerBundle: a rule naming
// plan.resources needs the stored plan JSON; reviewing the same plan again
// (every reconcile while it awaits approval) uses what the first review
// read, keyed by the bundle digest, and reads no Secret.
func TestApprovalRulesReadTheStoredPlanOncePerBundle(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", UID: "0d6c7f34-6f4e-4c1b-9a55-1c0c2a3f7e10"}}
	c, plan := storedPlan(t, ws, "plan-1", "protected", "other")
	reader := &countingReader{Reader: c}
	r := &Reconciler{Client: c, APIReader: reader}
	rules, err := approvalrules.Compile([]magosv1.ApprovalRule{
		{Name: "protected", When: "plan.resources.exists(r, r.name == 'protected')", Approvals: ptr.To(int32(2))},
		{Name: "rest"},
	}, "spec.approvalRules")
	require.NoError(t, err)
	s := settings{ApprovalRules: rules}
	now := time.Now()

	first, err := r.reviewOf(context.Background(), ws, s, plan, now)
	require.NoError(t, err)
	assert.Equal(t, "protected", first.Rule, "the rule over the stored plan's resources")
	read := reader.reads.Load()
	require.Positive(t, read, "the first review reads the stored plan")

	for range 3 {
		again, err := r.reviewOf(context.Background(), ws, s, plan, now)
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
	assert.Equal(t, read, reader.reads.Load(), "later reviews of the same bundle read nothing")

	other := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "team-a", UID: "5b1e0f1c-93a2-4c44-8d0f-3f0d3c1b2a77"}}
	c2, plan2 := storedPlan(t, other, "plan-2", "other")
	reader2 := &countingReader{Reader: c2}
	r2 := &Reconciler{Client: c2, APIReader: reader2}
	rv, err := r2.reviewOf(context.Background(), other, s, plan2, now)
	require.NoError(t, err)
	assert.Equal(t, "rest", rv.Rule, "another bundle is read, not taken for the first")
	assert.Positive(t, reader2.reads.Load())
}
