// Package planfile reads what an engine's saved plan file carries besides
// the plan the engine renders with `show -json`: the configuration
// snapshot (tfconfig/) the apply evaluates and the backend it writes the
// state to. Neither shows in the plan JSON (the JSON renders expressions
// only as constants or references, and has no backend), so a plan file
// whose snapshot or backend was swapped renders to the approved digest.
// An apply checks both with CheckSnapshot and CheckBackend against what it
// was given: the digest-verified artifact and the backend the runner
// configures.
//
// The plan file is untrusted input (plan-time configuration code can
// rewrite it): Read bounds what it unpacks and trusts no path in it.
package planfile
