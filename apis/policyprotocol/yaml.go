package policyprotocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// policyKinds are the kinds of policies.kyverno.io a request carries.
var policyKinds = map[string]bool{"ValidatingPolicy": true, "NamespacedValidatingPolicy": true}

// PoliciesFromYAML reads every document of YAML or JSON data as the JSON
// of a policy a request carries: a ValidatingPolicy or
// NamespacedValidatingPolicy of policies.kyverno.io. Empty documents are
// skipped; a document of any other kind is an error. The engine checks
// the rest.
func PoliciesFromYAML(data []byte) ([]json.RawMessage, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []json.RawMessage
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		if gvk := u.GroupVersionKind(); gvk.Group != "policies.kyverno.io" || !policyKinds[gvk.Kind] {
			return nil, fmt.Errorf("%s %q is not a ValidatingPolicy or NamespacedValidatingPolicy of policies.kyverno.io", u.GetKind(), u.GetName())
		}
		raw, err := u.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
}
