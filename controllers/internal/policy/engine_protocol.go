package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// WriteEngineRequest writes one request of the policy engine protocol
// (package policyprotocol) for policies, plan and timeout.
// It encodes every policy before it writes anything, so an encoding error
// leaves the stream in step.
func WriteEngineRequest(w io.Writer, policies []Policy, planJSON []byte, timeout time.Duration) error {
	req := policyprotocol.Request{TimeoutMillis: timeout.Milliseconds()}
	sent := map[string]bool{}
	for _, p := range policies {
		if p.Object == nil {
			return errors.New("a policy is nil")
		}
		data, err := json.Marshal(p.Object)
		if err != nil {
			return fmt.Errorf("encoding policy %q: %w", p.Name(), err)
		}
		req.Policies = append(req.Policies, data)
		for _, e := range p.Exceptions {
			if sent[e.Name()] {
				continue
			}
			sent[e.Name()] = true
			data, err := json.Marshal(e.Object)
			if err != nil {
				return fmt.Errorf("encoding PolicyException %q: %w", e.Name(), err)
			}
			req.Exceptions = append(req.Exceptions, data)
		}
	}
	return policyprotocol.WriteRequest(w, req, planJSON)
}

// DecodeRequest decodes a request's policies, each with the exceptions
// that refer to it.
func DecodeRequest(r policyprotocol.Request) ([]Policy, error) {
	policies := make([]Policy, 0, len(r.Policies))
	for i, raw := range r.Policies {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decoding policy %d: %w", i, err)
		}
		p, err := FromUnstructured(u)
		if err != nil {
			return nil, err
		}
		policies = append(policies, p)
	}
	var exceptions []Exception
	for i, raw := range r.Exceptions {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decoding PolicyException %d: %w", i, err)
		}
		e, err := ExceptionFromUnstructured(u)
		if err != nil {
			return nil, err
		}
		exceptions = append(exceptions, e)
	}
	return WithWaivers(policies, exceptions), nil
}
