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

resource "magostest_file" "motd" {
  path    = "motd.txt"
  content = "hello from magos\n"
}
