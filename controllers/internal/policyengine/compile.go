package policyengine

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	policiesv1beta1 "github.com/kyverno/api/api/policies.kyverno.io/v1beta1"
	vpolcompiler "github.com/kyverno/kyverno/pkg/cel/policies/vpol/compiler"
	vpolengine "github.com/kyverno/kyverno/pkg/cel/policies/vpol/engine"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
)

// maxCached bounds the compiled-policy cache; past it the cache starts
// afresh (policies are few, so this only guards against churn).
const maxCached = 4096

// compiled is one policy compiled into its own Kyverno engine, or the
// error compiling it gave.
type compiled struct {
	digest [sha256.Size]byte
	engine vpolengine.Engine
	action string
	err    error
}

// compiledCache holds one compiled entry per policy identity, replaced
// when the policy's spec changes.
type compiledCache struct {
	mu      sync.Mutex
	entries map[string]*compiled
}

// get returns the compiled form of p with its exceptions, compiling it on
// first use or when its spec or its exceptions changed. Compile errors are
// cached too: the same spec fails the same way.
func (c *compiledCache) get(compiler vpolcompiler.Compiler, p policy.Policy) *compiled {
	key := p.Kind() + "/" + p.Name()
	h := sha256.New()
	spec, err := json.Marshal(p.Object.GetValidatingPolicySpec())
	if err != nil {
		return &compiled{err: fmt.Errorf("encoding spec: %w", err)}
	}
	h.Write(spec)
	for _, e := range p.Exceptions {
		key += "|" + e.Name()
		exSpec, err := json.Marshal(e.Object.Spec)
		if err != nil {
			return &compiled{err: fmt.Errorf("encoding PolicyException %s: %w", e.Name(), err)}
		}
		h.Write([]byte{0})
		h.Write(exSpec)
	}
	var digest [sha256.Size]byte
	h.Sum(digest[:0])

	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.digest == digest {
		return e
	}

	e = compile(compiler, p)
	e.digest = digest
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCached {
		c.entries = map[string]*compiled{}
	}
	c.entries[key] = e
	c.mu.Unlock()
	return e
}

// compile builds a Kyverno engine holding p alone (with the exceptions
// that refer to it), so that one broken policy fails only itself. The gate is fail closed, so the policy is
// compiled with failurePolicy Fail whatever it says: with Ignore, Kyverno
// would skip a policy whose matchConditions error.
func compile(compiler vpolcompiler.Compiler, p policy.Policy) (out *compiled) {
	defer func() {
		if r := recover(); r != nil {
			out = &compiled{err: fmt.Errorf("compiling panicked: %v", r)}
		}
	}()
	obj, ok := p.Object.DeepCopyObject().(policiesv1beta1.ValidatingPolicyLike)
	if !ok {
		return &compiled{err: fmt.Errorf("unexpected policy type %T", p.Object)}
	}
	fail := admissionregistrationv1.Fail
	obj.GetValidatingPolicySpec().FailurePolicy = &fail
	var exceptions []*policiesv1beta1.PolicyException
	for _, e := range p.Exceptions {
		exceptions = append(exceptions, e.Object.DeepCopy())
	}
	provider, err := vpolengine.NewProvider(compiler, []policiesv1beta1.ValidatingPolicyLike{obj}, exceptions)
	if err != nil {
		// Kyverno wraps the field errors in "failed to compile policy
		// <name> (...)"; the caller names the policy already.
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return &compiled{err: err}
	}
	return &compiled{
		engine: vpolengine.NewEngine(provider, nil, nil),
		action: strongestAction(obj.GetValidatingPolicySpec().ValidationActions()),
	}
}

// strongestAction picks the action a violation of a policy with these
// validationActions carries: Deny if present, else Warn, else Audit.
func strongestAction(actions []admissionregistrationv1.ValidationAction) string {
	has := map[admissionregistrationv1.ValidationAction]bool{}
	for _, a := range actions {
		has[a] = true
	}
	switch {
	case has[admissionregistrationv1.Deny]:
		return policyprotocol.ActionDeny
	case has[admissionregistrationv1.Warn]:
		return policyprotocol.ActionWarn
	case has[admissionregistrationv1.Audit]:
		return policyprotocol.ActionAudit
	default:
		// An action Kyverno does not know: fail closed.
		return policyprotocol.ActionDeny
	}
}
