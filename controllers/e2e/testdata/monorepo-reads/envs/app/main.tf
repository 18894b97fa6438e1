module "net" {
  source = "../../modules/net"
}

locals {
  data = jsondecode(file("${path.module}/../../shared/data.json"))
}

resource "terraform_data" "data" {
  input = local.data.name
}

output "data" {
  value = terraform_data.data.output
}

output "net" {
  value = module.net.cidr
}
