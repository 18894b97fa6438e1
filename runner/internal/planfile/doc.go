// Package planfile reads what an engine's saved plan file carries besides
// the plan the engine renders with `show -json`: the configuration
// snapshot (tfconfig/) the apply evaluates and the backend it writes the
// state to. Neither shows in the plan JSON (the JSON renders expressions
// only as constants or references, and has no backend), so a plan file
// whose snapshot or backend was swapped renders to the approved digest.
// An apply checks both with CheckSnapshot and CheckRunnerBackend or
// CheckUserBackend against what it was given: the digest-verified artifact
// and the backend the runner configures.
//
// The plan file is untrusted input (plan-time configuration code can
// rewrite it): Read bounds what it unpacks and trusts no path in it. It
// refuses a file with an entry name twice (the engine reads the first
// tfplan and a reader keeping the last would check another plan than the
// one applied) or an entry the engine does not write, and rebuilds the
// file from exactly the entries it accepted (File.Binary): the engine is
// given those bytes, so what it renders and applies is what was checked.
package planfile
