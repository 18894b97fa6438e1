module "net" {
  source = "../../modules/net"
  name   = "prod"
}

output "network" {
  value = module.net.name
}
