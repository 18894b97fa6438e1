// Package mask hides secret values in the runner's output. A Masker knows
// the values of the environment variables named in MAGOS_SENSITIVE_ENV and
// rewrites every occurrence to "(sensitive value)", both in strings (error
// messages, run results) and in streams (the engine's stdout and stderr),
// where a value split across writes is still caught.
package mask
