"""Loaded by every Python process a test starts during scripts/mutation.sh (it alone puts this
directory on PYTHONPATH), so that those processes run the mutant and mutmut sees their calls.

mutmut runs each test once first ("stats") and keeps, for each mutated function, the tests that
called it; a mutant is later run against those tests only. It sees the calls made in its own
pytest process, not in a process a test starts (`python -m mockllama check URL`, `mockllama
serve`), so a test that drives mockllama through its command line was never run against a
mutant. Here, in a process started while mutmut runs tests (MUTANT_UNDER_TEST is set), the
mutated copy comes first on sys.path whatever the working directory; and in the first pass
(MUTANT_UNDER_TEST=stats) each call's function name is appended to the file MUTATION_HITS,
which scripts/mutation_plugin.py hands to mutmut after each test. mutmut's own process starts
before MUTANT_UNDER_TEST is set, so nothing here touches it. (The mutated copy is not put on
PYTHONPATH: it does not exist yet when mutmut starts, and Python would remember that path as
empty for mutmut's whole run.)
"""

import os
import sys

if os.environ.get("MUTANT_UNDER_TEST") and os.environ.get("MUTATION_MUTANTS"):
    sys.path.insert(0, os.environ["MUTATION_MUTANTS"])

if os.environ.get("MUTANT_UNDER_TEST") == "stats" and os.environ.get("MUTATION_HITS"):
    try:
        from mutmut.mutation import trampoline
    except ImportError:  # not a mutmut run after all
        pass
    else:
        _hits = os.environ["MUTATION_HITS"]

        def _record_in_file(name, caller=None):
            # opened per call: the test's process renames the file to read it (see the plugin)
            with open(_hits, "a", encoding="utf-8") as out:
                out.write(name + "\n")

        trampoline.record_trampoline_hit = _record_in_file
