package e2e

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// Config code runs with the runner's identity. If that identity could
// create Secrets, it could mint a token for any ServiceAccount of the
// namespace (a kubernetes.io/service-account-token Secret the token
// controller fills in) and act as it; with create on Leases it could squat
// other Workspaces' locks. The controller creates what the runner writes,
// so the runner creates nothing and still plans and applies.
func TestRunnerCannotCreateSecretsOrLeases(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("alpha", "infra", nil)
	s.waitWorkspace("alpha", 3*time.Minute, "applies", appliedRevision(rev))
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "flux-tenant", Namespace: s.ns}}))

	alpha := s.runnerClient("alpha")
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "alpha-plan-00-token", Namespace: s.ns,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "flux-tenant"}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	err := alpha.Create(ctx, token)
	assert.True(t, apierrors.IsForbidden(err), "minting a token for another ServiceAccount must be Forbidden, got %v", err)
	err = alpha.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anything", Namespace: s.ns}})
	assert.True(t, apierrors.IsForbidden(err), "creating any Secret must be Forbidden, got %v", err)
	err = alpha.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: magosv1.LockLeaseName("beta"), Namespace: s.ns}})
	assert.True(t, apierrors.IsForbidden(err), "creating a Lease must be Forbidden, got %v", err)

	// What the runner writes was created for it, owned by the Workspace
	// (the state Secret excepted: state outlives its Workspace).
	ws := &magosv1.Workspace{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "alpha"}, ws))
	for _, name := range []string{magosv1.PlanSecretName("alpha", 0), "alpha-outputs"} {
		var sec corev1.Secret
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, &sec))
		assert.True(t, metav1.IsControlledBy(&sec, ws), "Secret %s is owned by the Workspace", name)
	}
	var state corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("alpha")}, &state))
	assert.Empty(t, state.OwnerReferences)
	assert.NotEmpty(t, state.Data[magosv1.StateKey], "the runner wrote the state")

	// A Role made by an earlier version granted create and delete, and
	// had no mark of the rules this version writes; the controller drops
	// them without waiting for the next run.
	roleKey := client.ObjectKey{Namespace: s.ns, Name: magosv1.RunnerServiceAccountName("alpha")}
	var role rbacv1.Role
	require.NoError(t, env.Client.Get(ctx, roleKey, &role))
	for _, rule := range role.Rules {
		assert.ElementsMatch(t, []string{"get", "update"}, rule.Verbs)
		assert.NotEmpty(t, rule.ResourceNames)
	}
	require.Contains(t, role.Annotations, "magos.dev/runner-rules", "this version marks the rules it wrote")
	delete(role.Annotations, "magos.dev/runner-rules")
	role.Rules[0].Verbs = append(role.Rules[0].Verbs, "delete")
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}})
	require.NoError(t, env.Client.Update(ctx, &role))
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Annotations = map[string]string{"example.com/poke": "1"}
	require.NoError(t, env.Client.Patch(ctx, ws, patch))
	testenv.WaitFor(t, env.Client, roleKey, &rbacv1.Role{}, time.Minute, 250*time.Millisecond, func(r *rbacv1.Role) bool {
		return len(r.Rules) == 2 && !slices.Contains(r.Rules[0].Verbs, "delete") && r.Annotations["magos.dev/runner-rules"] != ""
	}, "the old grants are dropped, once")
}

// spec.outputs.secretName names a Secret the runner may write. A Workspace
// author must not get another Workspace's state, plans or outputs, or any
// other Secret, through it: state and plan names are refused at admission,
// and any existing Secret Magos did not create for this Workspace stalls it
// before it enters the runner's Role.
func TestOutputsSecretCannotNameAnotherWorkspacesSecrets(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("victim", "infra", nil)
	s.waitWorkspace("victim", 3*time.Minute, "applies", appliedRevision(rev))
	stateKey := client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("victim")}
	var before corev1.Secret
	require.NoError(t, env.Client.Get(ctx, stateKey, &before))
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-creds", Namespace: s.ns},
		StringData: map[string]string{"password": "keep me"},
	}))

	for _, name := range []string{magosv1.StateSecretName("victim"), magosv1.PlanSecretName("victim", 0), magosv1.PlanSecretName("victim", 100)} {
		ws := &magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: "attacker", Namespace: s.ns},
			Spec: magosv1.WorkspaceSpec{
				SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
				Outputs:   &magosv1.OutputsSpec{SecretName: name},
			},
		}
		err := env.Client.Create(ctx, ws)
		require.True(t, apierrors.IsInvalid(err), "outputs.secretName %s must be refused at admission, got %v", name, err)
		assert.ErrorContains(t, err, "secretName must not name")
	}

	for _, name := range []string{"victim-outputs", "db-creds"} {
		attacker := "attacker-" + name
		s.newWorkspace(attacker, "infra", func(ws *magosv1.Workspace) { ws.Spec.Outputs.SecretName = name })
		ws := s.waitWorkspace(attacker, time.Minute, "stalls", func(ws *magosv1.Workspace) bool {
			return conditions.IsTrue(ws, magosv1.StalledCondition)
		})
		stalled := conditions.Get(ws, magosv1.StalledCondition)
		assert.Equal(t, magosv1.ReasonStorageConflict, stalled.Reason)
		assert.Contains(t, stalled.Message, "Secret "+name+" already exists")
		assert.Empty(t, ws.Status.History, "no run started")

		var role rbacv1.Role
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.RunnerServiceAccountName(attacker)}, &role)
		if err == nil {
			for _, rule := range role.Rules {
				assert.NotContains(t, rule.ResourceNames, name, "the Secret never enters the runner's Role")
			}
		} else {
			require.True(t, apierrors.IsNotFound(err), "reading the Role: %v", err)
		}
	}

	var after corev1.Secret
	require.NoError(t, env.Client.Get(ctx, stateKey, &after))
	assert.Equal(t, before.Data, after.Data, "the victim's state is intact")
	var creds corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "db-creds"}, &creds))
	assert.Equal(t, "keep me", string(creds.Data["password"]))
	assert.Empty(t, creds.OwnerReferences)
}

// The runner cannot create plan Secrets, so a plan bigger than the chunks
// reserved by default comes back asking for more; the controller reserves
// them and plans again, and the plan is stored whole.
func TestLargePlanGrowsItsReservedStorage(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "bigplan"))
	s.newWorkspace("big", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	ws := s.waitWorkspace("big", 5*time.Minute, "plans and awaits approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	require.NotEmpty(t, ws.Status.History)
	assert.Equal(t, magosv1.ReasonPlanStorageExhausted, ws.Status.History[len(ws.Status.History)-1].Reason,
		"the first plan found too few plan Secrets")

	var chunk0 corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.PlanSecretName("big", 0)}, &chunk0))
	assert.Equal(t, ws.Status.Plan.ID, chunk0.Annotations[magosv1.PlanIDAnnotation])
	chunks, err := strconv.Atoi(chunk0.Annotations[magosv1.PlanChunksAnnotation])
	require.NoError(t, err)
	assert.Greater(t, chunks, magosv1.DefaultPlanChunks)
	var role rbacv1.Role
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.RunnerServiceAccountName("big")}, &role))
	assert.Contains(t, role.Rules[0].ResourceNames, magosv1.PlanSecretName("big", chunks-1), "the Role names the grown chunks")
}

// A plan may not take more plan Secrets than --max-plan-chunks allows one
// Workspace: the big plan fails with PlanStorageLimitExceeded and no plan
// Secret past the bound is created.
func TestPlanStorageIsBounded(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.MaxPlanChunks = magosv1.DefaultPlanChunks }})
	s.gitRepository("infra", copyConfig(t, "bigplan"))
	s.newWorkspace("big", "infra", nil)
	ws := s.waitWorkspace("big", 5*time.Minute, "fails its plan", func(ws *magosv1.Workspace) bool {
		return len(ws.Status.History) > 0 && ws.Status.History[0].Reason == magosv1.ReasonPlanStorageLimitExceeded
	})
	assert.Contains(t, ws.Status.History[0].Message, "this cluster allows 4 per Workspace (--max-plan-chunks)")
	assert.Nil(t, ws.Status.Plan, "nothing was stored")
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.PlanSecretName("big", magosv1.DefaultPlanChunks)}, &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "no plan Secret past the bound: %v", err)
}

// TestStateIsTakenOverOnlyByUID: the state Secret outlives its Workspace
// and has no owner, so its labels alone do not make it a Workspace's. A
// labelled state Secret created before a Workspace's first run (by anyone
// who may write Secrets in the namespace), or left by a deleted Workspace
// of the same name, stalls the Workspace until someone adopts that very
// Secret by its UID; then the Workspace runs on it and it names the
// Workspace.
func TestStateIsTakenOverOnlyByUID(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	stateKey := client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("target")}
	planted := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: stateKey.Name, Labels: magosv1.StateSecretLabels("target")},
		Type:       corev1.SecretTypeOpaque,
	}
	require.NoError(t, env.Client.Create(ctx, planted))

	requireStalledOnState := func(want string, jobsBefore int) {
		t.Helper()
		ws := s.waitWorkspace("target", time.Minute, "stalls on a state Secret that is not its own", func(ws *magosv1.Workspace) bool {
			return conditions.IsTrue(ws, magosv1.StalledCondition)
		})
		stalled := conditions.Get(ws, magosv1.StalledCondition)
		assert.Equal(t, magosv1.ReasonStorageConflict, stalled.Reason)
		assert.Contains(t, stalled.Message, want)
		assert.Contains(t, stalled.Message, magosv1.AdoptStateAnnotation+"="+string(planted.UID), "the message says how to adopt it")
		assert.Equal(t, jobsBefore, planJobs(t, s.ns, "target"), "no run uses it")
	}
	s.newWorkspace("target", "infra", nil)
	requireStalledOnState("it names no Workspace UID and this Workspace has not run yet", 0)

	ws := s.workspace("target")
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Annotations = map[string]string{magosv1.AdoptStateAnnotation: string(planted.UID)}
	require.NoError(t, env.Client.Patch(ctx, ws, patch))
	s.waitWorkspace("target", 3*time.Minute, "applies on the state it adopted", appliedRevision(rev))
	var state corev1.Secret
	require.NoError(t, env.Client.Get(ctx, stateKey, &state))
	assert.Equal(t, planted.UID, state.UID, "the adopted Secret holds the state")
	assert.Equal(t, string(ws.UID), state.Annotations[magosv1.WorkspaceUIDAnnotation], "and names the Workspace")
	assert.Contains(t, stateOf(t, s.ns, stateKey.Name), `"terraform_data"`)

	// A new Workspace of the same name does not inherit it.
	require.NoError(t, env.Client.Delete(ctx, ws))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(ws), &magosv1.Workspace{}))
	}, time.Minute, 250*time.Millisecond, "the Workspace is deleted (its state stays)")
	// (No garbage collector here: the earlier Workspace's Jobs remain.)
	jobs := planJobs(t, s.ns, "target")
	s.newWorkspace("target", "infra", nil)
	requireStalledOnState("was created for an earlier Workspace target (UID "+string(ws.UID)+")", jobs)
}
