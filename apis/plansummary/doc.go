// Package plansummary reads what a plan would do from the engine's plan
// JSON (`show -json`): its resource changes, and how many resources it
// adds, changes and destroys. The runner counts with it when it stores a
// plan; kubectl magos lists the changes of a plan stored without a
// rendering.
package plansummary
