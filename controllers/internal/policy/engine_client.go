package policy

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// DefaultTimeout bounds one evaluation unless set otherwise: far more than
// real policies need on real plans, and short enough that a costly
// expression or a huge plan cannot hold a reconcile worker for long.
const DefaultTimeout = 30 * time.Second

// killGrace is how long past an evaluation's deadline the engine may take
// to answer (it answers an evaluation it gave up with an errored verdict)
// before it is killed.
const killGrace = 5 * time.Second

// EngineClient evaluates plans in a policy engine process (the
// policy-engine binary at Path), so that the process that uses it never
// links or loads Kyverno's engine. The engine starts with the first
// evaluation that has a policy, serves every evaluation after it (keeping
// policies compiled) and is started again when it died. Evaluations run one
// at a time; EngineClient is safe for concurrent use.
//
// Like the engine it fails closed: an engine that cannot start, dies, or
// does not answer in time gives an errored verdict (it is killed if it
// still runs), and the next evaluation starts a new engine.
type EngineClient struct {
	// Path is the policy-engine binary.
	Path string
	// Timeout bounds one evaluation; zero means DefaultTimeout.
	Timeout time.Duration

	// slot is the right to use proc: one evaluation at a time, the
	// namespaces waiting for it taking turns.
	slot   slot
	proc   *engineProcess
	closed bool
}

// NewEngineClient returns a client of the policy engine at path, with
// DefaultTimeout. It starts nothing.
func NewEngineClient(path string) *EngineClient {
	return &EngineClient{Path: path, Timeout: DefaultTimeout}
}

// Evaluate evaluates planJSON, a plan of a Workspace in namespace, against
// policies in the engine and records the magos_policy_* metrics. Selecting
// no policy passes without an engine. Evaluations wait for the engine in
// turns across namespaces. It never returns an error: anything that prevents a full
// evaluation gives a Verdict with Errored set and Passed false.
func (c *EngineClient) Evaluate(ctx context.Context, namespace string, policies []Policy, planJSON []byte) policyprotocol.Verdict {
	start := time.Now()
	var v policyprotocol.Verdict
	if len(policies) == 0 {
		v = policyprotocol.Verdict{Passed: true, Policies: []string{}, Message: "No policy applied: no ValidatingPolicy selected for this Workspace"}
	} else {
		v = c.evaluate(ctx, namespace, policies, planJSON)
	}
	metrics.RecordPolicyEvaluation(v.Result(), time.Since(start).Seconds())
	for _, viol := range v.Violations {
		metrics.RecordPolicyViolation(viol.Policy, viol.Action)
	}
	return v
}

// Close stops the engine, waiting for an evaluation in progress; later
// evaluations give errored verdicts.
func (c *EngineClient) Close() error {
	_ = c.slot.acquire(context.Background(), "", 0) // never gives up
	defer c.slot.release()
	c.closed = true
	if c.proc != nil {
		c.proc.stop()
		c.proc = nil
	}
	return nil
}

// answer is what the engine answered, or why it did not.
type answer struct {
	verdict policyprotocol.Verdict
	err     error
}

func (c *EngineClient) evaluate(ctx context.Context, namespace string, policies []Policy, planJSON []byte) policyprotocol.Verdict {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// A reconcile waits for the one evaluation slot no longer than one
	// evaluation may take: a Workspace whose policies run to their
	// deadline holds up the others for that long, not for as long as
	// evaluations keep coming. The errored verdict is retried.
	if err := c.slot.acquire(ctx, namespace, timeout); err != nil {
		return policyprotocol.Errored(err.Error())
	}
	defer c.slot.release()
	if c.closed {
		return policyprotocol.Errored("the policy engine is stopped")
	}
	p, err := c.running(ctx)
	if err != nil {
		return policyprotocol.Errored(err.Error())
	}
	done := make(chan answer, 1)
	go func() {
		if err := WriteEngineRequest(p.stdin, policies, planJSON, timeout); err != nil {
			done <- answer{err: fmt.Errorf("sending the request: %w", err)}
			return
		}
		v, err := policyprotocol.ReadResponse(p.stdout)
		done <- answer{verdict: v, err: err}
	}()
	wait := time.NewTimer(timeout + killGrace)
	defer wait.Stop()
	var reason string
	answered := false
	select {
	case a := <-done:
		if a.err == nil {
			return a.verdict
		}
		answered, reason = true, a.err.Error()
	case <-wait.C:
		reason = fmt.Sprintf("the policy engine did not answer within %s", timeout+killGrace)
	case <-ctx.Done():
		reason = "not evaluated: " + context.Cause(ctx).Error()
	}
	// The stream is out of step, or the engine gone: stop it (if it still
	// runs) and start a new one next time.
	p.stop()
	if !answered {
		<-done
	}
	c.proc = nil
	log.FromContext(ctx).Info("Stopped the policy engine after a failed evaluation; the next evaluation starts it again", "exit", p.exitStatus())
	return policyprotocol.Errored(fmt.Sprintf("%s (policy engine %s); it is started again for the next evaluation", reason, p.exitStatus()))
}

// running returns the engine, starting it if it never ran or has exited.
func (c *EngineClient) running(ctx context.Context) (*engineProcess, error) {
	if c.proc != nil && c.proc.alive() {
		return c.proc, nil
	}
	logger := log.FromContext(ctx)
	if c.proc != nil {
		c.proc.stop()
		logger.Info("The policy engine exited; starting it again", "exit", c.proc.exitStatus())
		c.proc = nil
	}
	logger.Info("Starting the policy engine", "path", c.Path)
	p, err := startEngine(c.Path)
	if err != nil {
		return nil, err
	}
	c.proc = p
	return p, nil
}
