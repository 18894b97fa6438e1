module "net" {
  source = "../../modules/net"
  name   = "dev"
}

output "network" {
  value = module.net.name
}
