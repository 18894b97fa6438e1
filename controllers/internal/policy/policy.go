package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	policieskyvernoio "github.com/kyverno/api/api/policies.kyverno.io"
	policiesv1beta1 "github.com/kyverno/api/api/policies.kyverno.io/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of Kyverno's CEL policies.
const Group = policiesv1beta1.GroupName

// Kinds of policy the gate evaluates.
const (
	KindValidatingPolicy           = policieskyvernoio.ValidatingPolicyKind
	KindNamespacedValidatingPolicy = policieskyvernoio.NamespacedValidatingPolicyKind
)

// Kinds are the policy kinds the gate reads, which a controller watches
// where Kyverno's CRDs are installed.
var Kinds = []schema.GroupKind{{Group: Group, Kind: KindValidatingPolicy}, {Group: Group, Kind: KindNamespacedValidatingPolicy}}

// servedVersions are the versions of Group that hold ValidatingPolicies, in
// order of preference. They share one schema and one storage, so an object
// read at any of them decodes into the v1beta1 types Kyverno's engine takes.
var servedVersions = []string{"v1", "v1beta1"}

// knownVersions are the versions FromUnstructured accepts.
var knownVersions = map[string]bool{"v1": true, "v1beta1": true, "v1alpha1": true}

// Policy is one ValidatingPolicy or NamespacedValidatingPolicy the gate
// evaluates.
type Policy struct {
	// Object is the policy in the types Kyverno's engine reads.
	Object policiesv1beta1.ValidatingPolicyLike
	// Exceptions are the waivers bound to the plan that refer to the
	// policy (WithWaivers): a denial they match does not block.
	Exceptions []Exception
}

// Name identifies the policy in verdicts and messages: its name for a
// ValidatingPolicy, namespace/name for a NamespacedValidatingPolicy.
func (p Policy) Name() string {
	if p.Object == nil {
		return "<nil>"
	}
	if ns := p.Object.GetNamespace(); ns != "" {
		return ns + "/" + p.Object.GetName()
	}
	return p.Object.GetName()
}

// Kind is ValidatingPolicy or NamespacedValidatingPolicy.
func (p Policy) Kind() string {
	if p.Object == nil {
		return ""
	}
	return p.Object.GetKind()
}

// JSONMode reports whether the policy evaluates JSON payloads
// (spec.evaluation.mode: JSON), the only mode that applies to plans.
func (p Policy) JSONMode() bool {
	return p.Object != nil &&
		p.Object.GetValidatingPolicySpec().EvaluationMode() == policieskyvernoio.EvaluationModeJSON
}

// Digest identifies the policies and their specs, whatever their order: it
// changes when a policy is added, removed or edited, so a verdict recorded
// with it can be re-evaluated when the selected policies change.
func Digest(policies []Policy) string {
	entries := make([]string, 0, len(policies))
	for _, p := range policies {
		spec := []byte("null")
		if p.Object != nil {
			var err error
			if spec, err = json.Marshal(p.Object.GetValidatingPolicySpec()); err != nil {
				spec = []byte(err.Error())
			}
		}
		entries = append(entries, p.Kind()+"/"+p.Name()+"\x00"+string(spec))
	}
	slices.Sort(entries)
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// FromUnstructured converts a ValidatingPolicy or NamespacedValidatingPolicy
// read at any version of policies.kyverno.io (v1, v1beta1, v1alpha1; they
// share one schema) into a Policy.
func FromUnstructured(u *unstructured.Unstructured) (Policy, error) {
	gvk := u.GroupVersionKind()
	if gvk.Group != Group || !knownVersions[gvk.Version] {
		return Policy{}, fmt.Errorf("%s %q is not a %s policy", gvk.Kind, u.GetName(), Group)
	}
	var obj policiesv1beta1.ValidatingPolicyLike
	switch gvk.Kind {
	case KindValidatingPolicy:
		obj = &policiesv1beta1.ValidatingPolicy{}
	case KindNamespacedValidatingPolicy:
		obj = &policiesv1beta1.NamespacedValidatingPolicy{}
	default:
		return Policy{}, fmt.Errorf("kind %s of %q is not a ValidatingPolicy or NamespacedValidatingPolicy", gvk.Kind, u.GetName())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return Policy{}, fmt.Errorf("decoding %s %q: %w", gvk.Kind, u.GetName(), err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: Group, Version: "v1beta1", Kind: gvk.Kind})
	return Policy{Object: obj}, nil
}
