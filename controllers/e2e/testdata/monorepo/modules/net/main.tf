variable "name" {
  type = string
}

resource "terraform_data" "network" {
  input = "net-${var.name}"
}

output "name" {
  value = terraform_data.network.output
}
