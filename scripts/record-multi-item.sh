#!/usr/bin/env bash
# Record the multi-item scenarios (mockllama/recordings/catalogues/multi-item.json) from a FRESH stock
# llama-server b11434, as the bundled smollm2-135m-instruct-q4_1-multi-item/ cassettes were made:
#
#   scripts/record-multi-item.sh OUT_DIR [PORT]
#
# A fresh server matters: at temperature 0, llama-server's reply to a long tool call can depend on
# the requests the server answered before (its prompt cache), so each set is recorded from a
# server that has answered nothing else. Hold the shared CPU lock while this runs.
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [PORT]}
port=${2:-18095}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/llama-server.sh run "$port" >"$out.server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "llama-server exited; see $out.server.log" >&2; exit 1; }
  sleep 0.5
done
mockllama record --server "http://127.0.0.1:$port" --out "$out" \
  --catalogue mockllama/recordings/catalogues/multi-item.json \
  --server-command "$(scripts/llama-server.sh command "$port")"
