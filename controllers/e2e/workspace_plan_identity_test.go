package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestFinishedPlanIdentityIsRevoked: a plan runs config code with the plan
// identity, which can mint tokens for itself. Once the controller has read
// the plan's result, the plan ServiceAccount is deleted, so a token minted
// during the plan no longer authenticates while the plan waits for
// approval; the approved apply runs with its own identity, and the next
// plan has a plan identity again.
func TestFinishedPlanIdentityIsRevoked(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	dir := copyConfig(t, "hello")
	rev := s.gitRepository("infra", dir)
	s.newWorkspace("gated", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	planSA := magosv1.PlanRunnerServiceAccountName("gated")

	// What config code holding the plan identity could do: mint a token.
	var token string
	require.Eventually(t, func() bool {
		tr := &authenticationv1.TokenRequest{}
		if err := env.Client.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: planSA}}, tr); err != nil {
			return false
		}
		token = tr.Status.Token
		return token != ""
	}, time.Minute, 100*time.Millisecond, "the plan identity exists while the plan runs")
	require.True(t, authenticated(t, token), "the token authenticates while the plan identity exists")

	ws := s.waitWorkspace("gated", 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan != nil
	})
	assert.True(t, apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: planSA}, &corev1.ServiceAccount{})),
		"the plan ServiceAccount is gone once the plan's result is read")
	// The apiserver caches a token's authentication for up to 10 s.
	assert.Eventually(t, func() bool { return !authenticated(t, token) }, 30*time.Second, time.Second,
		"a token minted during the plan no longer authenticates")

	approve(t, s.ns, "gated", ws.Status.Plan.ID)
	s.waitWorkspace("gated", 3*time.Minute, "applies with the apply identity", appliedRevision(rev))

	editConfig(t, dir, `default = "hello"`, `default = "hello again"`)
	next := s.publish("infra", dir)
	s.waitWorkspace("gated", 3*time.Minute, "plans the next revision with a plan identity again", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan != nil && ws.Status.Plan.Revision == next
	})
}

// authenticated says whether the apiserver accepts token.
func authenticated(t *testing.T, token string) bool {
	t.Helper()
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	require.NoError(t, env.Client.Create(context.Background(), review))
	return review.Status.Authenticated
}
