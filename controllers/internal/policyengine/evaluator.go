package policyengine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	celengine "github.com/kyverno/kyverno/pkg/cel/engine"
	"github.com/kyverno/kyverno/pkg/cel/libs"
	vpolcompiler "github.com/kyverno/kyverno/pkg/cel/policies/vpol/compiler"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
)

// libsOnce initialises Kyverno's process-wide CEL library context, which
// its compiler otherwise sets lazily and unsynchronised on first use.
var libsOnce sync.Once

// Evaluator evaluates plan JSON against policies with Kyverno's engine.
// Create one with NewEvaluator and share it; it is safe for concurrent use
// and caches each policy's compiled form until its spec changes.
type Evaluator struct {
	// Timeout bounds one evaluation of a plan against all its policies;
	// zero means no bound beyond the caller's context.
	Timeout time.Duration
	// MaxPlanMemory bounds the estimated memory a plan takes once decoded;
	// a bigger plan is refused before it is decoded. Zero means no bound.
	MaxPlanMemory int64
	compiler      vpolcompiler.Compiler
	cache         compiledCache
}

// NewEvaluator returns an Evaluator with policy.DefaultTimeout and
// DefaultMaxPlanMemory.
func NewEvaluator() (*Evaluator, error) {
	libsOnce.Do(func() { libs.GetLibsCtx() })
	return &Evaluator{compiler: vpolcompiler.NewCompiler(), Timeout: policy.DefaultTimeout, MaxPlanMemory: DefaultMaxPlanMemory}, nil
}

// Evaluate evaluates planJSON (`tofu show -json` of a plan) against
// policies. It never returns an error: anything that prevents a full
// evaluation gives a Verdict with Errored set and Passed false. If ctx ends
// or the Timeout passes first, evaluation stops with an errored verdict
// that says so (a policy still running finishes in the background).
func (e *Evaluator) Evaluate(ctx context.Context, policies []policy.Policy, planJSON []byte) policyprotocol.Verdict {
	ctx, cancel := withDeadline(ctx, e.Timeout)
	defer cancel()
	return e.evaluate(ctx, policies, planJSON)
}

// withDeadline bounds ctx by timeout, with a cause that names it; zero
// means no bound.
func withDeadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, fmt.Errorf("policy evaluation exceeded its deadline of %s", timeout))
}

// policyError is a policy that could not be evaluated.
type policyError struct {
	policy string
	err    string
}

// outcome is what evaluating one policy gave.
type outcome struct {
	violation *policyprotocol.Violation
	skipped   bool
	err       error
	// exceptions name (namespace/name) the PolicyExceptions the engine
	// reported as matching.
	exceptions []string
}

func (e *Evaluator) evaluate(ctx context.Context, policies []policy.Policy, planJSON []byte) policyprotocol.Verdict {
	err := checkPlanSize(planJSON, e.MaxPlanMemory)
	var plan map[string]any
	if err == nil {
		plan, err = parsePlan(planJSON)
	}
	if err != nil {
		return policyprotocol.Errored(err.Error())
	}
	v := policyprotocol.Verdict{Policies: []string{}}
	for _, p := range policies {
		v.Policies = append(v.Policies, p.Name())
	}
	slices.Sort(v.Policies)
	v.Policies = slices.Compact(v.Policies)
	if len(policies) == 0 {
		v.Passed = true
		v.Message = "No policy applied: no ValidatingPolicy selected for this Workspace"
		return v
	}

	var errs []policyError
	skipped := 0
	for _, p := range policies {
		if ctx.Err() != nil {
			errs = append(errs, policyError{policy: p.Name(), err: "not evaluated: " + context.Cause(ctx).Error()})
			break
		}
		o := e.evaluatePolicy(ctx, withoutWaivers(p), plan)
		if o.violation != nil && o.violation.Blocking() && len(p.Exceptions) > 0 {
			e.applyWaivers(ctx, p, plan, o.violation)
		}
		switch {
		case o.err != nil:
			errs = append(errs, policyError{policy: p.Name(), err: policyprotocol.Truncate(policyprotocol.OneLine(o.err.Error()), policyprotocol.MessageLimit)})
		case o.skipped:
			skipped++
		case o.violation != nil:
			v.Violations = append(v.Violations, *o.violation)
		}
	}
	slices.SortStableFunc(v.Violations, func(a, b policyprotocol.Violation) int {
		return cmp.Or(-cmp.Compare(rank(a.Action), rank(b.Action)), cmp.Compare(a.Policy, b.Policy))
	})
	blocking := 0
	for _, viol := range v.Violations {
		if viol.Blocking() {
			blocking++
		}
	}
	switch {
	case len(errs) > 0:
		v.Errored = true
		parts := make([]string, 0, len(errs))
		for _, pe := range errs {
			parts = append(parts, fmt.Sprintf("policy %q: %s", pe.policy, pe.err))
		}
		v.Message = policyprotocol.Truncate(fmt.Sprintf("Policy evaluation failed, apply blocked: %s", strings.Join(parts, "; ")), policyprotocol.VerdictMessageLimit)
	case blocking > 0:
		v.Message = policyprotocol.StatusMessage(v, policyprotocol.VerdictMessageLimit)
	default:
		v.Passed = true
		suffix := ""
		if skipped > 0 {
			suffix = fmt.Sprintf(" (%d not applicable by matchConditions)", skipped)
		}
		v.Message = policyprotocol.StatusMessage(v, policyprotocol.VerdictMessageLimit-len(suffix)) + suffix
	}
	return v
}

// rank orders actions by strength for sorting violations.
// withoutWaivers is p evaluated on its own: what it says of the plan
// before any waiver.
func withoutWaivers(p policy.Policy) policy.Policy {
	p.Exceptions = nil
	return p
}

// applyWaivers evaluates p again with the waivers that refer to it, as
// Kyverno applies PolicyExceptions (their matchConditions over the plan,
// and exceptions.allowedValues in the policy's expressions): where the
// denial v no longer holds, it is waived by the exceptions that matched
// (the engine names them; all of p's when it does not). An exception that
// cannot be evaluated waives nothing, and v says why.
func (e *Evaluator) applyWaivers(ctx context.Context, p policy.Policy, plan map[string]any, v *policyprotocol.Violation) {
	w := e.evaluatePolicy(ctx, p, plan)
	switch {
	case w.err != nil:
		v.Message = policyprotocol.Truncate(v.Message+" (PolicyExceptions not applied: "+policyprotocol.OneLine(w.err.Error())+")", policyprotocol.MessageLimit)
		return
	case w.violation != nil:
		return
	}
	by := slices.Compact(slices.Sorted(slices.Values(w.exceptions)))
	if len(by) == 0 {
		for _, ex := range p.Exceptions {
			by = append(by, ex.Name())
		}
	}
	v.WaivedBy = by
}

func rank(action string) int {
	switch action {
	case policyprotocol.ActionDeny:
		return 2
	case policyprotocol.ActionWarn:
		return 1
	default:
		return 0
	}
}

// parsePlan decodes plan JSON the way Kyverno's CLI decodes JSON payloads
// (encoding/json: numbers are float64) and checks it looks like a plan.
func parsePlan(planJSON []byte) (map[string]any, error) {
	var plan map[string]any
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		return nil, fmt.Errorf("plan JSON cannot be parsed: %w", err)
	}
	if plan == nil {
		return nil, errors.New("plan JSON is empty (null)")
	}
	if _, ok := plan["format_version"]; !ok {
		return nil, errors.New("plan JSON has no format_version: not the output of `tofu show -json` for a plan")
	}
	return plan, nil
}

// evaluatePolicy runs one policy's engine on the plan, giving up when ctx
// ends.
func (e *Evaluator) evaluatePolicy(ctx context.Context, p policy.Policy, plan map[string]any) outcome {
	if p.Object == nil {
		return outcome{err: errors.New("policy is nil")}
	}
	if !p.JSONMode() {
		return outcome{err: errors.New("spec.evaluation.mode is not JSON: only JSON-mode policies can evaluate plans")}
	}
	c := e.cache.get(e.compiler, p)
	if c.err != nil {
		return outcome{err: fmt.Errorf("does not compile: %w", c.err)}
	}
	done := make(chan outcome, 1)
	go func() { done <- run(ctx, c, p.Name(), plan) }()
	select {
	case o := <-done:
		return o
	case <-ctx.Done():
		return outcome{err: fmt.Errorf("evaluation abandoned: %w", context.Cause(ctx))}
	}
}

// run evaluates one compiled policy and turns Kyverno's rule responses into
// an outcome.
func run(ctx context.Context, c *compiled, name string, plan map[string]any) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{err: fmt.Errorf("evaluation panicked: %v", r)}
		}
	}()
	resp, err := c.engine.Handle(ctx, celengine.RequestFromJSON(nil, &unstructured.Unstructured{Object: plan}), nil)
	if err != nil {
		return outcome{err: err}
	}
	var rules []engineapi.RuleResponse
	for _, pr := range resp.Policies {
		rules = append(rules, pr.Rules...)
	}
	if len(rules) == 0 {
		return outcome{err: errors.New("the engine returned no result")}
	}
	o.skipped = true
	for i := range rules {
		r := &rules[i]
		for _, ex := range r.Exceptions() {
			o.exceptions = append(o.exceptions, ex.GetNamespace()+"/"+ex.GetName())
		}
		switch r.Status() {
		case engineapi.RuleStatusPass:
			o.skipped = false
		case engineapi.RuleStatusSkip:
		case engineapi.RuleStatusFail:
			o.skipped = false
			if o.violation == nil {
				o.violation = &policyprotocol.Violation{
					Policy:     name,
					Validation: validationIndex(r),
					Message:    policyprotocol.Truncate(r.Message(), policyprotocol.MessageLimit),
					Action:     c.action,
				}
			}
		case engineapi.RuleStatusError:
			return outcome{err: errors.New(ruleError(r))}
		default:
			return outcome{err: fmt.Errorf("unexpected result %q: %s", r.Status(), r.Message())}
		}
	}
	return o
}

// validationIndexKey is the rule property in which Kyverno reports which
// validation failed.
const validationIndexKey = "cel.validationIndex"

// validationIndex is the index of the failed validation, or -1.
func validationIndex(r *engineapi.RuleResponse) int {
	if i, err := strconv.Atoi(r.Properties()[validationIndexKey]); err == nil {
		return i
	}
	return -1
}

// costLimitExceeded is how cel-go reports an expression it stopped at its
// cost limit (Kubernetes' per-expression limit, which Kyverno's CEL
// environment sets).
const costLimitExceeded = "actual cost limit exceeded"

// ruleError words an errored rule, naming the cost limit when an
// expression ran into it.
func ruleError(r *engineapi.RuleResponse) string {
	msg := ruleCause(r)
	if strings.Contains(msg, costLimitExceeded) {
		msg += fmt.Sprintf(" (the expression reached the CEL cost limit of %d per expression)", celconfig.PerCallLimit)
	}
	return msg
}

// ruleCause is an errored rule's cause: Kyverno reports a validation error
// as "error: <cause>" with the validation index, and an error in
// matchConditions as "failed to load context: <cause>".
func ruleCause(r *engineapi.RuleResponse) string {
	msg := r.Message()
	if r.Name() == "evaluation" {
		return "spec.matchConditions: " + strings.TrimPrefix(msg, "failed to load context: ")
	}
	if i := validationIndex(r); i >= 0 {
		return fmt.Sprintf("spec.validations[%d]: %s", i, strings.TrimPrefix(msg, "error: "))
	}
	return msg
}
