"""`check` names what is wrong, aspect by aspect, and the server whose variant it is (issues 26 and 46).

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

from mockllama.behaviours.fixed import fixed
from mockllama.behaviours.variants import VARIANTS as DECLARED
from mockllama.check.reading import Seen, StreamEvent, _stream_events, seen_in_stream
from mockllama.check.report import ProbeResult, Report
from mockllama.check.variants import VARIANTS, fits
from mockllama.check.verdicts import _judge
from mockllama.server.background import BackgroundServer
from mockllama.wire.routes import RESPONSES_PATH
from support import ROOT
from support.doubles import aimock, hybrid_terminal, item_status, ollama
from support.recordings import SCENARIOS

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
STOCK = (
    "stock llama-server: 'completed' everywhere, no incomplete_details, no function_call_arguments.done "
    "(ggml-org/llama.cpp issue 30773)"
)
OLLAMA = "Ollama: 'completed' everywhere, incomplete_details null, completed_at set (ollama/ollama PR 17239, open)"
VLLM = (
    "vLLM: 'incomplete' at the top, 'completed' on the cut item, a stream ending with response.completed "
    "(vllm-project/vllm issue 57998 and PR 45386, open)"
)
AIMOCK = (
    "aimock: 'incomplete' without incomplete_details, 'completed' on the cut item, a stream ending with "
    "response.completed (CopilotKit/aimock, no issue filed)"
)

# Per double: each probe's aspects (text, tool, stream text-cut-8, stream tool-cut-20), in ASPECTS
# order, then the summary after "URL: ".
EXPECTED = {
    "ollama": (
        [[D, W, D, D, NA, NA], [D, W, D, D, NA, NA], [D, W, D, D, D, NA], [D, W, D, D, D, H]],
        "a reply cut off at max_output_tokens is reported as finished by: status, cut item status, completed_at, "
        f"terminal event; also wrong: incomplete_details.reason. Known variant: {OLLAMA}.",
    ),
    "item_status": (
        [[H, H, D, H, NA, NA], [H, H, D, H, NA, NA], [H, H, D, H, H, NA], [H, H, D, H, H, H]],
        f"a reply cut off at max_output_tokens is reported as finished by: cut item status. Known variant: {VLLM}.",
    ),
    "hybrid_terminal": (
        [[H, H, H, H, NA, NA], [H, H, H, H, NA, NA], [H, H, H, H, D, NA], [H, H, H, H, D, H]],
        "a reply cut off at max_output_tokens is reported as finished by: terminal event.",
    ),
    "aimock": (
        [[H, W, D, H, NA, NA], [H, W, D, H, NA, NA], [H, W, D, H, D, NA], [H, W, D, H, D, H]],
        "a reply cut off at max_output_tokens is reported as finished by: cut item status, terminal event; also "
        f"wrong: incomplete_details.reason. Known variant: {AIMOCK}.",
    ),
    "buggy": (
        [[D, W, D, D, NA, NA], [D, W, D, D, NA, NA], [D, W, D, H, D, NA], [D, W, D, H, D, W]],
        "a reply cut off at max_output_tokens is reported as finished by: status, cut item status, completed_at, "
        f"terminal event; also wrong: incomplete_details.reason, function_call_arguments.done. A reply that finished "
        "inside its limit is reported wrongly: function_call_arguments.done (none for the call "
        "'fc_stPj56etMdSabtdRSVyv2ywgIR8LSjo4': the streaming protocol sends it for every call, cut or finished). "
        f"Known variant: {STOCK}.",
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
    # each probe's cut reply, then its request with room to finish, judged on the same aspects
    report = json.loads(_check(urls[name], "--json").stdout)
    finished = [[aspect["verdict"] for aspect in probe["finished"]["aspects"]] for probe in report["probes"]]
    assert [len(then) for then in finished] == [len(ASPECTS)] * 4
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
    assert lines[-1].endswith(f"reported as finished by: cut item status. Known variant: {VLLM}.")


# check names a server by the signals its cut reply carries: mockllama's own variant behaviours
# (mockllama/behaviours/variants/) each carry one server's, on the real recordings.

PROBES = [("text", "text-cut-8", False), ("tool", "tool-cut-20", False), ("stream", "text-cut-8", True)]
PROBES.append(("stream", "tool-cut-20", True))


def _probe_result(variant, probe: str, name: str, stream: bool) -> ProbeResult:
    interaction = SCENARIOS[name].find("POST", RESPONSES_PATH, stream)
    reply = variant.reply(interaction, SCENARIOS[name])
    seen = seen_in_stream(_stream_events(reply.body, RESPONSES_PATH)) if stream else Seen(json.loads(reply.body))
    verdict, reason, aspects, variants = _judge(seen, "length", probe)
    return ProbeResult(probe, name, verdict, reason, aspects=aspects, variants=variants)


@pytest.mark.parametrize("variant", DECLARED, ids=lambda variant: variant.name)
def test_check_names_each_variant_behaviour_and_no_other(variant):
    """Over --probe all's four cut replies, exactly one server's signals fit every one."""
    report = Report("http://x", [_probe_result(variant, *probe) for probe in PROBES])
    assert report.variants == [str(variant)]
    assert report.summary.endswith(f"Known variant: {variant}.")


@pytest.mark.parametrize("variant", DECLARED, ids=lambda variant: variant.name)
def test_the_reasoning_probe_names_the_variant_too(variant):
    assert str(variant) in _probe_result(variant, "reasoning", "thinking-cut-12", False).variants
    assert str(variant) in _probe_result(variant, "reasoning", "thinking-cut-12", True).variants


def test_one_probe_names_every_server_whose_signals_fit_it():
    """A non-streamed text reply from Ollama is one LocalAI would send too: both are named, and the
    stream's cut call (arguments.done or not) tells them apart."""
    ollama = next(variant for variant in DECLARED if variant.name == "ollama")
    localai = next(variant for variant in DECLARED if variant.name == "localai")
    assert _probe_result(ollama, *PROBES[0]).variants == [str(ollama), str(localai)]
    assert _probe_result(ollama, *PROBES[3]).variants == [str(ollama)]


class _Fixed:
    """fixed, read as a variant's reply is."""

    reply = staticmethod(fixed)


FIXED = _Fixed()


def test_a_reply_with_honest_signals_names_no_server():
    report = Report("http://x", [_probe_result(FIXED, *probe) for probe in PROBES])
    assert report.variants == [] and report.verdict == "honest"


@pytest.mark.parametrize("ending", [["response.incomplete"], ["response.completed", "response.completed"]])
def test_a_stream_that_ends_otherwise_than_the_server_s_is_not_named_after_it(ending):
    """Stock llama-server's cut stream, but ending with another terminal event, or two."""
    stock = next(variant for variant in DECLARED if variant.name == "buggy")
    seen = _probe_result(stock, *PROBES[2])
    assert seen.variants == [str(stock)]
    interaction = SCENARIOS["text-cut-8"].find("POST", RESPONSES_PATH, True)
    events = _stream_events(interaction.body, RESPONSES_PATH)
    *rest, last = events
    ends = [StreamEvent(kind, {**last.data, "type": kind}) for kind in ending]
    assert not fits(stock, seen_in_stream([*rest, *ends]))
    assert fits(stock, seen_in_stream([*rest, last]))


@pytest.mark.parametrize("variant", DECLARED, ids=lambda variant: variant.name)
def test_check_against_each_variant_behaviour_names_that_server_and_exits_1(server, variant):
    """mockllama serves each variant under its own prefix (/ollama/v1/...): `check --probe all` there
    finds a cut reported as finished (every variant says so somewhere) and names that server alone."""
    result = _check(f"{server.url}/{variant.name}", "--json")
    report = json.loads(result.stdout)
    assert result.returncode == report["exit_code"] == 1, report["summary"]
    unknown = [probe for probe in report["probes"] if probe["verdict"] == "unknown"]
    if unknown:
        # check learns of the cut from the server's own chat twin: where that lies (LocalAI says
        # "tool_calls" for a cut call, inspect_ai "stop" for every cut) the probe cannot tell, and
        # says why; judging the chat side itself is issue 54's second item
        assert not variant.chat.honest
        assert all("the chat twin says finish_reason=" in probe["reason"] for probe in unknown)
        return
    assert report["verdict"] == "dishonest"
    assert report["summary"].endswith(f"Known variant: {variant}.")
    # a finished reply is never said to be cut; inspect_ai's non-streamed one says null, not "completed",
    # and its function_call item null; stock llama-server and LocalAI send no arguments.done for a finished call
    finished = [probe["finished"]["verdict"] for probe in report["probes"]]
    expected = {"inspect-ai": [W, W, H, W], "buggy": [H, H, H, W], "localai": [H, H, H, W]}
    assert finished == expected.get(variant.name, [H] * 4)


def test_the_docs_list_every_known_variant_as_check_names_it():
    """docs/check.md's table of known variants is made from check.variants.VARIANTS, row for row."""
    text = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    head = "| server | a reply cut at `max_output_tokens` | source |\n| --- | --- | --- |\n"
    rows = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()
    assert rows == [f"| {variant.server} | {variant.signal} | {variant.citation} |" for variant in VARIANTS]
