package policyprotocol

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// maxLine bounds one request header or response line. A header holds
// the selected policies and a response a verdict, whose messages are
// bounded: both are far below this.
const maxLine = 64 << 20

// Request is the header of one evaluation request.
type Request struct {
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
func (r Request) Timeout() time.Duration {
	return time.Duration(r.TimeoutMillis) * time.Millisecond
}

// Response answers one request.
type Response struct {
	Verdict Verdict `json:"verdict"`
}

// WriteRequest writes one request: req's header, with PlanBytes set, then
// the plan JSON.
func WriteRequest(w io.Writer, req Request, planJSON []byte) error {
	req.PlanBytes = len(planJSON)
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

// ReadRequest reads one request: its header and the plan JSON. It
// returns io.EOF when the stream ends before a request starts; after any
// other error the stream is out of step.
func ReadRequest(r *bufio.Reader) (Request, []byte, error) {
	var req Request
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

// WriteResponse writes one response.
func WriteResponse(w io.Writer, v Verdict) error {
	data, err := json.Marshal(Response{Verdict: v})
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadResponse reads one response.
func ReadResponse(r *bufio.Reader) (Verdict, error) {
	var resp Response
	err := readLine(r, &resp)
	return resp.Verdict, err
}

// readLine decodes one line of JSON of at most maxLine bytes into v.
// It returns io.EOF when the stream ends before the line starts.
func readLine(r *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return fmt.Errorf("a line of the policy engine protocol is longer than %d bytes", maxLine)
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
