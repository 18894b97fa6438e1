//go:build !linux

package policyengine

import (
	"fmt"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// Sandbox is Linux's Landlock only.
func Sandbox() (policyprotocol.Sandbox, error) {
	err := fmt.Errorf("%w: Landlock is Linux's", ErrNoSandbox)
	return policyprotocol.Sandbox{Missing: err.Error()}, err
}
