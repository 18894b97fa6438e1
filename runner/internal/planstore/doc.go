// Package planstore holds no code: its tests run the plan store
// (github.com/magos-dev/magos/apis/planstore) against the local control
// plane, through a clientset set up as the runner's: multi-chunk plans,
// reserved chunks, broken plans and read limits. They live in the runner
// module so that the API module needs neither client-go nor the test
// harness.
package planstore
