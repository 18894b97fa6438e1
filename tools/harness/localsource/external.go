package localsource

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PublishExternal packages dir and makes it the artifact of the
// ExternalArtifact key, creating the object when it is missing, as a
// producer of ExternalArtifacts (Flux's source-watcher) does: served at
// externalartifact/<namespace>/<name>/, revision latest@<digest>, Ready
// True. It returns the revision.
func (s *Server) PublishExternal(ctx context.Context, key types.NamespacedName, dir string) (string, error) {
	data, _, err := s.pack(Source{Dir: dir}, "latest")
	if err != nil {
		return "", fmt.Errorf("localsource: %w", err)
	}
	digest := s.digest(data)
	art, err := s.serve(sourcev1.ExternalArtifactKind, key, data, "latest@"+digest, digest)
	if err != nil {
		return "", err
	}
	u := newSourceObject(sourcev1.ExternalArtifactKind)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	if err := s.client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("localsource: ExternalArtifact %s: %w", key, err)
	}
	if err := s.setExternalArtifact(ctx, key, art); err != nil {
		return "", fmt.Errorf("localsource: updating ExternalArtifact %s: %w", key, err)
	}
	s.opts.Logger.Info("Published an artifact", "externalArtifact", key, "revision", art.Revision, "digest", digest, "size", len(data))
	return art.Revision, nil
}

// setExternalArtifact records the artifact and Ready True in the status.
func (s *Server) setExternalArtifact(ctx context.Context, key types.NamespacedName, art *meta.Artifact) error {
	return updateStatus(ctx, s.client, key, sourcev1.ExternalArtifactKind, func(ea *sourcev1.ExternalArtifact) any {
		ea.Status.Artifact = art
		apimeta.SetStatusCondition(&ea.Status.Conditions, metav1.Condition{
			Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
			Message: fmt.Sprintf("reconciliation succeeded, generated revision %s", art.Revision), ObservedGeneration: ea.Generation,
		})
		return &ea.Status
	})
}
