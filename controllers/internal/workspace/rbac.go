package workspace

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// runnerRulesAnnotation marks a runner Role whose rules this version wrote:
// get and update by name only (runjob.Verbs). Roles made by earlier
// versions lack it and granted create and delete.
const (
	runnerRulesAnnotation = "magos.dev/runner-rules"
	runnerRulesByName     = "get-update-by-name"
)

// tightenRunnerRole drops from the Workspace's runner Role every rule
// without resource names and every verb but get and update, once: it reads
// the Role's metadata from the cache (the controller caches no Role's
// rules) and the Role itself only when it lacks runnerRulesAnnotation, so
// an idle Workspace loses an earlier version's grants without waiting for
// its next run, at no read per reconcile.
func (r *Reconciler) tightenRunnerRole(ctx context.Context, ws *magosv1.Workspace) error {
	key := types.NamespacedName{Namespace: ws.Namespace, Name: magosv1.RunnerServiceAccountName(ws.Name)}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("Role"))
	if err := r.Get(ctx, key, meta); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(meta, ws) || meta.Annotations[runnerRulesAnnotation] == runnerRulesByName {
		return nil
	}
	role := &rbacv1.Role{}
	if err := r.APIReader.Get(ctx, key, role); err != nil {
		return client.IgnoreNotFound(err)
	}
	var rules []rbacv1.PolicyRule
	for _, rule := range role.Rules {
		verbs := slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return !slices.Contains(runjob.Verbs, v) })
		if len(verbs) > 0 && len(rule.ResourceNames) > 0 {
			rule.Verbs = verbs
			rules = append(rules, rule)
		}
	}
	if !equality.Semantic.DeepEqual(rules, role.Rules) {
		ctrl.LoggerFrom(ctx).Info("Dropping create and delete from the runner Role", "role", role.Name)
	}
	role.Rules = rules
	metav1.SetMetaDataAnnotation(&role.ObjectMeta, runnerRulesAnnotation, runnerRulesByName)
	return r.Update(ctx, role)
}

// reconcileRunnerIdentity ensures the ServiceAccount, Role (over the
// objects st reserved) and RoleBinding of the Workspace's runner
// identities: both before a plan run, and the apply identity alone before
// any other (the plan identity, revoked after each plan, is not created
// for a run that does not use it). It sets no condition; errors are
// retried.
func (r *Reconciler) reconcileRunnerIdentity(ctx context.Context, ws *magosv1.Workspace, runner magosv1.RunnerSpec, st runjob.Storage, phase string) error {
	for _, id := range runjob.Identities(ws, runner, st) {
		if id.Name == magosv1.PlanRunnerServiceAccountName(ws.Name) && phase != magosv1.RunPlan {
			continue
		}
		if err := r.ensureIdentity(ctx, ws, id); err != nil {
			return err
		}
	}
	return nil
}

// ensureIdentity creates or updates one identity's ServiceAccount, Role and
// RoleBinding, owned by the Workspace. It reads them live: the controller
// does not cache them (three objects per Workspace, read only here, before
// a run).
func (r *Reconciler) ensureIdentity(ctx context.Context, ws *magosv1.Workspace, id runjob.Identity) error {
	name, annotations := id.Name, id.Annotations
	meta := func(o metav1.Object) {
		o.SetLabels(runjob.Labels(ws))
	}
	live := liveReads{Client: r.Client, reader: r.APIReader}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ws.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, live, sa, func() error {
		meta(sa)
		if len(annotations) > 0 || len(sa.Annotations) > 0 {
			sa.Annotations = maps.Clone(annotations)
		}
		return controllerutil.SetControllerReference(ws, sa, r.Scheme())
	}); err != nil {
		return err
	}

	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ws.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, live, role, func() error {
		meta(role)
		metav1.SetMetaDataAnnotation(&role.ObjectMeta, runnerRulesAnnotation, runnerRulesByName)
		role.Rules = id.Rules
		return controllerutil.SetControllerReference(ws, role, r.Scheme())
	}); err != nil {
		return err
	}

	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ws.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, live, rb, func() error {
		meta(rb)
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ws.Namespace}}
		return controllerutil.SetControllerReference(ws, rb, r.Scheme())
	})
	return err
}

// liveReads is a client whose reads go to the apiserver (reader), for
// objects the controller writes but does not cache.
type liveReads struct {
	client.Client
	reader client.Reader
}

func (l liveReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return l.reader.Get(ctx, key, obj, opts...)
}

// revokePlanIdentity deletes the Workspace's plan ServiceAccount once a
// plan's result is read. A plan runs config code with that identity; with
// the ServiceAccount gone every token minted for it (the plan runner's,
// its artifact token, one config code minted for itself) stops
// authenticating, while the finished Pod stays for its logs. The next
// plan creates it again.
func (r *Reconciler) revokePlanIdentity(ctx context.Context, ws *magosv1.Workspace) error {
	sa := &corev1.ServiceAccount{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: magosv1.PlanRunnerServiceAccountName(ws.Name)}, sa)
	if err != nil || !metav1.IsControlledBy(sa, ws) {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Delete(ctx, sa, client.Preconditions{UID: &sa.UID}))
}
