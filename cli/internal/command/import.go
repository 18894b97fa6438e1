package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/tfimport"
)

type importOptions struct {
	allNamespaces bool
	dryRun        string
	output        string
	wait          bool
	timeout       time.Duration
	adoptState    string
}

func newImportCommand(f *factory) *cobra.Command {
	o := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import tofu-controller [NAME] [-n NS | -A]",
		Short: "Import tofu-controller's Terraform objects as Workspaces, with a first plan as proof",
		Long: `Import tofu-controller's Terraform objects (infra.contrib.fluxcd.io/v1alpha2)
as Workspaces of the same name and namespace. Every field Magos has a
setting for is mapped; every other field that is set is listed with why.

The state is read in place: tofu-controller keeps it in Secret
tfstate-default-<name> (locked by Lease lock-tfstate-default-<name>), which
is where and how a Workspace of that name keeps it. The import takes both
over for the Workspace (labels and its UID; nothing is copied, nothing is
deleted) while the lock is free, and only then suspends the Terraform
object (spec.suspend: true). Found by name, the state Secret is taken over
only when it is the Terraform object's: written by the kubernetes backend
for that name, no older than the object, claimed by no other Workspace or
owner. Otherwise the object is not imported unless you name the Secret's
UID with --adopt-state (with NAME). A Terraform object whose state is elsewhere
(another engine workspace or secretSuffix, a custom backend, Terraform
Cloud) is not imported.

The Workspace is created with approval: Manual. Its first plan is the
proof: with --wait (the default) the import waits for it and reports, per
Workspace, "no changes" or the changes it would make; switch it to Auto
once the proof holds. A second import of the same object is a no-op; an
import that stopped halfway is finished by running it again.

Exit code 1 when an object was not imported or its first plan has changes.`,
		Example: `  kubectl magos import tofu-controller -n team-a --dry-run=client -o yaml
  kubectl magos import tofu-controller network -n team-a
  kubectl magos import tofu-controller -A --wait=false`,
		Args: args(1, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			if a[0] != "tofu-controller" {
				return usageError("import knows tofu-controller only, not %q", a[0])
			}
			name := ""
			if len(a) == 2 {
				name = a[1]
			}
			if o.adoptState != "" && (name == "" || o.allNamespaces) {
				return usageError("--adopt-state names the state Secret of one Terraform object: give its NAME (and no -A)")
			}
			return o.run(cmd.Context(), f, name)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "import the Terraform objects of every namespace")
	cmd.Flags().StringVar(&o.dryRun, "dry-run", "none", "client: print what would be created; server: also have the API server validate each Workspace; both change nothing")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "with --dry-run=client: yaml prints the Workspaces")
	cmd.Flags().BoolVar(&o.wait, "wait", true, "wait for each Workspace's first plan and report it")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long --wait waits for each first plan")
	cmd.Flags().StringVar(&o.adoptState, "adopt-state", "", "with NAME: the UID of a state Secret to take over although it is not provably the Terraform object's (the refusal names it)")
	return cmd
}

func (o *importOptions) run(ctx context.Context, f *factory, name string) error {
	if !slices.Contains([]string{"none", "client", "server"}, o.dryRun) {
		return usageError("--dry-run is none, client or server, not %q", o.dryRun)
	}
	if o.output != "" && (o.output != "yaml" || o.dryRun == "none") {
		return usageError("-o yaml goes with --dry-run")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	ns, err := f.namespace()
	if err != nil {
		return err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(tfimport.GVK.GroupVersion().WithKind(tfimport.GVK.Kind + "List"))
	opts := []client.ListOption{}
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return failed("listing tofu-controller's Terraform objects: %v", err)
	}
	items := slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool { return name != "" && u.GetName() != name })
	if len(items) == 0 {
		return newError(ExitFailure, ReasonNotFound, "no Terraform object to import%s", map[bool]string{true: " named " + name, false: ""}[name != ""])
	}
	out := f.streams.Out
	var problems []string
	for i := range items {
		tf := &items[i]
		key := tf.GetNamespace() + "/" + tf.GetName()
		if err := o.importOne(ctx, c, f, tf, out); err != nil {
			fmt.Fprintf(out, "%s: %v\n", key, err)
			problems = append(problems, key)
		}
	}
	if len(problems) > 0 {
		return failed("%d of %d not imported, or their first plan has changes: %s", len(problems), len(items), strings.Join(problems, ", "))
	}
	return nil
}

// importOne imports one Terraform object, or finishes an import of it
// that stopped halfway.
func (o *importOptions) importOne(ctx context.Context, c client.Client, f *factory, tf *unstructured.Unstructured, out io.Writer) error {
	key := tf.GetNamespace() + "/" + tf.GetName()
	r := tfimport.Map(tf)
	if r.Refused != "" {
		return fmt.Errorf("not imported: %s", r.Refused)
	}
	ws := r.Workspace
	skipped, err := tfimport.ExpandVarsFrom(ws, r.VarsFrom, func(ref tfimport.VarsFrom) ([]string, error) {
		return keysOf(ctx, c, tf.GetNamespace(), ref)
	})
	if err != nil {
		return fmt.Errorf("not imported: %w", err)
	}
	r.Skipped = append(r.Skipped, skipped...)
	if o.dryRun == "server" {
		if err := c.Create(ctx, ws.DeepCopy(), client.DryRunAll); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("not imported: the API server refuses the Workspace: %w", err)
		}
	}
	if o.dryRun != "none" {
		if o.output == "yaml" {
			b, err := yaml.Marshal(ws)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "---\n%s", b)
			return nil
		}
		fmt.Fprintf(out, "%s: would be imported as Workspace %s (dry run: %s)\n", key, ws.Name, o.dryRun)
		writeSkipped(out, r.Skipped)
		return nil
	}

	// Until it owns the state the Workspace is suspended and would destroy
	// nothing if deleted: an import that stops deletes it.
	destroyOnDelete, created := ws.Spec.DestroyOnDelete, false
	existing := &magosv1.Workspace{}
	err = c.Get(ctx, client.ObjectKeyFromObject(ws), existing)
	switch {
	case apierrors.IsNotFound(err):
		ws.Spec.Suspend, ws.Spec.DestroyOnDelete = true, false
		if err := c.Create(ctx, ws); err != nil {
			return fmt.Errorf("not imported: creating Workspace %s: %w", ws.Name, err)
		}
		existing, created = ws, true
	case err != nil:
		return err
	case existing.Annotations[tfimport.ImportedFromAnnotation] != ws.Annotations[tfimport.ImportedFromAnnotation]:
		return fmt.Errorf("not imported: Workspace %s exists and was not imported from this Terraform object", ws.Name)
	}
	ws = existing
	if err := adoptState(ctx, c, ws, tf, o.adoptState); err != nil {
		if created {
			// Leave tofu-controller as it was: the Workspace this call
			// created (suspended, destroying nothing) goes, even when
			// the import is interrupted.
			_ = c.Delete(context.WithoutCancel(ctx), ws)
			return fmt.Errorf("not imported: %w; the Terraform object is untouched", err)
		}
		return fmt.Errorf("not imported: %w; run the import again", err)
	}
	// Suspended, and never to destroy what the Workspace now manages: a
	// Terraform object is deleted only once suspend is off, and then
	// tofu-controller would destroy on deletion.
	patch := []byte(`{"spec":{"suspend":true,"destroyResourcesOnDeletion":false}}`)
	if err := c.Patch(ctx, tf, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("suspending the Terraform object: %w; the Workspace stays suspended: run the import again", err)
	}
	if ws.Spec.Suspend {
		before := ws.DeepCopy()
		ws.Spec.Suspend, ws.Spec.DestroyOnDelete = false, destroyOnDelete
		if err := c.Patch(ctx, ws, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("resuming Workspace %s: %w; run the import again", ws.Name, err)
		}
	}
	fmt.Fprintf(out, "%s: imported as Workspace %s, reading state Secret %s in place; the Terraform object is suspended (destroyResourcesOnDeletion off)\n",
		key, ws.Name, magosv1.StateSecretName(ws.Name))
	writeSkipped(out, r.Skipped)
	if !o.wait {
		return nil
	}
	return o.reportFirstPlan(ctx, f, ws, r.AutoApproved, out)
}

// reportFirstPlan waits for the Workspace's first plan and says whether
// it is the proof: no changes.
func (o *importOptions) reportFirstPlan(ctx context.Context, f *factory, ws *magosv1.Workspace, auto bool, out io.Writer) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	t := &target{c: c, key: client.ObjectKeyFromObject(ws)}
	got, err := t.waitWorkspace(ctx, o.timeout, "make its first plan", func(ws *magosv1.Workspace) (bool, error) {
		if p := ws.Status.Plan; p != nil {
			return true, nil
		}
		if cond := stalledCondition(ws); cond != "" {
			return false, failed("Workspace %s stalled before its first plan: %s", ws.Name, cond)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	p := got.Status.Plan
	if !p.HasChanges {
		advice := ""
		if auto {
			advice = fmt.Sprintf("; tofu-controller applied every plan: kubectl patch workspace %s -n %s --type merge -p '{\"spec\":{\"approval\":\"Auto\"}}'", ws.Name, ws.Namespace)
		}
		fmt.Fprintf(out, "  first plan %s: no changes: the import holds%s\n", p.ID, advice)
		return nil
	}
	fmt.Fprintf(out, "  first plan %s: %s: the import would change resources; read it (kubectl magos plan show %s -n %s) and do not approve it until it shows no changes\n",
		p.ID, planCounts(p), ws.Name, ws.Namespace)
	if changes, _, err := loadChanges(ctx, t.planGetter(), got, nil); err == nil {
		for _, address := range slices.Sorted(maps.Keys(changes.Resources)) {
			fmt.Fprintf(out, "    %s %s\n", strings.Join(changes.Resources[address].Actions, ", "), address)
		}
	}
	return fmt.Errorf("first plan has changes")
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

// writeSkipped lists the fields that were not mapped.
func writeSkipped(out io.Writer, skipped []tfimport.Skipped) {
	for _, s := range skipped {
		fmt.Fprintf(out, "  not mapped: %s: %s\n", s.Field, s.Why)
	}
}
