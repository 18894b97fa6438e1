# A module the tests serve from a private Git repository.
variable "greeting" {
  type = string
}

resource "terraform_data" "greeting" {
  input = var.greeting
}

output "text" {
  value = terraform_data.greeting.output
}
