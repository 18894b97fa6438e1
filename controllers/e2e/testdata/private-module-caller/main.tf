# Calls the module the tests serve from a private Git repository; the tests
# write its git:: address into source.
module "private" {
  source   = "MODULE_SOURCE"
  greeting = "hello from a private module"
}

output "text" {
  value = module.private.text
}
