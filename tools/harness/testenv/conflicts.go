package testenv

import (
	"context"
	"errors"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// ConflictingClient is a client whose status patches fail with a conflict
// while Conflicts is positive, as a patch that lost an optimistic-lock race
// does; each failed patch counts Conflicts down. Everything else goes to
// the wrapped client.
type ConflictingClient struct {
	client.Client
	Conflicts atomic.Int32
}

// Status returns the status writer that loses patches.
func (c *ConflictingClient) Status() client.SubResourceWriter {
	return &conflictingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type conflictingStatus struct {
	client.SubResourceWriter
	c *ConflictingClient
}

func (w *conflictingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if w.c.Conflicts.Add(-1) >= 0 {
		return apierrors.NewConflict(magosv1.GroupVersion.WithResource("workspaces").GroupResource(), obj.GetName(),
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}
