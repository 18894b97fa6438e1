# Reads what the runner configuration gives the engine: a variable from
# runner env (Secret-backed), and files from a ConfigMap and a Secret
# volume whose paths come from runner env too.
variable "word" {
  type      = string
  sensitive = true
}

variable "bundle_path" {
  type = string
}

variable "netrc_path" {
  type = string
}

output "word_digest" {
  value = nonsensitive(sha256(var.word))
}

output "bundle" {
  value = file(var.bundle_path)
}

output "netrc_digest" {
  value = sha256(file(var.netrc_path))
}
