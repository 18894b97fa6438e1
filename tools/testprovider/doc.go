// Command terraform-provider-magostest is a small, real Terraform/OpenTofu
// provider used by the Magos end-to-end tests.
//
// It manages local files through the magostest_file resource and reads them
// through the magostest_file data source, so a test can install a provider
// from a filesystem mirror, apply a configuration, edit the managed file out
// of band and watch a re-plan report the drift. See README.md for the mirror
// layout and the CLI configuration OpenTofu needs to find it.
package main
