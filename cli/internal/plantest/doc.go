// Package plantest stores plans in memory as a plan run stores them, for
// the tests of what reads and shows them (plan show, the UI's plan).
package plantest
