package policyengine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
)

// Serve answers the requests of the policy engine protocol
// (package apis/policyprotocol) read from in, one
// verdict each on out, until in ends. One Evaluator serves every request,
// so a policy is compiled once and again only when its spec changes.
//
// A request whose policies cannot be decoded gets an errored verdict. A
// request that cannot be read leaves the stream out of step: Serve answers
// it with an errored verdict and returns the error.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	e, err := NewEvaluator()
	if err != nil {
		return err
	}
	// Each request carries its deadline.
	e.Timeout = 0
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		req, planJSON, err := policyprotocol.ReadRequest(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errors.Join(fmt.Errorf("reading a request: %w", err),
				policyprotocol.WriteResponse(out, policyprotocol.Errored("the policy engine could not read the request: "+err.Error())))
		}
		if err := policyprotocol.WriteResponse(out, evaluate(ctx, e, req, planJSON)); err != nil {
			return fmt.Errorf("writing a verdict: %w", err)
		}
	}
}

// evaluate answers one request within its deadline.
func evaluate(ctx context.Context, e *Evaluator, req policyprotocol.Request, planJSON []byte) policyprotocol.Verdict {
	policies, err := policy.DecodeRequest(req)
	if err != nil {
		return policyprotocol.Errored(err.Error())
	}
	ctx, cancel := withDeadline(ctx, req.Timeout())
	defer cancel()
	return e.Evaluate(ctx, policies, planJSON)
}
