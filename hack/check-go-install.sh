#!/usr/bin/env bash
# Installs kubectl-magos as a user does after a release, `go install
# github.com/magos-dev/magos/cli/kubectl-magos@VERSION`, with no go.work,
# from the module proxy PROXY_DIR before the Go module proxy. PROXY_DIR
# (tools/modproxy) serves apis and cli of this tree only under the
# versions a real proxy derives from the release's tags apis/VERSION and
# cli/VERSION. First it builds the cli module on its own (GOWORK=off,
# -mod=readonly) with its committed go.mod and go.sum, as `cd cli && go
# build ./...` runs after the release: cli/go.sum must hold the sums of
# apis VERSION as its tag serves it (make tidy records them). Then it
# installs and checks the installed CLI reports VERSION. go install
# refuses a module with replace directives.
#
#   hack/check-go-install.sh PROXY_DIR VERSION
set -euo pipefail
proxy=$1 version=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
apis=github.com/magos-dev/magos/apis
required=$(sed -n "s|^[[:space:]]*${apis} \(v[^[:space:]]*\).*|\1|p" "${root}/cli/go.mod" | head -1)
if [ "${required}" != "${version}" ]; then
  echo "cli/go.mod requires ${apis} ${required:-(none)}, not the release's ${version}: run make generate tidy and commit (docs/installation.md, Versions and releases)" >&2
  exit 1
fi
modcache=$(go env GOMODCACHE)
# A version once extracted is never fetched again: drop this repository's
# modules from the cache, so the tree's content is what gets installed.
for d in "${modcache}/github.com/magos-dev" "${modcache}/cache/download/github.com/magos-dev"; do
  if [ -d "${d}" ]; then chmod -R u+w "${d}" && rm -rf "${d}"; fi
done
# The build cache too: it keys a module's packages by module version, so a
# cached build of an earlier tree at the same version would stand in for
# this one. Both builds use a cache of their own, then drop it.
gobin=$(mktemp -d) gocache=$(mktemp -d)
trap 'rm -rf "${gobin}" "${gocache}"' EXIT
export GOWORK=off GOPROXY="file://$(cd "${proxy}" && pwd),$(go env GOPROXY)" GONOSUMDB=github.com/magos-dev/magos GOCACHE="${gocache}"
if ! out=$(cd "${root}/cli" && GOFLAGS=-mod=readonly go build -o /dev/null ./... 2>&1); then
  echo "${out}" >&2
  echo "cd cli && GOWORK=off go build ./... fails with the committed cli/go.mod and cli/go.sum against apis ${version} as its tag apis/${version} would serve it" >&2
  if grep -q 'go.sum\|checksum mismatch\|SECURITY ERROR' <<<"${out}"; then
    echo "cli/go.sum lacks the sums of apis ${version} or holds those of another tree: run make tidy (it records them) and commit (docs/installation.md, Versions and releases)" >&2
  fi
  exit 1
fi
GOFLAGS= GOBIN="${gobin}" go install "github.com/magos-dev/magos/cli/kubectl-magos@${version}"
got=$("${gobin}/kubectl-magos" version)
if [ "${got}" != "kubectl-magos ${version#v}" ]; then
  echo "go install: the installed kubectl-magos says '${got}', not 'kubectl-magos ${version#v}'" >&2
  exit 1
fi
echo "go install github.com/magos-dev/magos/cli/kubectl-magos@${version}: ${got}"
