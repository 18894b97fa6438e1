#!/usr/bin/env bash
# Prints the `magos-image build -file SRC=DST` arguments that put this
# machine's git (with its smart-HTTP helper), the OpenSSH client and every
# shared library they load into the runner image. OpenTofu fetches git::
# module sources by running git, and git runs ssh for ssh:// sources. The
# files are the Debian packages' (git, openssh-client); the image's digest
# therefore also depends on their versions. The image has no shell, so
# git's own git-submodule script is replaced by runner/cmd/git-submodule
# (the Makefile adds it).
set -euo pipefail

# DST=SRC: where each program goes in the image, and where it is here.
programs=(
  /usr/bin/git=/usr/bin/git
  /usr/lib/git-core/git-remote-http=/usr/lib/git-core/git-remote-http
  /usr/bin/ssh=/usr/bin/ssh
)
for f in "${programs[@]#*=}"; do
  if [ ! -e "${f}" ]; then
    echo "runner-git-files: ${f} is missing: install the Debian packages git and openssh-client (make node-packages)" >&2
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
# git runs the HTTPS helper under its own name.
files[/usr/lib/git-core/git-remote-https]=/usr/lib/git-core/git-remote-http
for dst in "${!files[@]}"; do
  printf -- '-file %s=%s\n' "$(readlink -f "${files[${dst}]}")" "${dst}"
done | sort
