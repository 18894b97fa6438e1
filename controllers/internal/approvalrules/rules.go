// Package approvalrules compiles and evaluates approval rules
// (spec.approvalRules): CEL expressions over a plan's summary, the
// resources it changes and its Workspace that pick the rule governing a
// plan.
package approvalrules

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/plansummary"
)

// Plan is what a rule's `when` reads of the plan and its Workspace.
type Plan struct {
	Add, Change, Destroy int64
	DestroyMode, Drift   bool
	// Resources are the resources the plan changes, from its plan JSON;
	// read only where a rule asks (ReadsResources).
	Resources       []plansummary.ResourceChange
	Name, Namespace string
	Labels          map[string]string
}

// costLimit bounds one evaluation of a `when`, as Kubernetes bounds one
// CEL expression: enough to look at every resource of a large plan a few
// times.
const costLimit = 1_000_000

// Rules are compiled approval rules.
type Rules struct {
	rules    []magosv1.ApprovalRule
	programs []cel.Program // nil for a rule without `when`
	field    string
}

// env declares `plan` and `workspace`.
var env = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("plan", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("workspace", cel.MapType(cel.StringType, cel.DynType)),
	)
})

// maxPrograms bounds the compiled expressions kept: every Workspace and
// Project may bring rules of its own, and a rule edited again and again
// leaves its old expressions behind.
const maxPrograms = 1024

// programs caches compiled expressions, which are safe to share, the
// least recently used evicted beyond maxPrograms.
var programs = newLRU[cel.Program](maxPrograms, maxPrograms)

// Compile compiles rules; field names them in errors (e.g.
// "spec.approvalRules").
func Compile(rules []magosv1.ApprovalRule, field string) (*Rules, error) {
	r := &Rules{rules: rules, programs: make([]cel.Program, len(rules)), field: field}
	for i, rule := range rules {
		if rule.When == "" {
			continue
		}
		prg, err := compile(rule.When)
		if err != nil {
			return nil, fmt.Errorf("%s[%d] (%s).when: %w", field, i, rule.Name, err)
		}
		r.programs[i] = prg
	}
	return r, nil
}

func compile(expr string) (cel.Program, error) {
	if p, ok := programs.get(expr); ok {
		return p, nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if !ast.OutputType().IsExactType(cel.BoolType) && !ast.OutputType().IsExactType(cel.DynType) {
		return nil, fmt.Errorf("is of type %s, not bool", ast.OutputType())
	}
	prg, err := e.Program(ast, cel.CostLimit(costLimit))
	if err != nil {
		return nil, err
	}
	programs.add(expr, prg, 1)
	return prg, nil
}

// ReadsResources reports whether a rule reads plan.resources, which
// needs the plan JSON.
func (r *Rules) ReadsResources() bool {
	if r == nil {
		return false
	}
	for _, rule := range r.rules {
		if strings.Contains(rule.When, "resources") {
			return true
		}
	}
	return false
}

// resourcesOf renders the changed resources as `plan.resources` entries.
func resourcesOf(rcs []plansummary.ResourceChange) []any {
	out := []any{}
	for _, rc := range rcs {
		if !rc.Changes() {
			continue
		}
		actions := make([]any, 0, len(rc.Change.Actions))
		for _, a := range rc.Change.Actions {
			actions = append(actions, a)
		}
		out = append(out, map[string]any{
			"address": rc.Address, "module": rc.ModuleAddress, "mode": rc.Mode,
			"type": rc.Type, "name": rc.Name, "actions": actions,
		})
	}
	return out
}

// Govern is the first rule whose `when` holds for p, nil when none does
// (or there are no rules).
func (r *Rules) Govern(p Plan) (*magosv1.ApprovalRule, error) {
	if r == nil {
		return nil, nil
	}
	labels := map[string]any{}
	for k, v := range p.Labels {
		labels[k] = v
	}
	vars := map[string]any{
		"plan": map[string]any{"add": p.Add, "change": p.Change, "destroy": p.Destroy, "destroyMode": p.DestroyMode, "drift": p.Drift,
			"resources": resourcesOf(p.Resources)},
		"workspace": map[string]any{"name": p.Name, "namespace": p.Namespace, "labels": labels},
	}
	for i := range r.rules {
		if r.programs[i] == nil {
			return &r.rules[i], nil
		}
		out, _, err := r.programs[i].Eval(vars)
		if err != nil {
			return nil, fmt.Errorf("%s[%d] (%s).when: %w", r.field, i, r.rules[i].Name, err)
		}
		holds, ok := out.Value().(bool)
		if !ok {
			return nil, fmt.Errorf("%s[%d] (%s).when: gave %v, not true or false", r.field, i, r.rules[i].Name, out.Value())
		}
		if holds {
			return &r.rules[i], nil
		}
	}
	return nil, nil
}
