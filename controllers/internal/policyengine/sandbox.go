package policyengine

import "errors"

// ErrNoSandbox: the kernel or the binary cannot sandbox the engine
// (Sandbox); the engine then runs without it and says so.
var ErrNoSandbox = errors.New("the policy engine cannot sandbox itself")
