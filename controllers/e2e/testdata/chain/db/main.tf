variable "subnets" {
  type = list(string)
}

resource "terraform_data" "db" {
  input = {
    placement = { for i, s in var.subnets : "zone${i}" => s }
    endpoint  = "db.internal:5432"
  }
}

output "placement" {
  value = terraform_data.db.output.placement
}

output "endpoint" {
  value = terraform_data.db.output.endpoint
}
