package planstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

var (
	// ErrNotFound means no plan is stored for the Workspace.
	ErrNotFound = errors.New("no stored plan")
	// ErrCorrupt means the stored plan is incomplete, inconsistent or does
	// not match its checksums (for example while a new plan is being written
	// over it).
	ErrCorrupt = errors.New("stored plan is corrupt")
	// ErrTooLarge means the plan needs more than MaxPlanChunks Secrets to
	// store, or unpacks to more than the reader accepts.
	ErrTooLarge = errors.New("plan is too large")
	// ErrNotReserved means a chunk Secret the plan needs does not exist;
	// the error is a *NotReservedError.
	ErrNotReserved = errors.New("plan Secrets not reserved")
	// ErrNoText means the stored plan has no readable rendering (plan.txt):
	// it was stored without one, by a runner that did not write it or when
	// the engine could not render it.
	ErrNoText = errors.New("stored plan has no readable rendering")
)

// MaxTextBytes is the most plan.txt a bundle may hold: Store refuses more,
// the runner cuts its rendering to fit, and it is the bound a reader
// passes to LoadText unless it wants less.
const MaxTextBytes = 1 << 20

// NotReservedError says how many chunk Secrets a plan needs when fewer are
// reserved. The runner may not create Secrets; the workspace-controller
// reserves them.
type NotReservedError struct {
	// Chunks is how many chunk Secrets the plan needs.
	Chunks int
	// Name is the missing Secret, when known.
	Name string
}

func (e *NotReservedError) Error() string {
	what := "they are"
	if e.Name != "" {
		what = "plan Secret " + e.Name + " is"
	}
	return fmt.Sprintf("the plan needs %d plan Secrets and %s not reserved; the workspace-controller reserves them before a plan (the runner may not create Secrets)", e.Chunks, what)
}

// Is makes errors.Is(err, ErrNotReserved) true.
func (e *NotReservedError) Is(target error) bool { return target == ErrNotReserved }

// Getter reads one Secret by name in the plan's namespace. client-go's
// SecretInterface (clientset.CoreV1().Secrets(namespace)) satisfies it; wrap
// other clients with GetterFunc.
type Getter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
}

// GetterFunc adapts a function to Getter, e.g. for a controller-runtime
// client (use an uncached reader, so that Secrets are not cached
// cluster-wide):
//
//	planstore.GetterFunc(func(ctx context.Context, name string) (*corev1.Secret, error) {
//		s := &corev1.Secret{}
//		err := apiReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
//		return s, err
//	})
//
// The function must return an error for which apierrors.IsNotFound is true
// when the Secret does not exist.
type GetterFunc func(ctx context.Context, name string) (*corev1.Secret, error)

// Get calls f.
func (f GetterFunc) Get(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	return f(ctx, name)
}

// Writer reads and replaces Secrets by name in the plan's namespace;
// client-go's SecretInterface satisfies it. It needs no create or delete.
type Writer interface {
	Getter
	Update(ctx context.Context, secret *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
}

// Meta describes a stored plan; it is what chunk 0's annotations say.
type Meta struct {
	// ID is the plan ID (magosv1.PlanIDAnnotation).
	ID string
	// Digest is "sha256:<hex>" of plan.json (magosv1.PlanDigestAnnotation).
	Digest string
	// SHA256 is "sha256:<hex>" of the joined gzip stream
	// (magosv1.PlanSHA256Annotation).
	SHA256 string
	// Chunks is the number of Secrets (magosv1.PlanChunksAnnotation).
	Chunks int
	// Size is the length of the gzip stream; Load sets it, Stat does not.
	Size int64
}

// Plan is a loaded plan.
type Plan struct {
	Meta
	// JSON is plan.json, the engine's `show -json` output.
	JSON []byte
	// Binary is plan.bin, the engine's saved plan file.
	Binary []byte
	// Text is plan.txt, the plan rendered for people; nil when the bundle
	// has none.
	Text []byte
}

// Input is a plan to store.
type Input struct {
	// Workspace names the Secrets and labels them.
	Workspace string
	// Owner is set on every Secret so that they go with the Workspace.
	Owner metav1.OwnerReference
	// ID is the plan ID.
	ID string
	// JSON is the plan JSON; its digest becomes the plan digest.
	JSON []byte
	// Binary is the engine's saved plan file.
	Binary []byte
	// Text is the plan rendered for people, at most MaxTextBytes; none
	// is stored when it is empty. The plan digest does not cover it.
	Text []byte
}

// Digest is the plan digest: "sha256:<hex>" of the plan JSON bytes. It is
// what the controller approves and the apply run checks.
func Digest(planJSON []byte) string {
	sum := sha256.Sum256(planJSON)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// WorkspaceOwner is the owner reference of a Workspace's plan Secrets. It
// does not block the owner's deletion: setting blockOwnerDeletion needs
// permission on the Workspace, which the runner does not have.
func WorkspaceOwner(workspace, uid string) metav1.OwnerReference {
	controller := true
	return metav1.OwnerReference{
		APIVersion: magosv1.GroupVersion.String(),
		Kind:       magosv1.WorkspaceKind,
		Name:       workspace,
		UID:        types.UID(uid),
		Controller: &controller,
	}
}
