"""`check` names what is wrong, aspect by aspect, and the variant other servers ship (issue 26 item 3).

Each test double in tests/support/doubles/ answers the probes as another real server reports a cut (its
docstring names the server and the issue). `check --probe all --json` must judge every aspect on
its own, exit 1 whenever any aspect says the cut reply finished, and name the failing aspects
and the variant in its verdict. The stock llama-server shape is mockllama's own `buggy` (the real
recordings); the honest one is `fixed`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockllama.server.background import BackgroundServer
from support.doubles import aimock, hybrid_terminal, item_status, ollama

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
ASPECTS = [
    "status",
    "incomplete_details.reason",
    "cut_item.status",
    "completed_at",
    "terminal_event",
    "function_call_arguments.done",
]
H, D, W, NA = "honest", "dishonest", "wrong", "not applicable"
STOCK = "status 'completed' (stock llama-server; Ollama, ollama/ollama PR 17239)"
ITEM = "'incomplete' at the top but 'completed' on the cut item (vLLM, vllm-project/vllm issue 57998)"
HYBRID = "the hybrid terminal event, response.completed carrying an incomplete response (vLLM's stream; aimock)"

# Per double: each probe's aspects (text, tool, stream text-cut-8, stream tool-cut-20), in ASPECTS
# order, then the summary after "URL: ".
EXPECTED = {
    "ollama": (
        [[D, W, D, D, NA, NA], [D, W, D, D, NA, NA], [D, W, D, D, D, NA], [D, W, D, D, D, H]],
        "a reply cut off at max_output_tokens is reported as finished by: status, cut item status, completed_at, "
        f"terminal event; also wrong: incomplete_details.reason. Known variant: {STOCK}.",
    ),
    "item_status": (
        [[H, H, D, H, NA, NA], [H, H, D, H, NA, NA], [H, H, D, H, H, NA], [H, H, D, H, H, H]],
        f"a reply cut off at max_output_tokens is reported as finished by: cut item status. Known variant: {ITEM}.",
    ),
    "hybrid_terminal": (
        [[H, H, H, H, NA, NA], [H, H, H, H, NA, NA], [H, H, H, H, D, NA], [H, H, H, H, D, H]],
        f"a reply cut off at max_output_tokens is reported as finished by: terminal event. Known variant: {HYBRID}.",
    ),
    "aimock": (
        [[H, W, D, H, NA, NA], [H, W, D, H, NA, NA], [H, W, D, H, D, NA], [H, W, D, H, D, H]],
        "a reply cut off at max_output_tokens is reported as finished by: cut item status, terminal event; also "
        f"wrong: incomplete_details.reason. Known variant: {ITEM}; {HYBRID}.",
    ),
    "buggy": (
        [[D, W, D, D, NA, NA], [D, W, D, D, NA, NA], [D, W, D, H, D, NA], [D, W, D, H, D, W]],
        "a reply cut off at max_output_tokens is reported as finished by: status, cut item status, completed_at, "
        f"terminal event; also wrong: incomplete_details.reason, function_call_arguments.done. Known variant: {STOCK}.",
    ),
    "fixed": (
        [[H, H, H, H, NA, NA], [H, H, H, H, NA, NA], [H, H, H, H, H, NA], [H, H, H, H, H, H]],
        "a reply cut off at max_output_tokens is reported as 'incomplete' (reason 'max_output_tokens').",
    ),
}
DOUBLES = {"ollama": ollama, "item_status": item_status, "hybrid_terminal": hybrid_terminal, "aimock": aimock}


@pytest.fixture(scope="module")
def urls(server):
    """Each double on its own port, relaying to the session's mockllama; buggy and fixed as they are."""
    running = {name: BackgroundServer(module.create_app(server.url)).start() for name, module in DOUBLES.items()}
    yield {
        **{name: double.url for name, double in running.items()},
        "buggy": f"{server.url}/buggy",
        "fixed": f"{server.url}/fixed",
    }
    for double in running.values():
        double.stop()


def _check(url: str, *args: str, probe: str = "all") -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MOCKLLAMA, "check", url, "--probe", probe, *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_aspect_is_judged_on_its_own_and_the_verdict_names_the_failing_ones(urls, name):
    verdicts, summary = EXPECTED[name]
    result = _check(urls[name], "--json")
    report = json.loads(result.stdout)
    assert result.returncode == report["exit_code"] == (0 if name == "fixed" else 1), report["summary"]
    assert [[aspect["name"] for aspect in probe["aspects"]] for probe in report["probes"]] == [ASPECTS] * 4
    assert [[aspect["verdict"] for aspect in probe["aspects"]] for probe in report["probes"]] == verdicts
    assert report["summary"] == f"{urls[name]}: {summary}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_printed_verdict_is_the_json_one_and_lists_every_aspect_that_applies(urls, name):
    verdicts, summary = EXPECTED[name]
    result = _check(urls[name])
    lines = result.stdout.splitlines()
    assert lines[-1] == f"{urls[name]}: {summary}"
    judged = [line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("  known variant")]
    # each probe's cut reply, then its request with room to finish: status, and in a stream the terminal event
    finished = [[H], [H], [H, H], [H, H]]
    assert judged == [
        verdict for probe, then in zip(verdicts, finished) for verdict in [*probe, *then] if verdict != NA
    ]


def test_the_hybrid_terminal_event_is_no_all_clear(urls):
    """Issue 26: the stream ends with `event: response.completed`; b518762 said exit 0, 'incomplete'."""
    result = _check(urls["hybrid_terminal"])
    assert result.returncode == 1, result.stdout
    assert (
        "  dishonest terminal event: 'response.completed' carrying a response whose status is 'incomplete' "
        "(a client that switches on the event type takes the reply as finished (the hybrid terminal event))"
        in result.stdout.splitlines()
    )


def test_the_item_status_verdict_agrees_with_the_status_printed_above_it(urls):
    """Issue 26: b518762 printed status='incomplete', then 'reported as completed'. Now the verdict
    says the top-level status is honest and names the cut item."""
    lines = _check(urls["item_status"], probe="tool").stdout.splitlines()
    assert lines[0].startswith(
        "/v1/responses max_output_tokens=20: status='incomplete' "
        "incomplete_details={'reason': 'max_output_tokens'} function_call status='completed'"
    )
    assert "  honest    status: 'incomplete' (the reply was cut)" in lines
    assert (
        "  dishonest cut item status: the last item ('function_call') says 'completed' "
        "(says the item being generated finished)"
    ) in lines
    assert lines[-1].endswith(f"reported as finished by: cut item status. Known variant: {ITEM}.")
