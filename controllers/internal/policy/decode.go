package policy

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// DecodeYAML decodes every document of YAML or JSON data into a policy;
// empty documents are skipped.
func DecodeYAML(data []byte) ([]Policy, error) {
	docs, err := policyprotocol.PoliciesFromYAML(data)
	if err != nil {
		return nil, err
	}
	out := make([]Policy, 0, len(docs))
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(doc); err != nil {
			return nil, err
		}
		p, err := FromUnstructured(u)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
