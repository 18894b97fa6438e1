variable "region" {
  type = string
}

variable "zones" {
  type = list(string)
}

variable "tags" {
  type = map(string)
}

variable "token" {
  type      = string
  sensitive = true
}

variable "owner" {
  type    = string
  default = "nobody"
}

resource "terraform_data" "inputs" {
  input = {
    region = var.region
    zones  = join(",", var.zones)
    tags   = join(",", [for k, v in var.tags : "${k}=${v}"])
    owner  = var.owner
    token  = sha256(var.token)
  }
}

output "region" {
  value = var.region
}

output "zones" {
  value = join(",", var.zones)
}

output "tags" {
  value = join(",", [for k, v in var.tags : "${k}=${v}"])
}

output "owner" {
  value = var.owner
}

output "token_digest" {
  value     = sha256(var.token)
  sensitive = true
}
