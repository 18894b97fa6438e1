// Package provider implements the magostest Terraform/OpenTofu provider with
// terraform-plugin-framework: the provider itself (optional config attribute
// root), the magostest_file resource and the magostest_file data source.
//
// The resource writes a local file and reads it back on every refresh, so an
// edit made outside Terraform shows up as drift (an in-place update), and a
// removed file drops the resource from state (a re-create). When root is
// set, every path is resolved under it and may not escape it, neither
// lexically (".." or an absolute path elsewhere) nor through a symlink.
package provider
