# Needs the magostest provider, which only the filesystem mirror of the
# Workspace's CLI configuration has.
terraform {
  required_providers {
    magostest = {
      source  = "registry.opentofu.org/magos/magostest"
      version = "0.1.0"
    }
  }
}

variable "root" {
  type = string
}

provider "magostest" {
  root = var.root
}

resource "magostest_file" "marker" {
  path    = "marker.txt"
  content = "installed from the mirror\n"
}
