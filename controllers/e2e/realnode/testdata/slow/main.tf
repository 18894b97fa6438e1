variable "pause" {
  type    = number
  default = 30
}

# Applying takes a while, so a test can kill the runner mid-apply. The
# runner image has no shell: the provisioner runs the test image's sleep.
resource "terraform_data" "slow" {
  input = "slow"

  provisioner "local-exec" {
    interpreter = ["/usr/local/bin/sleep"]
    command     = var.pause
  }
}

output "done" {
  value = terraform_data.slow.output
}
