variable "pause" {
  type    = number
  default = 15
}

# Applying takes a while, so tests can interrupt or restart things mid-apply.
resource "terraform_data" "slow" {
  input = "slow"

  provisioner "local-exec" {
    command = "sleep ${var.pause}"
  }
}

output "done" {
  value = terraform_data.slow.output
}
