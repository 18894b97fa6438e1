#!/usr/bin/env bash
# Installs kubectl-magos as a user does, `go install
# github.com/magos-dev/magos/cli/kubectl-magos@VERSION`, with no go.work,
# from the module proxy PROXY_DIR (tools/modproxy: apis and cli of this
# tree at VERSION) before the Go module proxy; then checks the installed
# CLI reports VERSION. go install refuses a module with replace directives.
#
#   hack/check-go-install.sh PROXY_DIR VERSION
set -euo pipefail
proxy=$1 version=$2
modcache=$(go env GOMODCACHE)
# A version once extracted is never fetched again: drop this repository's
# modules from the cache, so the tree's content is what gets installed.
for d in "${modcache}/github.com/magos-dev" "${modcache}/cache/download/github.com/magos-dev"; do
  if [ -d "${d}" ]; then chmod -R u+w "${d}" && rm -rf "${d}"; fi
done
# The build cache too: it keys a module's packages by module version, so a
# cached build of an earlier tree at the same version would stand in for
# this one. The install builds in a cache of its own, then drops it.
gobin=$(mktemp -d) gocache=$(mktemp -d)
trap 'rm -rf "${gobin}" "${gocache}"' EXIT
GOWORK=off GOFLAGS= GOPROXY="file://$(cd "${proxy}" && pwd),$(go env GOPROXY)" GONOSUMDB=github.com/magos-dev/magos GOBIN="${gobin}" GOCACHE="${gocache}" \
  go install "github.com/magos-dev/magos/cli/kubectl-magos@${version}"
got=$("${gobin}/kubectl-magos" version)
if [ "${got}" != "kubectl-magos ${version#v}" ]; then
  echo "go install: the installed kubectl-magos says '${got}', not 'kubectl-magos ${version#v}'" >&2
  exit 1
fi
echo "go install github.com/magos-dev/magos/cli/kubectl-magos@${version}: ${got}"
