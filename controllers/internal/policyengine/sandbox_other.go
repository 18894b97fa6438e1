//go:build !linux

package policyengine

import "fmt"

// Sandbox is Linux's Landlock only.
func Sandbox() error { return fmt.Errorf("%w: Landlock is Linux's", ErrNoSandbox) }
