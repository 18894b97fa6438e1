package policyengine

import (
	"fmt"
	"strings"
)

// OpenTofu configurations the tests plan for real. They need no provider
// download: terraform_data, locals, outputs and variables only. Tags,
// labels, ingress rules and public flags live in terraform_data's input map,
// standing in for the attributes of real provider resources.
const (
	// tfTagged: two well-formed resources, one of them protected.
	tfTagged = `
locals {
  owner = "team-a"
}
variable "env" {
  default = "dev"
}
resource "terraform_data" "web" {
  input = {
    tags    = { owner = local.owner, env = var.env }
    ingress = [{ cidr = "10.0.0.0/8", port = 443 }]
  }
}
resource "terraform_data" "db" {
  input = {
    tags   = { owner = local.owner, env = var.env, protected = "true" }
    public = false
  }
}
output "web" {
  value = terraform_data.web.output
}
`
	// tfUntagged: one resource lacks the env tag, one has no input at all.
	tfUntagged = `
resource "terraform_data" "web" {
  input = {
    tags = { owner = "team-a" }
  }
}
resource "terraform_data" "bare" {}
`
	// tfNullTags: tags present but null.
	tfNullTags = `
resource "terraform_data" "web" {
  input = {
    tags = null
  }
}
`
	// tfUnprotected: resources that may be destroyed.
	tfUnprotected = `
resource "terraform_data" "scratch" {
  input = {
    tags = { owner = "team-a", env = "dev", protected = "false" }
  }
}
resource "terraform_data" "tmp" {
  input = {
    labels = { owner = "team-a" }
  }
}
`
	// tfProtectedLabel: protected through labels rather than tags.
	tfProtectedLabel = `
resource "terraform_data" "bucket" {
  input = {
    labels = { protected = "true" }
  }
}
`
	// tfPublic: a resource flagged public.
	tfPublic = `
resource "terraform_data" "lb" {
  input = {
    tags   = { owner = "team-a", env = "dev" }
    public = true
  }
}
`
	// tfOpenIngress: a security-group stand-in open to the world.
	tfOpenIngress = `
resource "terraform_data" "sg" {
  input = {
    tags    = { owner = "team-a", env = "dev" }
    ingress = [
      { cidr = "10.0.0.0/8", port = 443 },
      { cidr = "0.0.0.0/0", port = 22 },
    ]
  }
}
`
	// tfOpenCIDRBlocks: the aws_security_group shape, cidr_blocks lists.
	tfOpenCIDRBlocks = `
resource "terraform_data" "sg" {
  input = {
    tags    = { owner = "team-a", env = "dev" }
    ingress = [{ cidr_blocks = ["10.0.0.0/8", "::/0"], from_port = 80 }]
  }
}
`
	// tfOutputsOnly: locals and outputs, no resource.
	tfOutputsOnly = `
locals {
  name = "magos"
}
output "greeting" {
  value = "hello ${local.name}"
}
`
	// tfSecret: an input that must never reach a verdict message.
	tfSecret = `
resource "terraform_data" "db" {
  input = {
    tags     = { owner = "team-a", env = "dev" }
    password = "s3cr3t-hunter2"
  }
}
`
)

// tfCount is n tagged terraform_data resources.
func tfCount(n int) string {
	return fmt.Sprintf(`
resource "terraform_data" "item" {
  count = %d
  input = {
    tags = { owner = "team-a", env = "dev" }
  }
}
`, n)
}

// tfEnv is tfTagged with the env variable defaulting to env.
func tfEnv(env string) string {
	return strings.Replace(tfTagged, `default = "dev"`, fmt.Sprintf("default = %q", env), 1)
}

// tfTrigger is a protected resource replaced whenever trigger changes.
func tfTrigger(trigger string) string {
	return fmt.Sprintf(`
resource "terraform_data" "db" {
  triggers_replace = [%q]
  input = {
    tags = { owner = "team-a", env = "dev", protected = "true" }
  }
}
`, trigger)
}
