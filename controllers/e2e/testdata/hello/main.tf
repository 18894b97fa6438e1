variable "greeting" {
  type    = string
  default = "hello"
}

variable "secret_word" {
  type      = string
  default   = "none"
  sensitive = true
}

resource "terraform_data" "greeting" {
  input = var.greeting
}

resource "terraform_data" "secret" {
  input = sha256(var.secret_word)
}

output "message" {
  value = terraform_data.greeting.output
}

output "secret_digest" {
  value     = terraform_data.secret.output
  sensitive = true
}
