variable "db_endpoint" {
  type = string
}

resource "terraform_data" "app" {
  input = "postgres://${var.db_endpoint}/app"
}

output "url" {
  value = terraform_data.app.output
}
