package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
)

// exceptionVersions are the versions of policies.kyverno.io a waiver is
// written at, in order of preference.
var exceptionVersions = []string{"v1", "v1beta1"}

// WaiverRequest is what a waiver is asked for: the plan it is for, the
// policies it waives (default: every one that denied the plan), for how
// long and why.
type WaiverRequest struct {
	Plan      string
	Policies  []string
	ExpiresIn time.Duration
	Reason    string
}

// Waiver is the PolicyException Waive wrote.
type Waiver struct {
	// Name is the PolicyException's, in the Workspace's namespace.
	Name     string
	Policies []string
	PlanID   string
	Expires  time.Time
	User     string
}

// Waive lets one plan of the target Workspace past the policies that
// denied it: a Kyverno PolicyException bound to the Workspace and the
// plan's digest, in the user's name.
func Waive(ctx context.Context, t *Target, o WaiverRequest) (Waiver, error) {
	name := t.Key.Name
	ws, err := t.ReadWorkspace(ctx)
	if err != nil {
		return Waiver{}, err
	}
	plan := ws.Status.PendingPlan()
	switch {
	case plan == nil:
		return Waiver{}, failure.Refused("Workspace %s has no plan waiting to be applied: nothing to waive", name)
	case plan.ID != o.Plan:
		return Waiver{}, failure.Refused("the plan of Workspace %s changed: the current plan is %s, not %s; review it with `kubectl magos plan show %s`", name, plan.ID, o.Plan, name)
	case plan.Digest == "":
		return Waiver{}, failure.Refused("plan %s of Workspace %s has no digest to bind a waiver to", plan.ID, name)
	}
	refs, err := deniedPolicies(plan, o.Policies)
	if err != nil {
		return Waiver{}, err
	}
	me, err := WhoAmI(ctx, t.Client)
	if err != nil {
		return Waiver{}, err
	}
	expires := time.Now().Add(o.ExpiresIn).UTC().Truncate(time.Second)
	exceptionName := fmt.Sprintf("%s-waiver-%s", name, plan.ID)
	if len(exceptionName) > 253 {
		exceptionName = exceptionName[:253]
	}
	spec := map[string]any{
		"policyRefs": refs,
		"expiresAt":  expires.Format(time.RFC3339),
		"properties": map[string]any{
			magosv1.WaiverWorkspaceProperty:  name,
			magosv1.WaiverPlanDigestProperty: plan.Digest,
			magosv1.WaiverPlanProperty:       plan.ID,
			magosv1.WaiverCreatedByProperty:  me.Username,
			magosv1.WaiverReasonProperty:     o.Reason,
		},
	}
	if err := createException(ctx, t, exceptionName, spec); err != nil {
		return Waiver{}, err
	}
	policies := make([]string, 0, len(refs))
	for _, r := range refs {
		policies = append(policies, r["name"].(string))
	}
	return Waiver{Name: exceptionName, Policies: policies, PlanID: plan.ID, Expires: expires, User: me.Username}, nil
}

// deniedPolicies are the policyRefs of the waiver: the policies named (each
// must have denied plan), or every policy that denied it.
func deniedPolicies(plan *magosv1.PlanStatus, named []string) ([]map[string]any, error) {
	var denied []string
	if v := plan.Policy; v != nil {
		for _, viol := range v.Violations {
			if viol.Action == "Deny" {
				denied = append(denied, viol.Policy)
			}
		}
	}
	if len(denied) == 0 {
		return nil, failure.Refused("no policy denied plan %s: nothing to waive", plan.ID)
	}
	want := named
	if len(want) == 0 {
		want = denied
	}
	var refs []map[string]any
	for _, p := range slices.Compact(slices.Sorted(slices.Values(want))) {
		if !slices.Contains(denied, p) {
			return nil, failure.Refused("policy %s did not deny plan %s (denied by: %s)", p, plan.ID, strings.Join(denied, ", "))
		}
		kind, policyName := "ValidatingPolicy", p
		if _, n, ok := strings.Cut(p, "/"); ok {
			kind, policyName = "NamespacedValidatingPolicy", n
		}
		refs = append(refs, map[string]any{"name": policyName, "kind": kind})
	}
	return refs, nil
}

// createException creates the PolicyException, or replaces the spec of
// the one this command created before for the same plan.
func createException(ctx context.Context, t *Target, name string, spec map[string]any) error {
	for _, version := range exceptionVersions {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "policies.kyverno.io", Version: version, Kind: "PolicyException"})
		u.SetNamespace(t.Key.Namespace)
		u.SetName(name)
		u.SetLabels(map[string]string{magosv1.WaiverWorkspaceProperty: t.Key.Name})
		err := t.Client.Create(ctx, u)
		if apierrors.IsAlreadyExists(err) {
			existing := &unstructured.Unstructured{}
			existing.SetGroupVersionKind(u.GroupVersionKind())
			if err = t.Client.Get(ctx, client.ObjectKey{Namespace: t.Key.Namespace, Name: name}, existing); err == nil {
				existing.Object["spec"] = spec
				err = t.Client.Update(ctx, existing)
			}
		}
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing PolicyException %s/%s: %w", t.Key.Namespace, name, err)
		}
		return nil
	}
	return failure.Refused("the cluster serves no PolicyException (policies.kyverno.io): install Kyverno's CRDs to waive")
}
