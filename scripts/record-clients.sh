#!/usr/bin/env bash
# Record the scenarios made from real clients' default requests (mockllama/recordings/catalogues/clients.json)
# from a FRESH llama-server b11434 started with a fixed --seed, as the bundled
# smollm2-135m-instruct-q4_1-clients/ cassettes were made (stock and, with --patched, the patched build):
#
#   scripts/record-clients.sh [--patched] OUT_DIR [PORT]
#
# The seed: the Anthropic SDK sends no temperature, so llama-server samples those requests at its
# default temperature; a fixed server seed makes the same request draw the same sample again, which
# the live tier (tests/live/test_live_bundled.py) needs to check the recording. Requests at
# temperature 0 are greedy and do not read it. A fresh server matters too: at temperature 0 a long
# reply can depend on the requests the server answered before. Hold the shared CPU lock while this runs.
set -euo pipefail
SEED=4242
patched=()
if [ "${1:-}" = "--patched" ]; then
  patched=(--patched)
  shift
fi
out=${1:?usage: $0 [--patched] OUT_DIR [PORT]}
port=${2:-18096}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/llama-server.sh setup "${patched[@]}" >/dev/null
command="$(scripts/llama-server.sh command "${patched[@]}" "$port") --seed $SEED"
log=$(mktemp "${TMPDIR:-/tmp}/record-clients.XXXXXX.log")
# shellcheck disable=SC2086
$command >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "llama-server exited; see $log" >&2; exit 1; }
  sleep 0.5
done
# a port someone else's server holds answers /health too: the server started here must still run
sleep 1
kill -0 "$server" 2>/dev/null || { echo "llama-server exited (port $port taken?); see $log" >&2; exit 1; }
patch_option=()
[ ${#patched[@]} -eq 0 ] || patch_option=(--server-patch patches/llama-server-responses-incomplete.patch)
mockllama record --server "http://127.0.0.1:$port" --out "$out" --catalogue clients \
  --server-command "$command" "${patch_option[@]}"
