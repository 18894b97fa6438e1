variable "prefix" {
  type    = string
  default = "10.0"
}

variable "label" {
  type    = string
  default = "first"
}

resource "terraform_data" "network" {
  input = {
    subnets = [for i in [1, 2] : "${var.prefix}.${i}.0/24"]
    label   = var.label
  }
}

output "subnets" {
  value = terraform_data.network.output.subnets
}

output "label" {
  value = terraform_data.network.output.label
}
