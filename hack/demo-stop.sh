#!/usr/bin/env bash
# Stops the processes `make demo` started. Each ends what it started: the
# local executor kills every process its runs left (see
# tools/harness/executor/leftovers.go), so the script waits for them to
# exit before it kills what is left.
set -euo pipefail
state="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin/demo"
[ -f "${state}/pids" ] || { echo "No demo is running."; exit 0; }
mapfile -t pids < <(tac "${state}/pids")
for pid in "${pids[@]}"; do kill "${pid}" 2>/dev/null || true; done
for _ in $(seq 1 30); do
  alive=()
  for pid in "${pids[@]}"; do kill -0 "${pid}" 2>/dev/null && alive+=("${pid}"); done
  [ "${#alive[@]}" -eq 0 ] && break
  sleep 0.5
done
for pid in "${alive[@]}"; do
  echo "Process ${pid} did not stop in 15 s; killing it."
  kill -9 "${pid}" 2>/dev/null || true
done
rm -f "${state}/pids"
echo "Demo stopped."
