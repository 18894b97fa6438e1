package command

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// exceptionVersions are the versions of policies.kyverno.io a waiver is
// written at, in order of preference.
var exceptionVersions = []string{"v1", "v1beta1"}

type waiveOptions struct {
	plan      string
	policies  []string
	expiresIn time.Duration
	reason    string
}

func newWaiveCommand(f *factory) *cobra.Command {
	o := &waiveOptions{}
	cmd := &cobra.Command{
		Use:   "waive WORKSPACE --plan ID --reason TEXT [--policy NAME]... [--expires-in D]",
		Short: "Waive a policy denial for one plan, in your name (a Kyverno PolicyException)",
		Long: `Let one plan of a Workspace past the policies that denied it, by creating a
Kyverno PolicyException in the Workspace's namespace bound to the Workspace
and to the plan's digest: a new plan, even of the same Workspace, is not
waived. The exception expires (--expires-in); a plan still waiting for an
approval or a promotion then is evaluated again. It records who created it
(as the Kubernetes API authenticates you; the chart's admission policy
refuses any other name) and why. The Workspace's status lists each denial
it waived (status.plan.policy.violations[].waivedBy) and an event says so.

--policy defaults to every policy that denied the plan. Who may waive is
who may create policyexceptions.policies.kyverno.io in the namespace.`,
		Example: `  kubectl magos waive hello --plan 8f3c1a2b9e --reason "INC-1234: replace the bucket"
  kubectl magos waive hello --plan 8f3c1a2b9e --policy no-destroy --expires-in 2h --reason "planned migration"`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if o.plan == "" || strings.TrimSpace(o.reason) == "" {
				return usageError("waive needs --plan ID (the plan you reviewed) and --reason")
			}
			if o.expiresIn <= 0 {
				return usageError("--expires-in must be positive: a waiver expires")
			}
			return o.run(cmd.Context(), f, a[0])
		},
	}
	cmd.Flags().StringVar(&o.plan, "plan", "", "the plan to waive for: refused unless it is the Workspace's current plan")
	cmd.Flags().StringSliceVar(&o.policies, "policy", nil, "a policy to waive, as status names it (name, or namespace/name); default: every policy that denied the plan")
	cmd.Flags().DurationVar(&o.expiresIn, "expires-in", 24*time.Hour, "how long the waiver applies")
	cmd.Flags().StringVar(&o.reason, "reason", "", "why the denial is waived (kept in the exception)")
	return cmd
}

func (o *waiveOptions) run(ctx context.Context, f *factory, name string) error {
	t, err := targetOf(f, name)
	if err != nil {
		return err
	}
	ws := &magosv1.Workspace{}
	if err := t.get(ctx, ws); err != nil {
		return err
	}
	plan := ws.Status.PendingPlan()
	switch {
	case plan == nil:
		return refused("Workspace %s has no plan waiting to be applied: nothing to waive", name)
	case plan.ID != o.plan:
		return refused("the plan of Workspace %s changed: the current plan is %s, not %s; review it with `kubectl magos plan show %s`", name, plan.ID, o.plan, name)
	case plan.Digest == "":
		return refused("plan %s of Workspace %s has no digest to bind a waiver to", plan.ID, name)
	}
	refs, err := deniedPolicies(plan, o.policies)
	if err != nil {
		return err
	}
	me, err := whoAmI(ctx, t.c)
	if err != nil {
		return err
	}
	expires := time.Now().Add(o.expiresIn).UTC().Truncate(time.Second)
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
			magosv1.WaiverReasonProperty:     o.reason,
		},
	}
	if err := createException(ctx, t, exceptionName, spec); err != nil {
		return err
	}
	policies := make([]string, 0, len(refs))
	for _, r := range refs {
		policies = append(policies, r["name"].(string))
	}
	fmt.Fprintf(f.streams.Out, "PolicyException %s/%s waives %s for plan %s of Workspace %s until %s (created by %s)\n",
		t.key.Namespace, exceptionName, strings.Join(policies, ", "), plan.ID, name, expires.Format(time.RFC3339), me.Username)
	return nil
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
		return nil, refused("no policy denied plan %s: nothing to waive", plan.ID)
	}
	want := named
	if len(want) == 0 {
		want = denied
	}
	var refs []map[string]any
	for _, p := range slices.Compact(slices.Sorted(slices.Values(want))) {
		if !slices.Contains(denied, p) {
			return nil, refused("policy %s did not deny plan %s (denied by: %s)", p, plan.ID, strings.Join(denied, ", "))
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
func createException(ctx context.Context, t *target, name string, spec map[string]any) error {
	for _, version := range exceptionVersions {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "policies.kyverno.io", Version: version, Kind: "PolicyException"})
		u.SetNamespace(t.key.Namespace)
		u.SetName(name)
		u.SetLabels(map[string]string{magosv1.WaiverWorkspaceProperty: t.key.Name})
		err := t.c.Create(ctx, u)
		if apierrors.IsAlreadyExists(err) {
			existing := &unstructured.Unstructured{}
			existing.SetGroupVersionKind(u.GroupVersionKind())
			if err = t.c.Get(ctx, client.ObjectKey{Namespace: t.key.Namespace, Name: name}, existing); err == nil {
				existing.Object["spec"] = spec
				err = t.c.Update(ctx, existing)
			}
		}
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing PolicyException %s/%s: %w", t.key.Namespace, name, err)
		}
		return nil
	}
	return refused("the cluster serves no PolicyException (policies.kyverno.io): install Kyverno's CRDs to waive")
}
