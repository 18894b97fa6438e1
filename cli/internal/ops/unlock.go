package ops

import (
	"context"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
)

// StuckLock is the state lock the target Workspace shows in status.lock;
// refused when it shows none.
func StuckLock(ctx context.Context, t *Target) (*magosv1.LockStatus, error) {
	ws, err := t.ReadWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	if ws.Status.Lock == nil {
		return nil, failure.Refused("Workspace %s shows no stuck state lock (status.lock is empty): nothing to unlock", t.Key.Name)
	}
	return ws.Status.Lock, nil
}

// Unlock asks the controller to release the target Workspace's state
// lock held by holder (the unlock annotation); refused when the lock
// changed since it was read.
func Unlock(ctx context.Context, t *Target, holder string) error {
	ws := &magosv1.Workspace{}
	return t.Update(ctx, ws, func() error {
		if ws.Status.Lock == nil || ws.Status.Lock.Holder != holder {
			return failure.Refused("the lock of Workspace %s changed while you confirmed; run unlock again", t.Key.Name)
		}
		setAnnotation(ws, magosv1.UnlockAnnotation, holder)
		return nil
	})
}
