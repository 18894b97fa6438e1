#!/usr/bin/env bash
# Builds a main package of a third-party Go module from the Go module proxy
# into a static binary:
#
#   build-go-module.sh [-pin <module>=<module>@<version>]... [-touch <file>]...
#       <module>@<version> <package> <output> [ldflags]
#
# e.g. build-go-module.sh github.com/fluxcd/source-controller@v1.9.6 . bin/flux/source-controller
#
# `go install module@version` refuses a module whose go.mod has replace
# directives, and a replace that points into the module (e.g. `./api`, a
# nested module) names a directory the module's zip does not hold. So the
# module is downloaded, copied somewhere writable, its replaces into itself
# are dropped (the build then takes the versions its go.mod requires) and the
# package is built there. Replaces to other modules' versions are kept: they
# are part of what the module's authors build. A -pin replaces a dependency
# with another version: for a required version the proxy does not serve,
# the nearest one it does. A -touch creates an empty file in the copy: for
# a //go:embed pattern that matches only files the module's own make
# generates (its zip holds none).
set -euo pipefail

pins=() touch=()
while :; do
  case "${1:-}" in
    -pin) pins+=("$2"); shift 2 ;;
    -touch) touch+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
if [ "$#" -lt 3 ]; then
  echo "usage: $0 [-pin <module>=<module>@<version>]... [-touch <file>]... <module>@<version> <package> <output> [ldflags]" >&2
  exit 2
fi
module="$1" pkg="$2" out="$3" ldflags="${4:-}"
case "${out}" in /*) ;; *) out="${PWD}/${out}" ;; esac

export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
dir=$(go mod download -json "${module}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
if [ -z "${dir}" ]; then
  go mod download -json "${module}" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/magos-gomod-XXXXXX")
trap 'chmod -R u+w "${work}" && rm -rf "${work}"' EXIT
cp -R "${dir}/." "${work}/"
chmod -R u+w "${work}"
cd "${work}"
# Replaces whose target is a path into the module ("x => ./api", alone or
# in a replace block): drop them.
sed -n 's/^\(replace\)\{0,1\}[[:space:]]*\([^[:space:]]*\)\( v[^[:space:]]*\)\{0,1\}[[:space:]]*=>[[:space:]]*\.\{1,2\}\/.*/\2/p' go.mod |
  while read -r path; do
    echo "build-go-module: dropping replace ${path} => a directory the module's zip does not hold"
    go mod edit -dropreplace="${path}"
  done

for pin in "${pins[@]}"; do
  echo "build-go-module: replace ${pin/=/ => }"
  go mod edit -replace="${pin}"
done

for f in "${touch[@]}"; do
  echo "build-go-module: creating an empty ${f}"
  mkdir -p "$(dirname "${f}")" && : > "${f}"
done

mkdir -p "$(dirname "${out}")"
go build -trimpath -ldflags "-s -w ${ldflags}" -o "${out}.tmp" "${pkg}"
mv "${out}.tmp" "${out}"
