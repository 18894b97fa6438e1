#!/usr/bin/env bash
# Refreshes the CRDs of Magos's neighbours that the tests install: Flux's
# source and HelmRelease CRDs, generated with controller-gen from the
# source-controller and helm-controller API types, and Kyverno's
# ValidatingPolicy and PolicyException CRDs as shipped in its module.
# Usage: update-thirdparty-crds.sh <flux-source-api-version> <kyverno-version> <flux-helm-api-version>
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flux_version="$1"
kyverno_version="$2"
flux_helm_version="$3"
out="${root}/tools/testdata/crds"

module_dir() {
  GOWORK=off GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

flux_dir="$(cd /tmp && module_dir "github.com/fluxcd/source-controller/api@v${flux_version}")"
rm -rf "${out}/flux" && mkdir -p "${out}/flux"
(cd "${flux_dir}" && GOWORK=off "${root}/bin/controller-gen" crd paths=./... output:crd:artifacts:config="${out}/flux")
flux_helm_dir="$(cd /tmp && module_dir "github.com/fluxcd/helm-controller/api@v${flux_helm_version}")"
(cd "${flux_helm_dir}" && GOWORK=off GOFLAGS=-mod=mod "${root}/bin/controller-gen" crd paths=./... output:crd:artifacts:config="${out}/flux")

kyverno_dir="$(cd /tmp && module_dir "github.com/kyverno/kyverno@v${kyverno_version}")"
rm -rf "${out}/kyverno" && mkdir -p "${out}/kyverno"
for kind in validatingpolicies namespacedvalidatingpolicies policyexceptions; do
  install -m 0644 "${kyverno_dir}/config/crds/policies.kyverno.io/policies.kyverno.io_${kind}.yaml" "${out}/kyverno/"
done
