package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// The kubelet reads a run's Secrets with its own identity, whatever they
// are: a run must not be handed another identity's token, nor read a
// Secret whose name was free when the Workspace was written and that
// turns out, once created, to be another Workspace's storage.
func TestWorkspaceSecretReferencesAreCheckedBeforeTheRunReadsThem(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	noJob := func(name string) {
		t.Helper()
		var jobs batchv1.JobList
		require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: name}))
		assert.Empty(t, jobs.Items, "Workspace %s never ran", name)
	}

	t.Run("a ServiceAccount token is refused", func(t *testing.T) {
		require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "magos-runner-victim", Namespace: s.ns}}))
		require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "victim-token", Namespace: s.ns,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: "magos-runner-victim"}},
			Type: corev1.SecretTypeServiceAccountToken,
		}))
		s.newWorkspace("token-mounter", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{{Name: "tok", MountPath: "/srv/tok", Secret: &magosv1.SecretVolume{SecretName: "victim-token"}}}}
		})
		s.newWorkspace("token-reader", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey("victim-token", "token")}}
		})
		s.requireRefused("token-mounter", magosv1.ReasonServiceAccountTokenNotAllowed, "runner volume tok reads Secret victim-token, a token of ServiceAccount magos-runner-victim")
		s.requireRefused("token-reader", magosv1.ReasonServiceAccountTokenNotAllowed, "a token of ServiceAccount magos-runner-victim")
	})

	t.Run("a runner volume cannot be mounted over the token path", func(t *testing.T) {
		ws := &magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: "over-token", Namespace: s.ns},
			Spec: magosv1.WorkspaceSpec{
				SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
				Runner: &magosv1.RunnerSpec{Volumes: []magosv1.RunnerVolume{{Name: "tok", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
					Secret: &magosv1.SecretVolume{SecretName: "anything"}}}},
			},
		}
		err := env.Client.Create(ctx, ws)
		require.True(t, apierrors.IsInvalid(err), "got %v", err)
		assert.ErrorContains(t, err, "where Kubernetes mounts the runner's token")
	})

	t.Run("a missing Secret is waited for and checked once it exists", func(t *testing.T) {
		s.newWorkspace("early-reader", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey("later-outputs", "message")}}
		})
		ws := s.waitWorkspace("early-reader", time.Minute, "waits for the Secret", func(ws *magosv1.Workspace) bool {
			c := conditions.Get(ws, magosv1.ReconcilingCondition)
			return c != nil && c.Reason == magosv1.ReasonSecretMissing
		})
		assert.Contains(t, conditions.Get(ws, magosv1.ReconcilingCondition).Message, "reads Secret later-outputs, which does not exist")
		noJob("early-reader")

		// The Secret appears: another Workspace's outputs, which this one
		// does not depend on.
		require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "later-outputs", Namespace: s.ns, Labels: map[string]string{
				magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "victim"}},
			Data: map[string][]byte{"message": []byte("victim's output")},
		}))
		s.requireRefused("early-reader", magosv1.ReasonStorageReferenceNotAllowed, "Secret later-outputs, which Magos keeps for Workspace victim")
	})

	t.Run("a run whose container cannot be created fails at once", func(t *testing.T) {
		// The Secret exists, so the run starts; the key does not, so the
		// kubelet cannot create the container and would start it whenever
		// the key appears. The run fails instead of waiting for its deadline.
		require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "partial", Namespace: s.ns},
			Data: map[string][]byte{"other": []byte("x")}}))
		s.newWorkspace("keyless", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "greeting", ValueFrom: secretKey("partial", "message")}}
		})
		ws := s.waitWorkspace("keyless", time.Minute, "fails its run", func(ws *magosv1.Workspace) bool {
			return len(ws.Status.History) > 0 && ws.Status.History[0].Reason == magosv1.ReasonRunStartFailed
		})
		assert.Contains(t, ws.Status.History[0].Message, "cannot be created (CreateContainerConfigError)")
		assert.Contains(t, ws.Status.History[0].Message, "couldn't find key message in Secret")
		var jobs batchv1.JobList
		require.Eventually(t, func() bool {
			require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "keyless"}))
			return len(jobs.Items) == 0 || jobs.Items[0].DeletionTimestamp != nil
		}, 30*time.Second, 250*time.Millisecond, "the run's Job is deleted, no Pod left waiting")
	})
}
