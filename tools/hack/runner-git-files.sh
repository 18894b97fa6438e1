#!/usr/bin/env bash
# Prints the `magos-image build -file SRC=DST` arguments that put this
# machine's git (with its smart-HTTP helper) and OpenSSH client, and every
# shared library they load, into the runner image: OpenTofu fetches git::
# module sources by running git, and git runs ssh for ssh:// sources.
# The files are the Debian packages' (git, openssh-client); the image's
# digest therefore also depends on their versions.
set -euo pipefail

programs=(/usr/bin/git /usr/lib/git-core/git-remote-http /usr/bin/ssh)
for p in "${programs[@]}"; do
  if [ ! -x "${p}" ]; then
    echo "runner-git-files: ${p} is missing: install the Debian packages git and openssh-client (make node-packages)" >&2
    exit 1
  fi
done

declare -A files=()
for p in "${programs[@]}"; do
  files["${p}"]="${p}"
  # ldd prints "name => /path (addr)" and the loader as "/path (addr)".
  while read -r lib; do
    files["${lib}"]="${lib}"
  done < <(ldd "${p}" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
done
for f in "${!files[@]}"; do
  printf -- '-file %s=%s\n' "$(readlink -f "${f}")" "${f}"
done | sort
# The CA bundle git's HTTPS helper trusts (Debian's ca-certificates).
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  printf -- '-file %s=%s\n' /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
fi
# git runs the HTTPS helper under its own name.
printf -- '-file %s=%s\n' "$(readlink -f /usr/lib/git-core/git-remote-http)" /usr/lib/git-core/git-remote-https
