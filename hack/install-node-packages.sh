#!/usr/bin/env bash
# Installs the Debian packages the real-node test tier runs on: containerd,
# runc, the CNI plugins, iptables, ipset (the NetworkPolicy enforcer's), iproute2 and util-linux (nsenter, unshare),
# and git and openssh-client, which the runner image carries.
# It does nothing when they are all present, and it never starts a service:
# the test harness runs containerd itself, inside a network namespace.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "install-node-packages: not root; the real-node tier needs root, skipping" >&2
  exit 0
fi

# command-or-file -> package providing it
declare -A wanted=(
  [containerd]=containerd
  [containerd-shim-runc-v2]=containerd
  [ctr]=containerd
  [runc]=runc
  [/usr/lib/cni/bridge]=containernetworking-plugins
  [/usr/lib/cni/host-local]=containernetworking-plugins
  [/usr/lib/cni/loopback]=containernetworking-plugins
  [iptables]=iptables
  [ipset]=ipset
  [ip]=iproute2
  [nsenter]=util-linux
  [unshare]=util-linux
  [git]=git
  [/usr/lib/git-core/git-remote-http]=git
  [ssh]=openssh-client
)
missing=()
for what in "${!wanted[@]}"; do
  if [[ "${what}" == /* ]]; then [ -x "${what}" ] && continue; else command -v "${what}" >/dev/null && continue; fi
  missing+=("${wanted[${what}]}")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "install-node-packages: installing ${missing[*]}"
# A policy-rc.d that refuses keeps the packages' services from starting.
policy=/usr/sbin/policy-rc.d
created_policy=
if [ ! -e "${policy}" ]; then
  printf '#!/bin/sh\nexit 101\n' >"${policy}" && chmod +x "${policy}" && created_policy=1
fi
trap '[ -z "${created_policy}" ] || rm -f "${policy}"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
