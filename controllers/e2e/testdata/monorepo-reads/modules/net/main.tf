resource "terraform_data" "net" {
  input = trimspace(file("${path.module}/../../shared/cidr.txt"))
}

output "cidr" {
  value = terraform_data.net.output
}
