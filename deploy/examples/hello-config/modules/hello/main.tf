variable "greeting" {
  type = string
}

variable "environment" {
  type    = string
  default = "local"
}

variable "tags" {
  type    = map(string)
  default = {}
}

resource "terraform_data" "greeting" {
  input = "${var.greeting} (${var.environment})"
}

output "message" {
  value = terraform_data.greeting.output
}
