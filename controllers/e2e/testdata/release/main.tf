# Every commit changes release.txt, so every Workspace has a change to
# apply; the stage label reaches the plan for policies to select on.
variable "stage" {
  type    = string
  default = ""
}

resource "terraform_data" "release" {
  input = "${var.stage}:${trimspace(file("${path.module}/release.txt"))}"
}

output "release" {
  value = terraform_data.release.output
}
