# A plan too big for the plan Secrets reserved by default: 60,000 distinct
# sha256 strings, which gzip cannot shrink much (several MiB compressed).
resource "terraform_data" "big" {
  input = flatten([for i in range(300) : [for j in range(200) : sha256("${i}-${j}")]])
}
