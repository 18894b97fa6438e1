package policy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The policy engine protocol: how the workspace-controller asks the policy
// engine process (controllers/policy-engine) to evaluate a plan, and how
// the engine answers. The controller writes requests on the engine's
// stdin and reads one response per request from its stdout, in order; the
// engine exits when its stdin closes.
//
// A request is one line of JSON, an EngineRequest, followed by exactly
// PlanBytes bytes of plan JSON (`tofu show -json`), sent as they are so
// that plan JSON the engine cannot parse still reaches it and gets an
// errored verdict. A response is one line of JSON, an EngineResponse.
// Neither carries anything else: the engine writes nothing else on stdout.

// maxEngineLine bounds one request header or response line. A header holds
// the selected policies and a response a verdict, whose messages are
// bounded: both are far below this.
const maxEngineLine = 64 << 20

// EngineRequest is the header of one evaluation request.
type EngineRequest struct {
	// Policies are the selected policies, each the JSON of a
	// ValidatingPolicy or NamespacedValidatingPolicy at policies.kyverno.io/v1beta1.
	Policies []json.RawMessage `json:"policies"`
	// Exceptions are the waivers bound to the plan, each the JSON of a
	// PolicyException at policies.kyverno.io/v1beta1; each applies to the
	// policies its spec.policyRefs name.
	Exceptions []json.RawMessage `json:"exceptions,omitempty"`
	// PlanBytes is the length of the plan JSON that follows the header.
	PlanBytes int `json:"planBytes"`
	// TimeoutMillis bounds the evaluation; 0 means no bound. The engine
	// answers with an errored verdict when it passes.
	TimeoutMillis int64 `json:"timeoutMillis"`
}

// Timeout is TimeoutMillis as a duration.
func (r EngineRequest) Timeout() time.Duration {
	return time.Duration(r.TimeoutMillis) * time.Millisecond
}

// EngineResponse answers one request.
type EngineResponse struct {
	Verdict Verdict `json:"verdict"`
}

// WriteEngineRequest writes one request for policies, plan and timeout.
// It encodes every policy before it writes anything, so an encoding error
// leaves the stream in step.
func WriteEngineRequest(w io.Writer, policies []Policy, planJSON []byte, timeout time.Duration) error {
	req := EngineRequest{PlanBytes: len(planJSON), TimeoutMillis: timeout.Milliseconds()}
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
	header, err := json.Marshal(req)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	_, _ = bw.Write(header)
	_ = bw.WriteByte('\n')
	_, _ = bw.Write(planJSON)
	return bw.Flush()
}

// ReadEngineRequest reads one request: its header and the plan JSON. It
// returns io.EOF when the stream ends before a request starts; after any
// other error the stream is out of step.
func ReadEngineRequest(r *bufio.Reader) (EngineRequest, []byte, error) {
	var req EngineRequest
	if err := readLine(r, &req); err != nil {
		return req, nil, err
	}
	if req.PlanBytes < 0 {
		return req, nil, fmt.Errorf("planBytes is %d", req.PlanBytes)
	}
	planJSON := make([]byte, req.PlanBytes)
	if _, err := io.ReadFull(r, planJSON); err != nil {
		return req, nil, fmt.Errorf("reading the plan: %w", err)
	}
	return req, planJSON, nil
}

// DecodePolicies decodes the request's policies, each with the
// exceptions that refer to it.
func (r EngineRequest) DecodePolicies() ([]Policy, error) {
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

// WriteEngineResponse writes one response.
func WriteEngineResponse(w io.Writer, v Verdict) error {
	data, err := json.Marshal(EngineResponse{Verdict: v})
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadEngineResponse reads one response.
func ReadEngineResponse(r *bufio.Reader) (Verdict, error) {
	var resp EngineResponse
	err := readLine(r, &resp)
	return resp.Verdict, err
}

// readLine decodes one line of JSON of at most maxEngineLine bytes into v.
// It returns io.EOF when the stream ends before the line starts.
func readLine(r *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxEngineLine {
			return fmt.Errorf("a line of the policy engine protocol is longer than %d bytes", maxEngineLine)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return io.EOF
		}
		return fmt.Errorf("reading a line of the policy engine protocol: %w", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("decoding a line of the policy engine protocol: %w", err)
	}
	return nil
}
