package ops

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// Scheme knows the Magos and core kinds.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(magosv1.AddToScheme(s))
	return s
}()

// Target is the object an operation acts on: its namespace and name, and
// the client (with the user's credentials) that reads and writes it.
type Target struct {
	Client client.WithWatch
	Key    client.ObjectKey
}

// NewTarget is the object name in namespace ns, through c.
func NewTarget(c client.WithWatch, ns, name string) *Target {
	return &Target{Client: c, Key: client.ObjectKey{Namespace: ns, Name: name}}
}

// Get reads the object into obj; a missing one is a NotFound error that
// names it and its namespace.
func (t *Target) Get(ctx context.Context, obj client.Object) error {
	err := t.Client.Get(ctx, t.Key, obj)
	if apierrors.IsNotFound(err) {
		kind := "object"
		if gvk, e := apiutil.GVKForObject(obj, Scheme); e == nil {
			kind = gvk.Kind
		}
		return failure.NotFound("%s %q not found in namespace %q (list them with: kubectl magos get %ss -n %s)",
			kind, t.Key.Name, t.Key.Namespace, strings.ToLower(kind), t.Key.Namespace)
	}
	return err
}

// ReadWorkspace reads the target as a Workspace.
func (t *Target) ReadWorkspace(ctx context.Context) (*magosv1.Workspace, error) {
	ws := &magosv1.Workspace{}
	return ws, t.Get(ctx, ws)
}

// Update reads the object, lets change edit it and patches what changed,
// guarded by its resourceVersion: a change in between, even to status, is
// a conflict, so change decides again on what the object is now.
func (t *Target) Update(ctx context.Context, obj client.Object, change func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := t.Get(ctx, obj); err != nil {
			return err
		}
		before := obj.DeepCopyObject().(client.Object)
		if err := change(); err != nil {
			return err
		}
		return t.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}

// StalledError is a failure naming the reason and Ready message of a
// Workspace whose Stalled condition is True for its current generation,
// else nil.
func StalledError(ws *magosv1.Workspace) error {
	c := meta.FindStatusCondition(ws.Status.Conditions, magosv1.StalledCondition)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration < ws.Generation {
		return nil
	}
	return failure.Failed("Workspace %s is stalled (%s): %s", ws.Name, c.Reason, view.ReadyMessage(ws.Status.Conditions))
}

// setAnnotation sets annotation key to value on the object.
func setAnnotation(obj client.Object, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}

// clientKey is the key of object name in namespace.
func clientKey(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name}
}
