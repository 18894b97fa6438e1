# One environment: the shared module with this environment's inputs. A
# commit that changes only this directory plans only this environment.
variable "greeting" {
  type = string
}

variable "environment" {
  type    = string
  default = "local"
}

variable "tags" {
  type    = map(string)
  default = {}
}

module "hello" {
  source      = "../../modules/hello"
  greeting    = var.greeting
  environment = var.environment
  tags        = var.tags
}

output "message" {
  value = module.hello.message
}
