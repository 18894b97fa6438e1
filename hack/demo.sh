#!/usr/bin/env bash
# Starts the local control plane and the five Magos controllers as separate
# processes, applies deploy/examples and shows what the controllers report.
# Everything keeps running until `make demo-stop`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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

engines="${root}/bin/engines"
port=18080
for c in workspace project rollout variableset workspaceset; do
  echo "==> Starting ${c}-controller (metrics on 127.0.0.1:${port})"
  extra=()
  if [ "${c}" = workspace ]; then
    # Runners fetch their artifact through the controller's artifact
    # proxy, as the chart installs it; the local source serves artifacts on
    # loopback, not at source-controller's Service.
    extra=(--retry-interval 30s --artifact-proxy-bind-address 127.0.0.1:18443 --artifact-proxy-url http://127.0.0.1:18443
      --artifact-hosts 127.0.0.1)
  elif [ "${c}" = workspaceset ]; then
    extra=(--artifact-hosts 127.0.0.1)
  fi
  "${root}/bin/${c}" --kubeconfig "${kubeconfig}" \
    --metrics-bind-address "127.0.0.1:${port}" --health-probe-bind-address "127.0.0.1:$((port + 100))" \
    "${extra[@]}" >"${state}/logs/${c}-controller.log" 2>&1 &
  echo $! >>"${state}/pids"
  port=$((port + 1))
done

echo "==> Starting the local Job executor (plays job-controller and kubelet)"
"${root}/bin/executor" --kubeconfig "${kubeconfig}" --runner "${root}/bin/runner" \
  --log-dir "${state}/runs" --engines-dir "${engines}" >"${state}/logs/executor.log" 2>&1 &
echo $! >>"${state}/pids"

echo "==> Applying deploy/examples"
"${kubectl[@]}" apply -f deploy/examples/

config="${state}/infra"
rm -rf "${config}" && cp -r deploy/examples/hello-config "${config}"
echo "==> Starting the local source: publishes ${config} as GitRepository magos-demo/infra"
"${root}/bin/localsource" --kubeconfig "${kubeconfig}" --storage-dir "${state}/artifacts" \
  --source "magos-demo/infra=${config}" >"${state}/logs/localsource.log" 2>&1 &
echo $! >>"${state}/pids"

echo "==> WorkspaceSet hello generates a Workspace per directory of envs/ (hello-dev, hello-prod)"
"${kubectl[@]}" -n magos-demo wait workspaceset/hello --for=condition=Ready --timeout=120s
"${kubectl[@]}" -n magos-demo get workspacesets
echo "==> Waiting for Workspace hello-dev to plan and apply (real OpenTofu in a Job)"
"${kubectl[@]}" -n magos-demo wait workspace/hello-dev --for=condition=Ready --timeout=300s
for kind in project variableset rollout; do
  "${kubectl[@]}" -n magos-demo wait "${kind}" --all --for=jsonpath='{.status.observedGeneration}'=1 --timeout=60s
done

echo
"${kubectl[@]}" -n magos-demo get workspaces -o wide
echo
"${kubectl[@]}" -n magos-demo get jobs,secrets -l app.kubernetes.io/managed-by=magos
"${kubectl[@]}" -n magos-demo get secret tfstate-default-hello-dev hello-dev-outputs
echo
echo "Outputs Secret keys: $("${kubectl[@]}" -n magos-demo get secret hello-dev-outputs -o go-template='{{range $k, $v := .data}}{{$k}} {{end}}')"
echo
"${kubectl[@]}" -n magos-demo describe workspace hello-dev | sed -n '/^Status:/,$p'

echo
echo "==> Rollout platform: dev applied; prod (Manual) planned and waits for its promotion"
"${kubectl[@]}" -n magos-demo wait workspace/hello-prod --for=jsonpath='{.status.phase}'=AwaitingPromotion --timeout=300s
"${kubectl[@]}" -n magos-demo get rollout platform -o wide
"${kubectl[@]}" -n magos-demo get workspace hello-prod -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}{"\n"}'
revision="$("${kubectl[@]}" -n magos-demo get rollout platform -o jsonpath='{.status.revision}')"
cat <<MSG

The demo keeps running. Try (docs/cli.md lists every command):
  export KUBECONFIG=${kubeconfig} PATH=${root}/bin:${root}/bin/k8s:\$PATH   # kubectl finds the kubectl-magos plugin
  kubectl magos ui -n magos-demo                            # the web UI, with your own credentials (opens a browser)
  kubectl magos get -n magos-demo --watch                   # in one terminal
  kubectl magos tree platform -n magos-demo                 # the Project, its Rollout stages and Workspaces
  kubectl magos plan show hello-prod -n magos-demo          # what prod will apply, and its policy verdict
  kubectl magos promote platform prod -n magos-demo         # promote ${revision}: hello-prod applies
  kubectl magos wait hello-prod --applied -n magos-demo     # until it is applied
  kubectl magos replan hello-dev -n magos-demo --wait       # plan again now
  kubectl magos get workspacesets -n magos-demo             # the set that generates hello-dev and hello-prod
  \$EDITOR ${config}/modules/hello/main.tf                  # change the module: a new revision goes to dev, then waits for prod's promotion
  \$EDITOR ${config}/envs/dev/main.tf                       # change dev only: prod does not plan again
  kubectl -n magos-demo get events --sort-by=.metadata.creationTimestamp
  curl -s 127.0.0.1:18080/metrics | grep ^magos_
Run logs are in ${state}/runs, process logs in ${state}/logs. Stop everything with: make demo-stop
MSG
