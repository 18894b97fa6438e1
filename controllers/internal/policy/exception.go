package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	policiesv1beta1 "github.com/kyverno/api/api/policies.kyverno.io/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
)

// KindPolicyException is Kyverno's exception kind for CEL policies.
const KindPolicyException = "PolicyException"

// ExceptionKind is the kind of exception the gate reads.
var ExceptionKind = schema.GroupKind{Group: Group, Kind: KindPolicyException}

// Exception is one PolicyException that waives policies for one plan.
type Exception struct {
	Object *policiesv1beta1.PolicyException
}

// Name is the exception's namespace/name.
func (e Exception) Name() string {
	return e.Object.Namespace + "/" + e.Object.Name
}

// Refers reports whether the exception names p in spec.policyRefs, as
// Kyverno matches them (name and kind).
func (e Exception) Refers(p Policy) bool {
	if e.Object == nil || p.Object == nil {
		return false
	}
	return slices.ContainsFunc(e.Object.Spec.PolicyRefs, func(ref policiesv1beta1.PolicyRef) bool {
		return ref.Name == p.Object.GetName() && ref.Kind == p.Kind()
	})
}

// Lifts says why the exception may not lift policy p's denials, or "". A
// waiver lives in the Workspace's namespace, where whoever may create
// PolicyExceptions writes it (a tenant, where the admin did not keep that
// right): it lifts a NamespacedValidatingPolicy of its own namespace, and
// a cluster ValidatingPolicy only where the policy allows waivers
// (magosv1.WaivableAnnotation: "true"), that is where the admin who wrote
// it does.
func (e Exception) Lifts(p Policy) string {
	if e.Object == nil || p.Object == nil {
		return "no policy"
	}
	if ns := p.Object.GetNamespace(); ns != "" {
		if ns != e.Object.Namespace {
			return fmt.Sprintf("%s %s is not of namespace %s", p.Kind(), p.Name(), e.Object.Namespace)
		}
		return ""
	}
	if p.Object.GetAnnotations()[magosv1.WaivableAnnotation] != "true" {
		return fmt.Sprintf("%s %s is cluster-wide and does not allow waivers (annotation %s: \"true\")", p.Kind(), p.Name(), magosv1.WaivableAnnotation)
	}
	return ""
}

// Describe says who created the exception, why, and until when.
func (e Exception) Describe() string {
	props := e.Object.Spec.Properties
	s := e.Name() + " by " + props[magosv1.WaiverCreatedByProperty]
	if r := props[magosv1.WaiverReasonProperty]; r != "" {
		s += " (" + policyprotocol.OneLine(r) + ")"
	}
	return s + " until " + e.Expires().UTC().Format(time.RFC3339)
}

// Expires is when the exception stops applying.
func (e Exception) Expires() time.Time {
	return e.Object.Spec.ExpiresAt.Time
}

// Waivers are the exceptions bound to one plan.
type Waivers struct {
	// Live apply now: bound to the Workspace and the plan digest, with a
	// spec.expiresAt still ahead.
	Live []Exception
	// Ignored names (namespace/name: why) the exceptions bound to the
	// Workspace and plan that cannot waive: no expiry, or expired.
	Ignored []string
}

// Expires is when the first live waiver expires (zero without one).
func (w Waivers) Expires() time.Time {
	var first time.Time
	for _, e := range w.Live {
		if t := e.Expires(); first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}

// ListWaivers returns the PolicyExceptions in namespace bound to Workspace
// workspace and the plan with digest planDigest (magosv1.Waiver*Property),
// as of now. A waiver
// must expire: one without spec.expiresAt, or past it, is ignored (and
// named), and so is one that does not name its creator
// (magosv1.WaiverCreatedByProperty). Nothing is listed where Kyverno's PolicyException kind is not
// served.
func ListWaivers(ctx context.Context, c client.Reader, namespace, workspace, planDigest string, now time.Time) (Waivers, error) {
	var out Waivers
	if planDigest == "" {
		return out, nil
	}
	items, err := listExceptions(ctx, c, namespace)
	if err != nil {
		return out, err
	}
	for i := range items {
		e, err := ExceptionFromUnstructured(&items[i])
		if err != nil {
			return out, err
		}
		props := e.Object.Spec.Properties
		if props[magosv1.WaiverWorkspaceProperty] != workspace || props[magosv1.WaiverPlanDigestProperty] != planDigest {
			continue
		}
		switch exp := e.Object.Spec.ExpiresAt; {
		case props[magosv1.WaiverCreatedByProperty] == "":
			out.Ignored = append(out.Ignored, e.Name()+": a waiver names its creator in spec.properties."+magosv1.WaiverCreatedByProperty)
		case exp == nil:
			out.Ignored = append(out.Ignored, e.Name()+": a waiver needs spec.expiresAt")
		case !now.Before(exp.Time):
			out.Ignored = append(out.Ignored, e.Name()+": expired at "+exp.UTC().Format(time.RFC3339))
		default:
			out.Live = append(out.Live, e)
		}
	}
	slices.SortFunc(out.Live, func(a, b Exception) int { return strings.Compare(a.Name(), b.Name()) })
	slices.Sort(out.Ignored)
	return out, nil
}

// WithWaivers attaches to each policy the live waivers that refer to it
// and may lift it (Exception.Lifts). The gate and the policy engine
// process both attach them so: the engine is sent every waiver a policy
// carries, and attaches them again.
func WithWaivers(policies []Policy, waivers []Exception) []Policy {
	out := slices.Clone(policies)
	for i := range out {
		out[i].Exceptions = nil
		for _, e := range waivers {
			if e.Refers(out[i]) && e.Lifts(out[i]) == "" {
				out[i].Exceptions = append(out[i].Exceptions, e)
			}
		}
	}
	return out
}

// RefusedWaiver is a waiver that names a policy it may not lift.
type RefusedWaiver struct {
	Exception Exception
	// Why says which policy and why, after the exception's name.
	Why string
}

// RefusedWaivers are the waivers that refer to one of policies they may
// not lift (Exception.Lifts), once per waiver and policy, in order.
func RefusedWaivers(policies []Policy, waivers []Exception) []RefusedWaiver {
	var out []RefusedWaiver
	for _, e := range waivers {
		for _, p := range policies {
			if !e.Refers(p) {
				continue
			}
			if why := e.Lifts(p); why != "" {
				out = append(out, RefusedWaiver{Exception: e, Why: e.Name() + ": " + why})
			}
		}
	}
	return out
}

// listExceptions lists the PolicyExceptions of namespace at the first
// served version; none where no version is served.
func listExceptions(ctx context.Context, c client.Reader, namespace string) ([]unstructured.Unstructured, error) {
	for _, version := range servedVersions {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: Group, Version: version, Kind: KindPolicyException + "List"})
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("listing %s.%s/%s: %w", KindPolicyException, Group, version, err)
		}
		return l.Items, nil
	}
	return nil, nil
}

// ExceptionFromUnstructured converts a PolicyException read at any version
// of policies.kyverno.io (they share one schema).
func ExceptionFromUnstructured(u *unstructured.Unstructured) (Exception, error) {
	gvk := u.GroupVersionKind()
	if gvk.Group != Group || gvk.Kind != KindPolicyException || !knownVersions[gvk.Version] {
		return Exception{}, fmt.Errorf("%s %q is not a %s PolicyException", gvk.Kind, u.GetName(), Group)
	}
	obj := &policiesv1beta1.PolicyException{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return Exception{}, fmt.Errorf("decoding PolicyException %q: %w", u.GetName(), err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: Group, Version: "v1beta1", Kind: KindPolicyException})
	return Exception{Object: obj}, nil
}
