// Package engine finds the OpenTofu or Terraform binary of the requested
// version and drives it through github.com/hashicorp/terraform-exec: init,
// plan to a file, the plan's JSON, apply of a saved plan, destroy and
// outputs. It also recognises the engine failures the runner reports
// specially: a stale saved plan and a held state lock.
package engine
