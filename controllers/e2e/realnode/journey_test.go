package realnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// journey drives the Workspaces of one namespace through the states the
// dashboards and alerts show: release applies reading a VariableSet,
// elsewhere is refused (Stalled), broken fails to plan, denied's plan is
// denied by a policy, locked finds its state lock held, awaiting waits for
// a Manual approval, drifting re-plans
// every 30 s and finds drift, and a Rollout applies gated-first, waits
// for a promotion of its second stage, then applies gated-second.
type journey struct {
	ns, rev    string
	workspaces []string
}

// startJourney creates every object of the journey and returns once the
// Rollout's second stage waits for its promotion.
func startJourney(t *testing.T, ns string) *journey {
	t.Helper()
	ctx := context.Background()
	src := newGitSource(t, ns)
	j := &journey{ns: ns}
	release := t.TempDir()
	writeRelease(t, release, "metrics")
	j.rev = src.Publish(ctx, "infra", release)
	src.Publish(ctx, "broken", configDir(t, `resource "terraform_data" "unfinished" {`))
	src.Publish(ctx, "drifting", configDir(t, `resource "terraform_data" "clock" { input = timestamp() }`))

	require.NoError(t, k8s.Create(ctx, &magosv1.VariableSet{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns},
		Spec:       magosv1.VariableSetSpec{Env: []magosv1.EnvEntry{{Name: "RELEASE_NOTE", Value: ptr.To("journey")}}},
	}))
	deny := denyAllPolicy(t, ns)
	require.NoError(t, k8s.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: ns}}))
	require.NoError(t, k8s.Create(ctx, &magosv1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
		Spec: magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "staged"}, Stages: []magosv1.Stage{
			{Name: "first", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"stage": "first"}}},
			{Name: "second", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"stage": "second"}}, Promotion: magosv1.PromotionManual},
		}},
	}))

	workspace := func(name, source string, mutate func(*magosv1.Workspace)) {
		ws := &magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: source}},
		}
		if mutate != nil {
			mutate(ws)
		}
		require.NoError(t, k8s.Create(ctx, ws))
		j.workspaces = append(j.workspaces, name)
	}
	workspace("release", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: "release-outputs"}
		ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "shared"}}
	})
	// A Workspace the guards refuse (a source in another namespace).
	workspace("elsewhere", "infra", func(ws *magosv1.Workspace) { ws.Spec.SourceRef.Namespace = fluxNamespace })
	workspace("broken", "broken", nil)
	workspace("denied", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Policy = &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchLabels: deny}}
	})
	workspace("locked", "infra", nil)
	workspace("awaiting", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	workspace("drifting", "drifting", func(ws *magosv1.Workspace) { ws.Spec.Interval = &metav1.Duration{Duration: 30 * time.Second} })
	for _, stage := range []string{"first", "second"} {
		workspace("gated-"+stage, "infra", func(ws *magosv1.Workspace) {
			ws.Labels = map[string]string{"stage": stage}
			ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "staged"}
		})
	}

	waitWorkspace(t, ns, "release", 5*time.Minute, "applies", applied(j.rev))
	j.leaveLockHeld(t, "locked")
	waitWorkspace(t, ns, "gated-first", 5*time.Minute, "applies in the first stage", applied(j.rev))
	j.waitStage(t, "second", magosv1.StageWaitingForPromotion)
	return j
}

// finish promotes the second stage and returns once it applied, and once
// drifting has found drift.
func (j *journey) finish(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ro := &magosv1.Rollout{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: "release"}, ro))
	patch := client.MergeFrom(ro.DeepCopy())
	ro.Spec.Promotions = append(ro.Spec.Promotions, magosv1.Promotion{Stage: "second", Revision: j.rev})
	require.NoError(t, k8s.Patch(ctx, ro, patch))
	waitWorkspace(t, j.ns, "gated-second", 5*time.Minute, "applies once promoted", applied(j.rev))
	j.waitStage(t, "second", magosv1.StageSucceeded)
	waitWorkspace(t, j.ns, "drifting", 5*time.Minute, "finds drift", func(ws *magosv1.Workspace) bool {
		return slices.ContainsFunc(ws.Status.History, func(r magosv1.RunStatus) bool { return r.Drift && r.Result == magosv1.ResultSucceeded })
	})
}

// leaveLockHeld makes Workspace name's state lock look as a run that
// died mid-apply leaves it (held, its holder gone) once the Workspace
// applied, then asks for a plan, which finds it held.
func (j *journey) leaveLockHeld(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	waitWorkspace(t, j.ns, name, 5*time.Minute, "applies", applied(j.rev))
	lease := &coordinationv1.Lease{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: magosv1.LockLeaseName(name)}, lease))
	now := metav1.NewMicroTime(time.Now())
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = ptr.To("a-run-that-is-gone"), ptr.To(int32(3600))
	lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
	require.NoError(t, k8s.Update(ctx, lease))
	ws := &magosv1.Workspace{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: name}, ws))
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Annotations = map[string]string{magosv1.ReconcileRequestAnnotation: now.Format(time.RFC3339Nano)}
	require.NoError(t, k8s.Patch(ctx, ws, patch))
	waitWorkspace(t, j.ns, name, 3*time.Minute, "finds its state lock held", func(ws *magosv1.Workspace) bool {
		return ws.Status.Lock != nil && ws.Status.Lock.Holder == "a-run-that-is-gone"
	})
}

// waitStage waits until the Rollout's stage has phase for the journey's
// revision.
func (j *journey) waitStage(t *testing.T, stage string, phase magosv1.StagePhase) {
	t.Helper()
	require.Eventually(t, func() bool {
		ro := &magosv1.Rollout{}
		require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: j.ns, Name: "release"}, ro))
		for _, st := range ro.Status.Stages {
			if st.Name == stage {
				return ro.Status.Revision == j.rev && st.Phase == phase
			}
		}
		return false
	}, 5*time.Minute, time.Second, "stage %s of Rollout release is %s", stage, phase)
}

// configDir is a directory holding main.tf with content.
func configDir(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(content+"\n"), 0o644))
	return dir
}

// denyAllPolicy creates a ValidatingPolicy that denies every plan, for
// the Workspaces selecting the labels it returns.
func denyAllPolicy(t testing.TB, ns string) map[string]string {
	return everyPlanPolicy(t, "deny", ns, "false", "the journey denies every plan")
}

// everyPlanPolicy creates a ValidatingPolicy named verb-ns whose one
// validation is expression ("true" passes every plan, "false" denies it
// with message), for the Workspaces selecting the labels it returns.
func everyPlanPolicy(t testing.TB, verb, ns, expression, message string) map[string]string {
	t.Helper()
	labels := map[string]string{"policy.magos.dev/" + verb: ns}
	doc := fmt.Sprintf(`
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: %s-%s
  labels: {policy.magos.dev/%s: %s}
spec:
  evaluation: {mode: JSON}
  validationActions: [Deny]
  validations:
    - expression: %q
      message: %s
`, verb, ns, verb, ns, expression, message)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	require.NoError(t, k8s.Create(context.Background(), u))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), u) })
	return labels
}
