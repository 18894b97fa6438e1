#!/usr/bin/env bash
# Stops the processes `make demo` started.
set -euo pipefail
state="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bin/demo"
[ -f "${state}/pids" ] || { echo "No demo is running."; exit 0; }
tac "${state}/pids" | while read -r pid; do kill "${pid}" 2>/dev/null || true; done
sleep 2
rm -f "${state}/pids"
echo "Demo stopped."
