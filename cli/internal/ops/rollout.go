package ops

import (
	"context"
	"slices"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
)

// Promote adds to the target Rollout's spec.promotions the entry that
// admits stage for revision (default: the one rolled out), and returns it.
func Promote(ctx context.Context, t *Target, stage, revision string) (magosv1.Promotion, error) {
	ro := &magosv1.Rollout{}
	var p magosv1.Promotion
	err := t.Update(ctx, ro, func() error {
		var err error
		if p, err = promotion(ro, stage, revision); err != nil {
			return err
		}
		if !slices.Contains(ro.Spec.Promotions, p) {
			ro.Spec.Promotions = append(ro.Spec.Promotions, p)
		}
		return nil
	})
	return p, err
}

// promotion is the spec.promotions entry that admits stage for revision
// (default: the one rolled out); refused for a stage the Rollout lacks.
func promotion(ro *magosv1.Rollout, stage, revision string) (magosv1.Promotion, error) {
	names := make([]string, 0, len(ro.Spec.Stages))
	for _, s := range ro.Spec.Stages {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, stage) {
		return magosv1.Promotion{}, failure.Refused("Rollout %s has no stage %q; its stages are: %s", ro.Name, stage, strings.Join(names, ", "))
	}
	if revision == "" {
		revision = ro.Status.Revision
	}
	if revision == "" {
		return magosv1.Promotion{}, failure.Refused("Rollout %s has no revision yet (status.revision); pass --revision", ro.Name)
	}
	return magosv1.Promotion{Stage: stage, Revision: revision}, nil
}

// Abort stops the revision the target Rollout rolls out where it is (the
// abort annotation) and returns the Rollout as written.
func Abort(ctx context.Context, t *Target) (*magosv1.Rollout, error) {
	ro := &magosv1.Rollout{}
	err := t.Update(ctx, ro, func() error {
		if ro.Status.Revision == "" {
			return failure.Refused("Rollout %s rolls out no revision yet (status.revision is empty): nothing to abort", ro.Name)
		}
		setAnnotation(ro, magosv1.AbortAnnotation, ro.Status.Revision)
		return nil
	})
	return ro, err
}
