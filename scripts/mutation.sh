#!/usr/bin/env bash
# Mutation testing with mutmut (not part of CI: it takes minutes per module).
#
#   scripts/mutation.sh [TARGET ...]     TARGET: behaviours spec matching check cassettes (default: all)
#
# Each target mutates one module or two (or, for check and cassettes, the functions that carry the
# promise: check's verdicts and report, the cassette loader's validation) and runs only the offline tests
# that exercise it, in a scratch copy of the checkout, so the working tree is never touched.
# Needs the dev extra: pip install -e ".[test,dev]". MUTATION_CHILDREN (default 2) bounds the
# parallel test processes; MUTATION_TIMEOUT (seconds, default 0 = none) stops a target's run
# early, and the mutants it did not reach are reported as 'not checked'. MUTATION_TESTS (paths,
# space-separated) replaces a target's tests: fewer tests can only catch fewer mutants, so the
# score it gives is a lower bound of the full selection's. The score is caught /
# judged: killed (or timed out) over every mutant run, those no test even calls included; the
# survivors' diffs land in mutants-report/. Processes the tests start (`python -m mockllama check`,
# `mockllama serve`) run the mutant too, and their calls count in mutmut's map of which tests
# call which function (scripts/mutation_hits/sitecustomize.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
children="${MUTATION_CHILDREN:-2}"
limit="${MUTATION_TIMEOUT:-0}"  # seconds per target; 0: no limit
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(behaviours spec matching check cassettes)

if ! python -c "import mutmut" 2>/dev/null; then
  echo "mutation.sh: mutmut is not installed; run: pip install -e \".[test,dev]\"" >&2
  exit 2
fi

# MODULES (space-separated)|MUTANTS (fnmatch patterns over mutmut's mutant names)|TESTS
spec_for() {
  case "$1" in
    behaviours) echo "mockllama/behaviours/fixed.py|mockllama.behaviours.fixed.*|tests/behaviours/test_fixed.py tests/behaviours/test_no_twin.py tests/behaviours/test_buggy.py tests/behaviours/test_spec.py tests/behaviours/test_spec_replays.py tests/behaviours/test_multi_item.py" ;;
    spec) echo "mockllama/behaviours/spec.py|mockllama.behaviours.spec.*|tests/behaviours/test_spec.py tests/behaviours/test_spec_replays.py tests/behaviours/test_multi_item.py" ;;
    matching) echo "mockllama/matching/matcher.py|mockllama.matching.matcher.*|tests/matching/test_selection.py tests/matching/test_matching_rules.py tests/server/test_errors.py tests/matching/test_conversations.py tests/cli/test_setups.py tests/matching/test_semantic_matching.py" ;;
    check) echo "mockllama/check/verdicts.py mockllama/check/report.py|mockllama.check.verdicts.x__judge* mockllama.check.report.xǁReportǁ*|tests/check/test_check.py tests/check/test_check_verdict.py tests/check/test_check_variants.py" ;;
    cassettes) echo "mockllama/recordings/cassettes.py|mockllama.recordings.cassettes.x_load_cassette__* mockllama.recordings.cassettes.x_cassette_files__* mockllama.recordings.cassettes.x_load_scenarios__* mockllama.recordings.cassettes.x__interaction__* mockllama.recordings.cassettes.x__request_body__*|tests/server/test_errors.py tests/server/test_reliability.py tests/recordings/test_hardening_cassettes.py tests/recordings/test_cassette_validation.py" ;;
    *) echo "mutation.sh: unknown target '$1'; use behaviours, spec, matching, check or cassettes" >&2; return 2 ;;
  esac
}

export MOCKLLAMA_LIVE=0 MOCKLLAMA_BENCH=0 MOCKLLAMA_BROWSER=0 MOCKLLAMA_CONTAINER=0 MOCKLLAMA_CLIENTS=0
base_pythonpath="${PYTHONPATH:-}"
report="${MUTATION_REPORT:-$root/mutants-report}"
mkdir -p "$report"

for target in "${targets[@]}"; do
  IFS='|' read -r modules patterns tests < <(spec_for "$target")
  tests="${MUTATION_TESTS:-$tests}"  # only these tests: the score is then a lower bound of the full selection's
  work="$(mktemp -d "${TMPDIR:-/tmp}/mockllama-mutation-$target.XXXXXX")"
  if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then  # the checkout's files, untracked ones included
    (cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work")
  else
    cp -a "$root/." "$work"
  fi
  existing=()
  for test in $tests; do [ -f "$work/$test" ] && existing+=("\"$test\""); done
  cat >> "$work/pyproject.toml" <<TOML

[tool.mutmut]
source_paths = ["mockllama"]
only_mutate = [$(printf '"%s",' $modules)]
also_copy = ["cassettes", "scripts", "examples"]
pytest_add_cli_args = ["-p", "mutation_plugin", "-p", "no:cacheprovider"]
pytest_add_cli_args_test_selection = [$(IFS=,; echo "${existing[*]}")]
use_git_change_detection = false
TOML
  # Every Python process a test starts imports the mutated copy (whatever its working directory)
  # and, through mutation_hits/sitecustomize.py, tells mutmut which functions it called.
  export PYTHONPATH="$root/scripts/mutation_hits:$root/scripts${base_pythonpath:+:$base_pythonpath}"
  export MUTATION_MUTANTS="$work/mutants" MUTATION_HITS="$work/subprocess-hits"
  echo "== $target: mutating $modules against: ${existing[*]}"
  started=$(date +%s)
  # shellcheck disable=SC2086
  status=0
  (cd "$work" && timeout "$limit" mutmut run --max-children "$children" $patterns > "$report/$target.run.log" 2>&1) || status=$?
  if [ "$status" = 124 ]; then
    echo "mutation.sh: $target stopped after MUTATION_TIMEOUT=$limit s; the mutants not run count as 'not checked'" >&2
  elif [ "$status" != 0 ]; then
    echo "mutation.sh: mutmut failed for $target; see $report/$target.run.log" >&2; exit 1
  fi
  (cd "$work" && mutmut results --all true > "$report/$target.results.txt" 2>&1)
  python - "$report/$target.results.txt" "$target" "$(( $(date +%s) - started ))" $patterns <<'PY'
import fnmatch, sys
results, target, seconds, patterns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
counts, survivors, statuses = {}, [], []
for line in open(results):
    name, _, status = line.strip().rpartition(": ")
    if not name or not any(fnmatch.fnmatch(name, p) for p in patterns):
        continue
    counts[status] = counts.get(status, 0) + 1
    statuses.append((name, status))
    if status == "survived":
        survivors.append(name)
caught = sum(counts.get(k, 0) for k in ("killed", "timeout", "caught by type check"))
judged = sum(v for k, v in counts.items() if k not in ("not checked", "skipped"))
score = 100 * caught / judged if judged else 0.0
print(f"{target}: score {score:.1f}% ({caught} of {judged} mutants caught; "
      f"{', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}; {seconds} s)")
survivors += [name for name, status in statuses if status == "no tests"]
with open(results.replace(".results.txt", ".survivors.txt"), "w") as out:
    out.write("".join(f"{name}\n" for name in survivors))
PY
  # the diff of each survivor, to read and judge
  : > "$report/$target.survivors.diff"
  while read -r name; do
    (cd "$work" && mutmut show "$name" < /dev/null) >> "$report/$target.survivors.diff" 2>&1  # not the list's stdin
  done < "$report/$target.survivors.txt"
  rm -rf "$work"
done
