variable "pause" {
  type    = number
  default = 30
}

# Memory the provisioner holds while it sleeps, in MiB.
variable "hold_mib" {
  type    = number
  default = 0
}

# Applying takes a while, so a test can kill the runner mid-apply. The
# runner image has no shell: the provisioner runs the test image's sleep.
resource "terraform_data" "slow" {
  input = "slow"

  provisioner "local-exec" {
    interpreter = ["/usr/local/bin/sleep"]
    command     = var.pause
    environment = {
      SLEEP_HOLD_MIB = var.hold_mib
    }
  }
}

output "done" {
  value = terraform_data.slow.output
}
