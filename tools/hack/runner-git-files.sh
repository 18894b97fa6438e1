#!/usr/bin/env bash
# Prints the `magos-image build -file SRC=DST` arguments that put this
# machine's git (with its smart-HTTP helper and the scripts behind
# `git submodule`, which OpenTofu runs after every git:: clone), the POSIX
# shell and tools those scripts call, the OpenSSH client, every shared
# library they load and the CA bundle into the runner image. OpenTofu
# fetches git:: module sources by running git, and git runs ssh for ssh://
# sources. The files are the Debian packages' (git, openssh-client, dash,
# sed, coreutils, ca-certificates); the image's digest therefore also
# depends on their versions.
set -euo pipefail

# DST=SRC: where each program goes in the image, and where it is here.
programs=(
  /usr/bin/git=/usr/bin/git
  /usr/lib/git-core/git-remote-http=/usr/lib/git-core/git-remote-http
  /usr/lib/git-core/git-sh-i18n--envsubst=/usr/lib/git-core/git-sh-i18n--envsubst
  /usr/bin/ssh=/usr/bin/ssh
  /bin/sh=/bin/dash
  /usr/bin/sed=/bin/sed
  /usr/bin/basename=/usr/bin/basename
  /usr/bin/uname=/usr/bin/uname
)
scripts=(/usr/lib/git-core/git-submodule /usr/lib/git-core/git-sh-setup /usr/lib/git-core/git-sh-i18n)
for f in "${programs[@]#*=}" "${scripts[@]}"; do
  if [ ! -e "${f}" ]; then
    echo "runner-git-files: ${f} is missing: install the Debian packages git, openssh-client, dash, sed and coreutils (make node-packages)" >&2
    exit 1
  fi
done

declare -A files=()
for p in "${programs[@]}"; do
  files["${p%%=*}"]="${p#*=}"
  # ldd prints "name => /path (addr)" and the loader as "/path (addr)".
  while read -r lib; do
    files["${lib}"]="${lib}"
  done < <(ldd "${p#*=}" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
done
for s in "${scripts[@]}"; do
  files["${s}"]="${s}"
done
# The CA bundle git's HTTPS helper trusts (Debian's ca-certificates).
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  files[/etc/ssl/certs/ca-certificates.crt]=/etc/ssl/certs/ca-certificates.crt
fi
# git runs the HTTPS helper under its own name.
files[/usr/lib/git-core/git-remote-https]=/usr/lib/git-core/git-remote-http
for dst in "${!files[@]}"; do
  printf -- '-file %s=%s\n' "$(readlink -f "${files[${dst}]}")" "${dst}"
done | sort
