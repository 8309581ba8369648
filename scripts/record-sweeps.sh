#!/usr/bin/env bash
# Record the bundled sweeps (mockllama/recordings/catalogues/sweeps.json and forced-thinking-sweeps.json)
# from a FRESH llama-server b11434 each, stock or patched, as the bundled *-sweeps/ cassettes were made:
#
#   scripts/record-sweeps.sh OUT_ROOT [--patched] [PORT] [-- RECORD ARGS...]
#
# writes OUT_ROOT/smollm2-135m-instruct-q4_1-sweeps/ and OUT_ROOT/smollm2-135m-forced-thinking-sweeps/
# (e.g. OUT_ROOT=cassettes/llama-server-b11434, or cassettes-patched/llama-server-b11434-patched with
# --patched). A run stopped midway goes on where it stopped when started again. Hold the shared CPU
# lock while this runs. RECORD ARGS go to both `mockllama record` runs, e.g. `-- --scenario text-reply`
# (a set-up whose catalogue has none of the named scenarios is skipped).
set -euo pipefail
# One thread: a sweep asks for tens of thousands of tokens, and llama-server's threads wait on each
# other at every step, so with another process on the other core a two-thread server ran 10 to 30
# times slower (13 ms a token alone, 80-400 ms beside a test run). ggml computes each value of a
# step on one thread, so the thread count changes no token: tests/live/test_live_sweeps.py holds
# the recordings against a server with the default threads.
export LLAMA_SERVER_ARGS="${LLAMA_SERVER_ARGS:---threads 1}"
out_root=${1:?usage: $0 OUT_ROOT [--patched] [PORT]}
shift
patched=()
patch_args=()
if [ "${1:-}" = "--patched" ]; then
  patched=(--patched)
  shift
fi
port=18096
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  port=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
extra=("$@")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ${#patched[@]} -gt 0 ]; then
  patch_args=(--server-patch patches/llama-server-responses-incomplete.patch)
fi

record() {  # SETUP CATALOGUE OUT
  local setup=$1 catalogue=$2 out=$3 server wanted=() name
  for ((i = 0; i < ${#extra[@]}; i++)); do
    if [ "${extra[i]}" = "--scenario" ]; then
      name=${extra[i + 1]}
      grep -q "\"name\": \"$name\"" "mockllama/recordings/catalogues/$catalogue.json" && wanted+=(--scenario "$name")
      i=$((i + 1))
    fi
  done
  if [ ${#extra[@]} -gt 0 ] && [ ${#wanted[@]} -eq 0 ]; then
    return 0
  fi
  mkdir -p "$out"
  scripts/llama-server.sh run "${patched[@]}" --setup "$setup" "$port" >"$out.server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 "$server" 2>/dev/null || { echo "llama-server exited; see $out.server.log" >&2; exit 1; }
    sleep 0.5
  done
  mockllama record --server "http://127.0.0.1:$port" --out "$out" --catalogue "$catalogue" \
    --server-command "$(scripts/llama-server.sh command "${patched[@]}" --setup "$setup" "$port")" "${patch_args[@]}" \
    "${wanted[@]}"
  kill "$server"
  wait "$server" 2>/dev/null || true
  rm -f "$out.server.log"
}

record smollm2-135m-instruct-q4_1 sweeps "$out_root/smollm2-135m-instruct-q4_1-sweeps"
record smollm2-135m-forced-thinking forced-thinking-sweeps "$out_root/smollm2-135m-forced-thinking-sweeps"
