package policyengine

import (
	"errors"
	"fmt"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// ErrNoSandbox: the kernel or the binary cannot sandbox the engine
// (Sandbox); the engine then runs without it and says so.
var ErrNoSandbox = errors.New("the policy engine cannot sandbox itself")

// landlockNetABI is the first Landlock ABI that restricts TCP (Linux 6.7).
const landlockNetABI = 4

// landlockSandbox is what a Landlock ruleset of ABI abi (0: none) takes
// from the engine: every file from ABI 1 (Linux 5.13), binding and
// connecting TCP sockets from ABI 4 (Linux 6.7).
func landlockSandbox(abi int) policyprotocol.Sandbox {
	switch {
	case abi < 1:
		return policyprotocol.Sandbox{Missing: "no Landlock (Linux 5.13 restricts files, 6.7 TCP)"}
	case abi < landlockNetABI:
		return policyprotocol.Sandbox{Files: true,
			Missing: fmt.Sprintf("Landlock ABI %d cannot restrict TCP (ABI %d, Linux 6.7)", abi, landlockNetABI)}
	}
	return policyprotocol.Sandbox{Files: true, Network: true}
}
