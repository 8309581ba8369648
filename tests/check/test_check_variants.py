"""`check` names what is wrong, aspect by aspect, and the server whose variant it is (issues 26, 46
and 54), on /v1/responses and on /v1/chat/completions.

Each test double in tests/support/doubles/ answers the probes as another real server reports a cut (its
docstring names the server and the issue). `check --probe responses --json` must judge every aspect
on its own, exit 1 whenever any aspect says the cut reply finished, and name the failing aspects
and the variant in its verdict; `check` on both endpoints must name each server's chat side too,
and exit with the worse endpoint's code. The stock llama-server shape is mockllama's own `buggy`
(the real recordings); the honest one is `fixed`.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from mockllama.behaviours.fixed import fixed
from mockllama.behaviours.variants import REPLIES, SERVERS
from mockllama.behaviours.variants import VARIANTS as DECLARED
from mockllama.check.reading import Seen, StreamEvent, _stream_events, seen_in_chat, seen_in_stream
from mockllama.check.report import ProbeResult, Report
from mockllama.check.variants import CHAT_VARIANTS, VARIANTS, chat_named, chat_signal, fits
from mockllama.check.verdicts import _judge, _judge_chat
from mockllama.server.background import BackgroundServer
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from support import ROOT
from support.doubles import aimock, hybrid_terminal, inspect_ai_chat, item_status, localai_chat, ollama
from support.recordings import SCENARIOS
from support.twins import said

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
# Its cut tool call is LiteLLM's in a stream (item "completed", then response.incomplete): item_status names both.
LITELLM = (
    "LiteLLM: 'incomplete' with its reason and a stream ending response.incomplete, but 'completed' on a cut "
    "function call and on every streamed item (BerriAI/litellm 1.110.2, its chat bridge; no issue filed)"
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
        "a reply cut off at max_output_tokens is reported as finished by: cut item status. "
        f"Known variant: {VLLM}; {LITELLM}.",
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


def _check(url: str, *args: str, probe: str = "responses") -> subprocess.CompletedProcess:
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
    assert lines[-1].endswith(f"reported as finished by: cut item status. Known variant: {VLLM}; {LITELLM}.")


# check names a server by the signals its cut reply carries: mockllama's own variant behaviours
# (mockllama/behaviours/variants/) each carry one server's, on the real recordings.

PROBES = [("text", "text-cut-8", False), ("tool", "tool-cut-20", False), ("stream", "text-cut-8", True)]
PROBES.append(("stream", "tool-cut-20", True))


def _probe_result(variant, probe: str, name: str, stream: bool) -> ProbeResult:
    interaction = SCENARIOS[name].find("POST", RESPONSES_PATH, stream)
    reply = variant.reply(interaction, SCENARIOS[name])
    seen = seen_in_stream(_stream_events(reply.body, RESPONSES_PATH)) if stream else Seen(json.loads(reply.body))
    verdict, reason, aspects, variants = _judge(seen, said("length"), probe)
    return ProbeResult(probe, name, verdict, reason, aspects=aspects, variants=variants)


@pytest.mark.parametrize("variant", DECLARED, ids=lambda variant: variant.name)
def test_check_names_each_variant_behaviour_and_no_other(variant):
    """Over --probe all's four cut replies, exactly one server's signals fit every one."""
    report = Report("http://x", [_probe_result(variant, *probe) for probe in PROBES])
    assert report.variants == [str(variant)]
    assert report.summary.endswith(f"Known variant: {variant}.")


@pytest.mark.parametrize("variant", DECLARED, ids=lambda variant: variant.name)
def test_the_reasoning_probe_names_the_variant_too(variant):
    """Where the cut reasoning reply is not honest. LiteLLM's is (its cut call is what says
    'completed'): a reply that is honest as check reads it names no server."""
    for stream in (False, True):
        result = _probe_result(variant, "reasoning", "thinking-cut-12", stream)
        assert (str(variant) in result.variants) is (result.verdict != "honest") is (variant.name != "litellm")


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
    """mockllama serves each variant under its own prefix (/ollama/v1/...): `check` there finds a
    cut reported as finished on /v1/responses (every variant says so somewhere) and names that
    server alone, whatever its chat side says."""
    result = _check(f"{server.url}/{variant.name}", "--json", probe="all")
    report = json.loads(result.stdout)
    assert result.returncode == report["exit_code"] == 1, report["summary"]
    responses = report["endpoints"][RESPONSES_PATH]
    assert responses["verdict"] == "dishonest"
    assert responses["summary"].endswith(f"Known variant: {variant}.")
    # The twin shows the cut by its finish_reason, its usage at the limit (LocalAI's "tool_calls",
    # inspect_ai's "stop") or a call that does not parse; inspect_ai's streamed text twin shows
    # nothing: "stop", and a stream sends no usage unless asked.
    probes = [probe for probe in report["probes"] if probe["endpoint"] == RESPONSES_PATH]
    unknown = [(probe["probe"], probe["scenario"]) for probe in probes if probe["verdict"] == "unknown"]
    assert unknown == ([("stream", "text-cut-8")] if variant.name == "inspect-ai" else [])
    # a finished reply is never said to be cut; inspect_ai's non-streamed one says null, not "completed",
    # and its function_call item null; stock llama-server and LocalAI send no arguments.done for a finished call
    finished = [probe["finished"]["verdict"] for probe in probes]
    expected = {"inspect-ai": [W, W, H, W], "buggy": [H, H, H, W], "localai": [H, H, H, W]}
    assert finished == expected.get(variant.name, [H] * 4)


def test_the_docs_list_every_known_variant_as_check_names_it():
    """docs/check.md's table of known variants is made from check.variants.VARIANTS, row for row."""
    text = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    head = "| server | a reply cut at `max_output_tokens` | source |\n| --- | --- | --- |\n"
    rows = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()
    assert rows == [f"| {variant.server} | {variant.signal} | {variant.citation} |" for variant in VARIANTS]


# The chat side: each server's /v1/chat/completions, as its source says it reports a cut reply
# (written here by hand; check makes its names from the declarations in behaviours/variants/).

CHAT_NAMES = {
    "localai": (
        "LocalAI: finish_reason 'tool_calls' for a cut reply with any tool call "
        "(mudler/LocalAI core/http/endpoints/openai/chat.go @82c191af)"
    ),
    "inspect-ai": (
        "inspect_ai: finish_reason 'stop' for every cut reply "
        "(UKGovernmentBEIS/inspect_ai issue 5143 (fixed later); _openai.py @499e6152)"
    ),
    "lmstudio": (
        "LM Studio: usage.completion_tokens max_tokens - 1 on a cut reply "
        "(lmstudio-ai/lmstudio-bug-tracker issue 2335, open)"
    ),
    "vllm": (
        "vLLM: finish_reason 'tool_calls' for a cut reply with a tool call whose arguments parse, under "
        "tool_choice 'auto' or none sent; streamed, finish_reason 'length' as llama-server's "
        "(vllm-project/vllm issue 58228, open; serving.py @006c49d4)"
    ),
}
# Per server, each chat probe's verdict on its cut reply (chat-text, chat-tool, chat-stream text-cut-8,
# chat-stream tool-cut-20), the exit code of `--probe chat` and the chat side it is named by. vLLM's
# relabel needs a cut call that parses under tool_choice "auto": every recorded tool request forces
# "required", so on check's probes its chat side says "length", as llama-server's does.
CHAT_EXPECTED = {
    "buggy": ([H, H, H, H], 0, []),
    "ollama": ([H, H, H, H], 0, []),
    "sglang": ([H, H, H, H], 0, []),
    "aimock": ([H, H, H, H], 0, []),  # its chat side is not read: kept as llama-server's
    "vllm": ([H, H, H, H], 0, []),
    "localai": ([H, D, H, D], 1, ["localai"]),
    # a streamed "stop" with no usage and no call shows no cut: that probe can't tell
    "inspect-ai": ([D, D, "unknown", D], 1, ["inspect-ai"]),
    "lmstudio": ([H, H, H, H], 0, ["lmstudio"]),  # its finish_reason is honest; the usage is one short
    "litellm": ([H, H, H, H], 0, []),  # it keeps llama-server's "length" and usage
}


def test_the_chat_names_are_made_from_the_declarations():
    assert {variant.name: chat_named(variant) for variant in CHAT_VARIANTS} == CHAT_NAMES


@pytest.mark.parametrize("variant", SERVERS, ids=lambda variant: variant.name)
def test_check_on_the_chat_endpoint_names_each_server_s_chat_side(server, variant):
    verdicts, code, named = CHAT_EXPECTED[variant.name]
    result = _check(f"{server.url}/{variant.name}", "--json", probe="chat")
    report = json.loads(result.stdout)
    assert result.returncode == report["exit_code"] == code, report["summary"]
    assert [probe["verdict"] for probe in report["probes"]] == verdicts
    assert {probe["finished"]["verdict"] for probe in report["probes"]} == {H}
    assert report["endpoints"][CHAT_PATH]["variants"] == [CHAT_NAMES[name] for name in named]
    if named:
        assert report["summary"].endswith(f"Known variant: {CHAT_NAMES[named[0]]}.")


def _chat_result(variant_name: str, probe: str, name: str, stream: bool, **request) -> ProbeResult:
    """A chat probe's result on the reply a variant behaviour makes of a recording, judged as check judges it."""
    interaction = SCENARIOS[name].find("POST", CHAT_PATH, stream)
    interaction = dataclasses.replace(interaction, request_json={**interaction.request_json, **request})
    reply = REPLIES[variant_name](interaction, SCENARIOS[name])
    seen = seen_in_chat(reply.body, interaction.request_json["max_tokens"], stream)
    verdict, reason, aspects, variants = _judge_chat(seen, interaction.request_json)
    return ProbeResult(probe, name, verdict, reason, aspects=aspects, variants=variants, endpoint=CHAT_PATH)


def test_check_names_vllm_s_chat_side_for_a_cut_call_chosen_by_auto():
    """vLLM's relabel, on a reply no bundled request asks for: tool-cut-30's cut call parses, and
    tool_choice "auto" lets vLLM's parser take it. On that one reply LocalAI's chat side looks the
    same (it says "tool_calls" for any cut call): both are named, as on one Responses probe Ollama
    and LocalAI are. tool-cut-20, whose call does not parse, is where LocalAI says "tool_calls" and
    vLLM "length": a LocalAI server is then named alone; vLLM's "length" there names no one."""
    parsed = _chat_result("vllm", "chat-tool", "tool-cut-30", False, tool_choice="auto")
    assert parsed.verdict == "dishonest" and parsed.variants == [CHAT_NAMES["vllm"], CHAT_NAMES["localai"]]
    cut_mid_string = _chat_result("vllm", "chat-tool", "tool-cut-20", False, tool_choice="auto")
    assert cut_mid_string.verdict == "honest" and cut_mid_string.variants == []
    localai = [
        _chat_result("localai", "chat-tool", name, False, tool_choice="auto") for name in ("tool-cut-30", "tool-cut-20")
    ]
    assert Report("http://x", localai).variants == [CHAT_NAMES["localai"]]


def test_an_honest_chat_reply_names_no_server_though_many_chat_sides_would_send_it():
    """llama-server, Ollama, SGLang and vLLM (but for its auto calls) all say "length": a chat side is
    named only where it differs from llama-server's."""
    for name in ("text-cut-8", "tool-cut-20"):
        for stream in (False, True):
            assert _chat_result("ollama", "chat-tool", name, stream).variants == []


# Test doubles of servers whose chat side lies while their /v1/responses is honest (fixed's): the
# exit code is the worse endpoint's.

# The Responses side of each is fixed's; inspect_ai's streamed twin says "stop" with no usage, so one
# Responses probe can't tell: dishonest on one endpoint beats "can't tell" on the other.
CHAT_DOUBLES = {
    "localai_chat": (localai_chat, "localai", "honest"),
    "inspect_ai_chat": (inspect_ai_chat, "inspect-ai", "unknown"),
}
RESPONSES_SAID = {
    "honest": "a reply cut off at max_output_tokens is reported as 'incomplete' (reason 'max_output_tokens').",
    "unknown": (
        "can't tell whether a cut-off reply is reported honestly: stream: the chat twin says "
        "finish_reason='stop', and nothing in it shows a cut: the reply finished inside the limit, so this "
        "probe proves nothing."
    ),
}


@pytest.fixture(scope="module")
def chat_urls(server):
    running = {
        name: BackgroundServer(double[0].create_app(server.url)).start() for name, double in CHAT_DOUBLES.items()
    }
    yield {name: double.url for name, double in running.items()}
    for double in running.values():
        double.stop()


@pytest.mark.parametrize("name", sorted(CHAT_DOUBLES))
def test_a_lying_chat_side_beside_a_responses_side_that_does_not_lie_exits_1_and_names_it(chat_urls, name):
    url, (_, server_name, said) = chat_urls[name], CHAT_DOUBLES[name]
    result = _check(url, probe="all")
    assert result.returncode == 1, result.stdout
    responses, chat, overall = result.stdout.splitlines()[-3:]
    assert responses == f"/v1/responses {said}: {RESPONSES_SAID[said]}"
    assert chat == (
        "/v1/chat/completions dishonest: a reply cut off at max_tokens is reported as finished by: finish_reason. "
        f"Known variant: {CHAT_NAMES[server_name]}."
    )
    assert (
        overall == f"{url}: dishonest (exit 1), the worse of /v1/responses {said} and /v1/chat/completions dishonest."
    )
    report = json.loads(_check(url, "--json", probe="all").stdout)
    codes = {path: endpoint["exit_code"] for path, endpoint in report["endpoints"].items()}
    assert codes == {RESPONSES_PATH: 0 if said == "honest" else 2, CHAT_PATH: 1}
    chat_probes = [probe for probe in report["probes"] if probe["endpoint"] == CHAT_PATH]
    assert [probe["verdict"] for probe in chat_probes] == CHAT_EXPECTED[server_name][0]


def test_the_docs_list_every_known_chat_side_as_check_names_it():
    """docs/check.md's table of known chat sides is made from check.variants.CHAT_VARIANTS, row for row."""
    text = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    head = "| server | a reply cut at `max_tokens` on `/v1/chat/completions` | source |\n| --- | --- | --- |\n"
    rows = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()
    assert rows == [
        f"| {variant.server} | {chat_signal(variant.chat)} | {variant.chat.source} |" for variant in CHAT_VARIANTS
    ]
