#!/usr/bin/env bash
# Regenerates the typed clientset, listers, informers and apply
# configurations of the magos.dev API into the apis/client module, with the
# code-generator version pinned in tools/go.mod.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}/apis/client"
export GOWORK=off
codegen_dir="$(cd "${root}/tools" && go list -m -f '{{.Dir}}' k8s.io/code-generator)"
export GOBIN="${root}/bin/codegen"
mkdir -p "${GOBIN}"

# shellcheck source=/dev/null
source "${codegen_dir}/kube_codegen.sh"

kube::codegen::gen_client \
  --with-watch \
  --with-applyconfig \
  --output-dir "${root}/apis/client" \
  --output-pkg "github.com/magos-dev/magos/apis/client" \
  --boilerplate "${root}/hack/boilerplate.go.txt" \
  "${root}/apis"
