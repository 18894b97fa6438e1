package command

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// target is the namespace and name of the object a command acts on.
type target struct {
	c   client.WithWatch
	key client.ObjectKey
}

// targetOf is the object named name in the namespace of the flags.
func targetOf(f *factory, name string) (*target, error) {
	c, err := f.client()
	if err != nil {
		return nil, err
	}
	ns, err := f.namespace()
	if err != nil {
		return nil, err
	}
	return &target{c: c, key: client.ObjectKey{Namespace: ns, Name: name}}, nil
}

// readWorkspace reads the Workspace name of the flags' namespace.
func readWorkspace(ctx context.Context, f *factory, name string) (*target, *magosv1.Workspace, error) {
	t, err := targetOf(f, name)
	if err != nil {
		return nil, nil, err
	}
	ws := &magosv1.Workspace{}
	return t, ws, t.get(ctx, ws)
}

// get reads the object into obj; a missing one is a NotFound error that
// names it and its namespace.
func (t *target) get(ctx context.Context, obj client.Object) error {
	err := t.c.Get(ctx, t.key, obj)
	if apierrors.IsNotFound(err) {
		kind := "object"
		if gvk, e := apiutil.GVKForObject(obj, scheme); e == nil {
			kind = gvk.Kind
		}
		return newError(ExitFailure, ReasonNotFound, "%s %q not found in namespace %q (list them with: kubectl magos get %ss -n %s)",
			kind, t.key.Name, t.key.Namespace, strings.ToLower(kind), t.key.Namespace)
	}
	return err
}

// update reads the object, lets change edit it and patches what changed,
// guarded by its resourceVersion: a change in between, even to status, is
// a conflict, so change decides again on what the object is now.
func (t *target) update(ctx context.Context, obj client.Object, change func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := t.get(ctx, obj); err != nil {
			return err
		}
		before := obj.DeepCopyObject().(client.Object)
		if err := change(); err != nil {
			return err
		}
		return t.c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}

// stalledError is a failure naming the reason and Ready message of a
// Workspace whose Stalled condition is True for its current generation,
// else nil.
func stalledError(ws *magosv1.Workspace) error {
	c := meta.FindStatusCondition(ws.Status.Conditions, magosv1.StalledCondition)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration < ws.Generation {
		return nil
	}
	return failed("Workspace %s is stalled (%s): %s", ws.Name, c.Reason, readyMessage(ws.Status.Conditions))
}
