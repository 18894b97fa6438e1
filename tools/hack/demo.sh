#!/usr/bin/env bash
# Starts the local control plane and the four Magos controllers as separate
# processes, applies deploy/examples and shows what the controllers report.
# Everything keeps running until `make demo-stop`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${root}"
state="${root}/bin/demo"
kubeconfig="${state}/kubeconfig"
kubectl=("${root}/bin/k8s/kubectl" --kubeconfig "${kubeconfig}")

if [ -f "${state}/pids" ]; then
  echo "A demo is already running; stop it with 'make demo-stop'." >&2
  exit 1
fi
mkdir -p "${state}/logs"

echo "==> Starting the local control plane (kube-apiserver + etcd)"
rm -f "${kubeconfig}"
"${root}/bin/localcp" -write-kubeconfig "${kubeconfig}" >"${state}/logs/localcp.log" 2>&1 &
echo $! >>"${state}/pids"
for _ in $(seq 1 120); do
  [ -s "${kubeconfig}" ] && break
  sleep 0.5
done
if [ ! -s "${kubeconfig}" ]; then
  echo "The control plane did not start; see ${state}/logs/localcp.log" >&2
  exit 1
fi
"${kubectl[@]}" create namespace magos-system >/dev/null

port=18080
for c in workspace project rollout variableset; do
  echo "==> Starting ${c}-controller (metrics on 127.0.0.1:${port})"
  "${root}/bin/${c}" --kubeconfig "${kubeconfig}" \
    --metrics-bind-address "127.0.0.1:${port}" --health-probe-bind-address "127.0.0.1:$((port + 100))" \
    >"${state}/logs/${c}-controller.log" 2>&1 &
  echo $! >>"${state}/pids"
  port=$((port + 1))
done

echo "==> Applying deploy/examples"
"${kubectl[@]}" apply -f deploy/examples/

echo "==> Waiting for every controller to observe its objects"
for kind in workspace project variableset rollout; do
  "${kubectl[@]}" -n magos-demo wait "${kind}" --all --for=jsonpath='{.status.observedGeneration}'=1 --timeout=120s
done

echo
"${kubectl[@]}" -n magos-demo get projects,variablesets,workspaces,rollouts
echo
"${kubectl[@]}" -n magos-demo describe workspace hello | sed -n '/^Status:/,$p'
cat <<MSG

The demo keeps running. Try:
  export KUBECONFIG=${kubeconfig}
  bin/k8s/kubectl -n magos-demo get workspaces -o wide
  curl -s 127.0.0.1:18080/metrics | grep ^magos_
Logs are in ${state}/logs. Stop everything with: make demo-stop
MSG
