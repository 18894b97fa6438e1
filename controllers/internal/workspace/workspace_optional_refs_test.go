package workspace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// An optional Secret reference is not waited for, but it is no less a
// read: the kubelet resolves it when the run's container starts, after
// the controller's check. So a run is handed only the optional references
// whose Secret the check saw; one that did not exist then is left out of
// the Job, and a Secret created under that name later (another
// Workspace's storage among them) is checked before a run reads it.
func TestOptionalSecretReferencesAreCheckedBeforeTheRunReadsThem(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	optional := func(secret string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "message", Optional: ptr.To(true)}
	}
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "present", Namespace: f.ns},
		Data: map[string][]byte{"message": []byte("hello")}}))
	f.newWorkspace("reader", func(ws *magosv1.Workspace) {
		ws.Spec.Vars = []magosv1.Variable{
			{Name: "later", ValueFrom: &magosv1.VariableSource{SecretKeyRef: optional("later-outputs")}},
			{Name: "present", ValueFrom: &magosv1.VariableSource{SecretKeyRef: optional("present")}},
		}
		ws.Spec.Runner = &magosv1.RunnerSpec{Env: []magosv1.EnvEntry{
			{Name: "LATER_TOKEN", ValueFrom: &magosv1.VariableSource{SecretKeyRef: optional("later-creds")}},
		}}
	})

	job := waitJob(t, f.ns, "reader", magosv1.RunPlan)
	assert.Equal(t, []string{"present"}, jobSecretReads(job),
		"the Job reads only the optional Secret the check saw; the missing ones are left out, not handed to the kubelet unchecked")

	// The name turns out to be another Workspace's storage: the next
	// reconcile checks it like any Secret a run reads.
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "later-outputs", Namespace: f.ns, Labels: map[string]string{
			magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "victim"}},
		Data: map[string][]byte{"message": []byte("victim's output")},
	}))
	f.update("reader", func(ws *magosv1.Workspace) { ws.Spec.Vars[1].Sensitive = true })
	ws := f.waitWorkspace("reader", "refuses the Secret that appeared", func(ws *magosv1.Workspace) bool {
		return conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	stalled := conditions.Get(ws, magosv1.StalledCondition)
	assert.Equal(t, magosv1.ReasonStorageReferenceNotAllowed, stalled.Reason)
	assert.Contains(t, stalled.Message, "reads Secret later-outputs, which Magos keeps for Workspace victim")
}

// jobSecretReads are the Secrets the Job's containers read through env,
// in order, each once.
func jobSecretReads(job *batchv1.Job) []string {
	var names []string
	seen := map[string]bool{}
	for _, c := range append(job.Spec.Template.Spec.InitContainers, job.Spec.Template.Spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || seen[e.ValueFrom.SecretKeyRef.Name] {
				continue
			}
			seen[e.ValueFrom.SecretKeyRef.Name] = true
			names = append(names, e.ValueFrom.SecretKeyRef.Name)
		}
	}
	return names
}
