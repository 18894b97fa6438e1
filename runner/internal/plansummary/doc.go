// Package plansummary reads what a plan would do from the engine's plan
// JSON (`show -json`): how many resources it adds, changes and destroys, and
// the plan's digest, the value the controller approves and the runner checks
// before an apply.
package plansummary
