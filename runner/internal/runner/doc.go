// Package runner runs one phase of a Workspace (plan, apply or destroy) from
// start to report: it reads the configuration, fetches and extracts the
// artifact, picks the engine, sets up the state backend, drives the engine,
// stores or loads the plan, writes outputs, and always writes a RunResult
// as the container's termination message. Everything it prints, including
// the engine's output, goes through a masker that hides the values of the
// variables named in MAGOS_SENSITIVE_ENV.
package runner
