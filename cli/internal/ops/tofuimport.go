package ops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/tfimport"
)

// TofuObjects are tofu-controller's Terraform objects of namespace ns
// (every namespace for ""), only the one called name when name is set.
func TofuObjects(ctx context.Context, c client.Client, ns, name string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(tfimport.GVK.GroupVersion().WithKind(tfimport.GVK.Kind + "List"))
	opts := []client.ListOption{}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, failure.Failed("listing tofu-controller's Terraform objects: %v", err)
	}
	return slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool { return name != "" && u.GetName() != name }), nil
}

// TofuImport is the Workspace a Terraform object is imported as, the
// fields that are not mapped, and whether tofu-controller applied every
// plan of it.
type TofuImport struct {
	Workspace    *magosv1.Workspace
	Skipped      []tfimport.Skipped
	AutoApproved bool
}

// MapTofuObject is what importing tf creates: its Workspace, with the
// keys of its varsFrom references read (never their values); an error
// when it cannot be imported.
func MapTofuObject(ctx context.Context, c client.Client, tf *unstructured.Unstructured) (TofuImport, error) {
	r := tfimport.Map(tf)
	if r.Refused != "" {
		return TofuImport{}, fmt.Errorf("not imported: %s", r.Refused)
	}
	skipped, err := tfimport.ExpandVarsFrom(r.Workspace, r.VarsFrom, func(ref tfimport.VarsFrom) ([]string, error) {
		return keysOf(ctx, c, tf.GetNamespace(), ref)
	})
	if err != nil {
		return TofuImport{}, fmt.Errorf("not imported: %w", err)
	}
	return TofuImport{Workspace: r.Workspace, Skipped: append(r.Skipped, skipped...), AutoApproved: r.AutoApproved}, nil
}

// ValidateTofuImport has the API server validate the Workspace of an
// import without creating it.
func ValidateTofuImport(ctx context.Context, c client.Client, imp TofuImport) error {
	if err := c.Create(ctx, imp.Workspace.DeepCopy(), client.DryRunAll); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("not imported: the API server refuses the Workspace: %w", err)
	}
	return nil
}

// ImportTofuObject imports tf as the Workspace of imp, or finishes an
// import of it that stopped halfway: it creates the Workspace suspended,
// takes tofu-controller's state Secret and lock over for it (adopt: the
// UID of a state Secret to take over although it is not provably tf's),
// suspends tf and resumes the Workspace. It returns the Workspace.
func ImportTofuObject(ctx context.Context, c client.Client, tf *unstructured.Unstructured, imp TofuImport, adopt string) (*magosv1.Workspace, error) {
	ws := imp.Workspace
	// Until it owns the state the Workspace is suspended and would destroy
	// nothing if deleted: an import that stops deletes it.
	destroyOnDelete, created := ws.Spec.DestroyOnDelete, false
	existing := &magosv1.Workspace{}
	err := c.Get(ctx, client.ObjectKeyFromObject(ws), existing)
	switch {
	case apierrors.IsNotFound(err):
		ws.Spec.Suspend, ws.Spec.DestroyOnDelete = true, false
		if err := c.Create(ctx, ws); err != nil {
			return nil, fmt.Errorf("not imported: creating Workspace %s: %w", ws.Name, err)
		}
		existing, created = ws, true
	case err != nil:
		return nil, err
	case existing.Annotations[tfimport.ImportedFromAnnotation] != ws.Annotations[tfimport.ImportedFromAnnotation]:
		return nil, fmt.Errorf("not imported: Workspace %s exists and was not imported from this Terraform object", ws.Name)
	}
	ws = existing
	if err := adoptState(ctx, c, ws, tf, adopt); err != nil {
		if created {
			// Leave tofu-controller as it was: the Workspace this call
			// created (suspended, destroying nothing) goes, even when
			// the import is interrupted.
			_ = c.Delete(context.WithoutCancel(ctx), ws)
			return nil, fmt.Errorf("not imported: %w; the Terraform object is untouched", err)
		}
		return nil, fmt.Errorf("not imported: %w; run the import again", err)
	}
	// Suspended, and never to destroy what the Workspace now manages: a
	// Terraform object is deleted only once suspend is off, and then
	// tofu-controller would destroy on deletion.
	patch := []byte(`{"spec":{"suspend":true,"destroyResourcesOnDeletion":false}}`)
	if err := c.Patch(ctx, tf, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return nil, fmt.Errorf("suspending the Terraform object: %w; the Workspace stays suspended: run the import again", err)
	}
	if ws.Spec.Suspend {
		before := ws.DeepCopy()
		ws.Spec.Suspend, ws.Spec.DestroyOnDelete = false, destroyOnDelete
		if err := c.Patch(ctx, ws, client.MergeFrom(before)); err != nil {
			return nil, fmt.Errorf("resuming Workspace %s: %w; run the import again", ws.Name, err)
		}
	}
	return ws, nil
}

// WaitFirstPlan waits until the Workspace has its first plan; a Workspace
// that stalls before fails it.
func WaitFirstPlan(ctx context.Context, c client.WithWatch, ws *magosv1.Workspace, timeout time.Duration) (*magosv1.Workspace, error) {
	t := &Target{Client: c, Key: client.ObjectKeyFromObject(ws)}
	return t.WaitWorkspace(ctx, timeout, "make its first plan", func(ws *magosv1.Workspace) (bool, error) {
		if p := ws.Status.Plan; p != nil {
			return true, nil
		}
		if cond := stalledCondition(ws); cond != "" {
			return false, failure.Failed("Workspace %s stalled before its first plan: %s", ws.Name, cond)
		}
		return false, nil
	})
}

// stalledCondition is the Ready message of a stalled Workspace, or "".
func stalledCondition(ws *magosv1.Workspace) string {
	for _, c := range ws.Status.Conditions {
		if c.Type == "Stalled" && c.Status == "True" {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

// adoptState makes tofu-controller's state Secret and lock Lease the
// Workspace's (its labels and UID) under the state lock: it takes the
// Lease (creating it if the engine never locked), which only a free lock
// allows, takes the Secret over if it is tf's (tfimport.StateRefused;
// adopt, the UID of the Secret to take over all the same) and releases
// the lock in the same update that marks the Lease the Workspace's. A
// tofu-controller run that starts meanwhile fails to lock and retries
// later. Storage another Workspace took over is never taken.
func adoptState(ctx context.Context, c client.Client, ws *magosv1.Workspace, tf *unstructured.Unstructured, adopt string) error {
	// The holder names the Terraform object, so an import that stopped
	// holding the lock is finished by the next one.
	holder := importLockPrefix + string(tf.GetUID())
	lease := &coordinationv1.Lease{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ws.Namespace, Name: magosv1.LockLeaseName(ws.Name)}, lease)
	switch {
	case apierrors.IsNotFound(err):
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ws.Namespace, Name: magosv1.LockLeaseName(ws.Name),
			Labels: magosv1.StateSecretLabels(ws.Name)}}
		lease.Spec.HolderIdentity = &holder
		if err := c.Create(ctx, lease); err != nil {
			return fmt.Errorf("taking the state lock: %w", err)
		}
	case err != nil:
		return err
	case lease.Annotations[magosv1.WorkspaceUIDAnnotation] == string(ws.UID):
		// Taken over by an earlier import: Magos's runs lock it now.
	case lease.Annotations[magosv1.WorkspaceUIDAnnotation] != "":
		return fmt.Errorf("lock Lease %s is Workspace UID %s's, not this Workspace's", lease.Name, lease.Annotations[magosv1.WorkspaceUIDAnnotation])
	case lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" && !strings.HasPrefix(*lease.Spec.HolderIdentity, importLockPrefix):
		return fmt.Errorf("the state is locked (Lease %s held by %s): a tofu-controller run is under way; import again when it ends",
			lease.Name, *lease.Spec.HolderIdentity)
	default:
		lease.Spec.HolderIdentity = &holder
		if err := c.Update(ctx, lease); err != nil {
			return fmt.Errorf("taking the state lock (Lease %s): %w", lease.Name, err)
		}
	}
	state := &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ws.Namespace, Name: magosv1.StateSecretName(ws.Name)}, state)
	switch {
	case apierrors.IsNotFound(err):
		if applied, _, _ := unstructured.NestedString(tf.Object, "status", "lastAppliedRevision"); applied != "" {
			return errors.Join(fmt.Errorf("tofu-controller applied revision %s but state Secret %s does not exist: its state is not where Magos reads it",
				applied, magosv1.StateSecretName(ws.Name)), release(ctx, c, lease, holder, nil))
		}
	case err != nil:
		return errors.Join(err, release(ctx, c, lease, holder, nil))
	case state.Type != corev1.SecretTypeOpaque:
		return errors.Join(fmt.Errorf("state Secret %s has type %q, not Opaque", state.Name, state.Type), release(ctx, c, lease, holder, nil))
	case tfimport.StateRefused(tf, ws.UID, state, adopt) != "":
		return errors.Join(errors.New(tfimport.StateRefused(tf, ws.UID, state, adopt)), release(ctx, c, lease, holder, nil))
	default:
		if err := takeOver(ctx, c, ws, state); err != nil {
			return errors.Join(err, release(ctx, c, lease, holder, nil))
		}
	}
	if err := takeOverOutputs(ctx, c, ws, tf); err != nil {
		return errors.Join(err, release(ctx, c, lease, holder, nil))
	}
	return release(ctx, c, lease, holder, ws)
}

// importLockPrefix begins the holder of a state lock an import takes.
const importLockPrefix = "magos-import-"

// takeOverOutputs makes the outputs Secret tofu-controller wrote, which
// the Terraform object controls, the Workspace's: owned by it (so deleting
// the Terraform object later does not collect it) and labelled as its.
func takeOverOutputs(ctx context.Context, c client.Client, ws *magosv1.Workspace, tf *unstructured.Unstructured) error {
	if ws.Spec.Outputs == nil {
		return nil
	}
	out := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ws.Namespace, Name: ws.Spec.Outputs.SecretName}, out)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ref := metav1.GetControllerOf(out); ref == nil || ref.UID != tf.GetUID() {
		return nil // not tofu-controller's: the controller judges it
	}
	out.OwnerReferences = slices.DeleteFunc(out.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == tf.GetUID() })
	out.OwnerReferences = append(out.OwnerReferences, planstore.WorkspaceOwner(ws.Name, string(ws.UID)))
	labelAsWorkspaces(ws, out)
	if err := c.Update(ctx, out); err != nil {
		return fmt.Errorf("taking over outputs Secret %s for Workspace %s: %w", out.Name, ws.Name, err)
	}
	return nil
}

// release frees the state lock the import holds and, with ws, marks the
// Lease ws's in the same update.
func release(ctx context.Context, c client.Client, lease *coordinationv1.Lease, holder string, ws *magosv1.Workspace) error {
	ctx = context.WithoutCancel(ctx) // an interrupted import still frees the lock
	if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == holder {
		lease.Spec.HolderIdentity = nil
	}
	if ws != nil {
		mark(ws, lease)
	}
	if err := c.Update(ctx, lease); err != nil {
		return fmt.Errorf("releasing the state lock (Lease %s): %w", lease.Name, err)
	}
	return nil
}

// takeOver marks obj ws's and updates it.
func takeOver(ctx context.Context, c client.Client, ws *magosv1.Workspace, obj client.Object) error {
	mark(ws, obj)
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("taking over %s for Workspace %s: %w", obj.GetName(), ws.Name, err)
	}
	return nil
}

// mark labels obj as ws's storage and records ws's UID on it.
func mark(ws *magosv1.Workspace, obj client.Object) {
	labelAsWorkspaces(ws, obj)
	ann := maps.Clone(obj.GetAnnotations())
	if ann == nil {
		ann = map[string]string{}
	}
	ann[magosv1.WorkspaceUIDAnnotation] = string(ws.UID)
	obj.SetAnnotations(ann)
}

// labelAsWorkspaces gives obj the labels of ws's storage.
func labelAsWorkspaces(ws *magosv1.Workspace, obj client.Object) {
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[magosv1.ManagedByLabel] = magosv1.ManagedByValue
	labels[magosv1.WorkspaceLabel] = ws.Name
	obj.SetLabels(labels)
}

// keysOf reads the keys (never the values) of a varsFrom reference.
func keysOf(ctx context.Context, c client.Client, namespace string, ref tfimport.VarsFrom) ([]string, error) {
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	var keys []string
	var err error
	if ref.Kind == "Secret" {
		s := &corev1.Secret{}
		if err = c.Get(ctx, key, s); err == nil {
			keys = slices.Collect(maps.Keys(s.Data))
		}
	} else {
		m := &corev1.ConfigMap{}
		if err = c.Get(ctx, key, m); err == nil {
			keys = slices.Collect(maps.Keys(m.Data))
		}
	}
	if apierrors.IsNotFound(err) && ref.Optional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the keys of varsFrom %s %s: %w", ref.Kind, ref.Name, err)
	}
	return keys, nil
}
