package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A Workspace author must not hand their runner another Workspace's state,
// plans or outputs through a variable: the kubelet reads valueFrom with
// its own identity, so the runner's Role does not stop it. Admission
// refuses the storage names; a Secret Magos keeps for a Workspace (found
// by its labels) is refused at reconcile unless it is the outputs Secret
// of a dependency, before any Job exists.
func TestWorkspaceCannotReadAnotherWorkspacesStorage(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("victim", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", Value: ptr.To("from the victim")}}
	})
	s.waitWorkspace("victim", 3*time.Minute, "applies", appliedRevision(rev))

	t.Run("admission refuses storage names", func(t *testing.T) {
		state := []string{magosv1.StateSecretName("victim"), magosv1.ErroredStateSecretName("victim")}
		for _, name := range state {
			ws := &magosv1.Workspace{
				ObjectMeta: metav1.ObjectMeta{Name: "thief", Namespace: s.ns},
				Spec: magosv1.WorkspaceSpec{
					SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
					Vars:      []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey(name, magosv1.StateKey)}},
				},
			}
			err := env.Client.Create(ctx, ws)
			require.True(t, apierrors.IsInvalid(err), "a Workspace variable from %s must be refused, got %v", name, err)
			assert.ErrorContains(t, err, "must not name a state or plan Secret")

			for _, spec := range []magosv1.VariableSetSpec{
				{Variables: []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey(name, magosv1.StateKey)}}},
				{Env: []magosv1.EnvEntry{{Name: "STOLEN", ValueFrom: secretKey(name, magosv1.StateKey)}}},
			} {
				err := env.Client.Create(ctx, &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "thief", Namespace: s.ns}, Spec: spec})
				require.True(t, apierrors.IsInvalid(err), "a VariableSet reading %s must be refused, got %v", name, err)
				assert.ErrorContains(t, err, "must not name a state or plan Secret")
			}
		}
		for _, name := range append(state, magosv1.PlanSecretName("victim", 0), magosv1.PlanSecretName("victim", 100)) {
			err := env.Client.Create(ctx, &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "thief", Namespace: s.ns},
				Spec: magosv1.VariableSetSpec{From: []magosv1.WholeObjectSource{{SecretRef: &magosv1.OptionalObjectReference{Name: name}}}}})
			require.True(t, apierrors.IsInvalid(err), "a VariableSet reading all of %s must be refused, got %v", name, err)
			assert.ErrorContains(t, err, "must not name a state or plan Secret")
		}
	})

	t.Run("reconcile refuses another Workspace's outputs unless it is a dependency", func(t *testing.T) {
		require.NoError(t, env.Client.Create(ctx, &magosv1.VariableSet{
			ObjectMeta: metav1.ObjectMeta{Name: "victim-all", Namespace: s.ns},
			Spec:       magosv1.VariableSetSpec{From: []magosv1.WholeObjectSource{{SecretRef: &magosv1.OptionalObjectReference{Name: "victim-outputs"}}}},
		}))
		s.newWorkspace("inline-reader", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey("victim-outputs", "message")}}
		})
		s.newWorkspace("set-reader", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "victim-all"}}
		})
		s.newWorkspace("own-reader", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey("own-reader-outputs", "message")}}
		})
		s.newWorkspace("plan-reader", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey(magosv1.PlanSecretName("victim", 0), magosv1.PlanChunkKey)}}
		})
		s.requireRefused("plan-reader", magosv1.ReasonStorageReferenceNotAllowed, "Secret "+magosv1.PlanSecretName("victim", 0))
		s.requireRefused("inline-reader", magosv1.ReasonStorageReferenceNotAllowed, "Secret victim-outputs")
		s.requireRefused("set-reader", magosv1.ReasonStorageReferenceNotAllowed, "Secret victim-outputs")
		s.requireRefused("own-reader", magosv1.ReasonStorageReferenceNotAllowed, "Secret own-reader-outputs, which Magos keeps for this Workspace")

		// The same reference from a dependent is output chaining, once the
		// producer consents: dependsOn alone does not open its outputs.
		s.newWorkspace("dependent", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "victim"}}
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey("victim-outputs", "message")}}
		})
		s.requireRefused("dependent", magosv1.ReasonOutputReadNotAllowed, `add dependent (or "*") to its spec.outputs.readers`)
		s.newWorkspace("ref-dependent", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "victim"}}
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: outputOf("victim", "message")}}
		})
		s.requireRefused("ref-dependent", magosv1.ReasonOutputReadNotAllowed, "dependency victim does not let this Workspace read its outputs")

		victim := s.getWorkspace("victim")
		patch := client.MergeFrom(victim.DeepCopy())
		victim.Spec.Outputs.Readers = []string{"dependent", "ref-dependent"}
		require.NoError(t, env.Client.Patch(ctx, victim, patch))
		s.waitWorkspace("dependent", 3*time.Minute, "applies once the producer lists it as a reader", appliedRevision(rev))
		s.waitWorkspace("ref-dependent", 3*time.Minute, "applies once the producer lists it as a reader", appliedRevision(rev))
		assert.Equal(t, "from the victim", outputsOf(t, s.ns, "dependent")["message"], "the dependency's output reached the dependent")
	})
}
