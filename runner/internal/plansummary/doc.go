// Package plansummary reads what a plan would do from the engine's plan
// JSON (`show -json`): how many resources it adds, changes and destroys.
package plansummary
