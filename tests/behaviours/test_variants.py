"""The variant behaviours (mockllama/behaviours/variants/): each server's truncation signals on
llama-server's real recordings, and nothing else.

The expected verdicts are written by hand from the research table (each server's source, cited in
its module), not computed from the declarations under test: for every variant and every kind of
cut reply (text, tool call, reasoning; streamed and not), ``check`` judges the transformed reply as
that server's reply would be judged. A finished reply is sent as that server sends one, and every
byte that is no truncation signal stays the recording's.
"""

from __future__ import annotations

import copy
import json

import pytest

from mockllama.behaviours.reply import recorded_reply
from mockllama.behaviours.variants import REPLIES, SERVERS, VARIANTS, llama_server
from mockllama.behaviours.variants.signals import Variant
from mockllama.check.reading import Seen, _stream_events, seen_in_stream
from mockllama.check.verdicts import judge_aspects, judge_finished
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from support.recordings import SCENARIOS

H, D, W, NA = "honest", "dishonest", "wrong", "not applicable"
CUTS = {"text": "text-cut-8", "tool": "tool-cut-20", "reasoning": "thinking-cut-12"}
FINISHES = {"text": "text-finishes", "tool": "tool-finishes", "reasoning": "thinking-finishes"}

# check's aspects of each cut reply, in its order: status, incomplete_details.reason, the cut (last)
# item's status, completed_at, the terminal event, the cut call's function_call_arguments.done.
# Per variant: (kind, streamed) -> verdicts, from the research table.
EXPECTED_CUT = {
    "ollama": {  # completed, incomplete_details null, items completed but reasoning without a status, completed_at set
        ("text", False): [D, W, D, D, NA, NA],
        ("tool", False): [D, W, D, D, NA, NA],
        ("reasoning", False): [D, W, W, D, NA, NA],
        ("text", True): [D, W, D, D, D, NA],
        ("tool", True): [D, W, D, D, D, H],  # arguments.done for every call
        ("reasoning", True): [D, W, W, D, D, NA],
    },
    "vllm": {  # incomplete + max_output_tokens, items completed, reasoning null, no completed_at, hybrid terminal
        ("text", False): [H, H, D, H, NA, NA],
        ("tool", False): [H, H, D, H, NA, NA],
        ("reasoning", False): [H, H, W, H, NA, NA],
        ("text", True): [H, H, D, H, D, NA],
        ("tool", True): [H, H, D, H, D, H],  # the recorded call streamed its arguments as deltas
        ("reasoning", True): [H, H, W, H, D, NA],
    },
    "localai": {  # completed everywhere, incomplete_details null, completed_at set, no arguments.done
        ("text", False): [D, W, D, D, NA, NA],
        ("tool", False): [D, W, D, D, NA, NA],
        ("reasoning", False): [D, W, D, D, NA, NA],
        ("text", True): [D, W, D, D, D, NA],
        ("tool", True): [D, W, D, D, D, W],
        ("reasoning", True): [D, W, D, D, D, NA],
    },
    "sglang": {  # completed, incomplete_details null, no completed_at, reasoning null, arguments.done sent
        ("text", False): [D, W, D, H, NA, NA],
        ("tool", False): [D, W, D, H, NA, NA],
        ("reasoning", False): [D, W, W, H, NA, NA],
        ("text", True): [D, W, D, H, D, NA],
        ("tool", True): [D, W, D, H, D, H],
        ("reasoning", True): [D, W, W, H, D, NA],
    },
    "inspect-ai": {  # null status + reason; function_call null; the stream says completed around the reason
        ("text", False): [D, H, D, H, NA, NA],
        ("tool", False): [D, H, W, H, NA, NA],
        ("reasoning", False): [D, H, D, H, NA, NA],
        ("text", True): [D, H, D, H, D, NA],
        ("tool", True): [D, H, W, H, D, H],
        ("reasoning", True): [D, H, D, H, D, NA],
    },
    "aimock": {  # incomplete without incomplete_details, items completed, reasoning without a status, hybrid
        ("text", False): [H, W, D, H, NA, NA],
        ("tool", False): [H, W, D, H, NA, NA],
        ("reasoning", False): [H, W, W, H, NA, NA],
        ("text", True): [H, W, D, H, D, NA],
        ("tool", True): [H, W, D, H, D, H],
        ("reasoning", True): [H, W, W, H, D, NA],
    },
    "litellm": {  # incomplete + max_output_tokens, message and reasoning incomplete, function_call completed,
        # no completed_at, response.incomplete; its output_item.done says "completed" but check reads the terminal's
        ("text", False): [H, H, H, H, NA, NA],
        ("tool", False): [H, H, D, H, NA, NA],
        ("reasoning", False): [H, H, H, H, NA, NA],
        ("text", True): [H, H, H, H, H, NA],
        ("tool", True): [H, H, D, H, H, H],  # arguments.done for every call
        ("reasoning", True): [H, H, H, H, H, NA],
    },
}

ABSENT = "absent"
# What each server sends for a reply that finished, from the research table: (status,
# incomplete_details, completed_at: "set", None or absent) in the body, then in the stream's
# terminal response, and the stream's terminal event.
EXPECTED_FINISHED = {
    "ollama": (("completed", None, "set"), ("completed", None, "set"), "response.completed"),
    "vllm": (("completed", None, ABSENT), ("completed", None, ABSENT), "response.completed"),
    "localai": (("completed", None, "set"), ("completed", None, "set"), "response.completed"),
    "sglang": (("completed", None, ABSENT), ("completed", None, ABSENT), "response.completed"),
    "inspect-ai": ((None, None, None), ("completed", None, None), "response.completed"),
    "aimock": (("completed", ABSENT, ABSENT), ("completed", ABSENT, ABSENT), "response.completed"),
    "litellm": (("completed", None, ABSENT), ("completed", None, ABSENT), "response.completed"),
}
# Each function_call's arguments.done in a finished tool stream (tool-finishes: one call, its
# arguments streamed as deltas).
FINISHED_ARGUMENTS_DONE = {"ollama": 1, "vllm": 1, "localai": 0, "sglang": 1, "inspect-ai": 1, "aimock": 1}
FINISHED_ARGUMENTS_DONE["litellm"] = 1
# The finished replies with an item that says neither "completed" nor "incomplete", from the same
# table: reasoning without a status (Ollama, aimock) or null (vLLM, SGLang), inspect_ai's null call.
FINISHED_ITEM_WITHOUT_STATUS = {("ollama", "reasoning"), ("aimock", "reasoning"), ("vllm", "reasoning")}
FINISHED_ITEM_WITHOUT_STATUS |= {("sglang", "reasoning"), ("inspect-ai", "tool")}


def _interaction(name: str, stream: bool):
    return SCENARIOS[name].find("POST", RESPONSES_PATH, stream)


def _reply(variant: str, name: str, stream: bool):
    return REPLIES[variant](_interaction(name, stream), SCENARIOS[name])


def _seen(reply) -> Seen:
    """The reply as ``check`` reads it off the wire."""
    if reply.events is None:
        return Seen(json.loads(reply.body))
    return seen_in_stream(_stream_events(reply.body, RESPONSES_PATH))


def test_every_variant_has_a_behaviour_and_its_expectations():
    assert set(REPLIES) == {variant.name for variant in SERVERS} - {"buggy"}
    assert set(EXPECTED_CUT) == {variant.name for variant in VARIANTS} - {"buggy"}
    assert [variant.server for variant in VARIANTS] == [
        "stock llama-server",
        "Ollama",
        "vLLM",
        "LocalAI",
        "SGLang",
        "inspect_ai",
        "aimock",
        "LiteLLM",
    ]
    # LM Studio is known by its chat side only (closed source): check names no server by its Responses side.
    assert [variant.name for variant in SERVERS if variant not in VARIANTS] == ["lmstudio"]


def test_a_server_known_by_its_chat_side_only_sends_llama_server_s_responses():
    for name, stream in RESPONSES:
        interaction = _interaction(name, stream)
        assert REPLIES["lmstudio"](interaction, SCENARIOS[name]).body == interaction.body, (name, stream)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("kind", sorted(CUTS))
@pytest.mark.parametrize("variant", sorted(EXPECTED_CUT))
def test_a_cut_reply_is_judged_as_that_server_s_cut_reply(variant, kind, stream):
    assert SCENARIOS[CUTS[kind]].twin_finish_reason(_interaction(CUTS[kind], stream)) == "length"
    aspects = judge_aspects(_seen(_reply(variant, CUTS[kind], stream)))
    assert [aspect.verdict for aspect in aspects] == EXPECTED_CUT[variant][(kind, stream)], [a.line for a in aspects]


def _completed_at(response: dict):
    value = response.get("completed_at", ABSENT)
    return "set" if isinstance(value, int) else value


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("kind", sorted(FINISHES))
@pytest.mark.parametrize("variant", sorted(EXPECTED_FINISHED))
def test_a_finished_reply_is_sent_as_that_server_sends_one(variant, kind, stream):
    assert SCENARIOS[FINISHES[kind]].twin_finish_reason(_interaction(FINISHES[kind], stream)) in ("stop", "tool_calls")
    body, streamed, terminal = EXPECTED_FINISHED[variant]
    seen = _seen(_reply(variant, FINISHES[kind], stream))
    response = seen.response
    said = (response.get("status", ABSENT), response.get("incomplete_details", ABSENT), _completed_at(response))
    assert said == (streamed if stream else body)
    verdicts = [aspect.verdict for aspect in judge_finished(seen)]
    items = W if (variant, kind) in FINISHED_ITEM_WITHOUT_STATUS else H
    calls = NA if not (stream and kind == "tool") else H if FINISHED_ARGUMENTS_DONE[variant] else W
    # status (inspect_ai's null one is wrong), incomplete_details, items, completed_at, terminal event, arguments.done
    assert verdicts == [W if said[0] is None else H, H, items, H, H if stream else NA, calls]
    if stream:
        assert [event.data["type"] for event in seen.terminals] == [terminal]
        assert seen.terminal.name == terminal
    if stream and kind == "tool":
        assert len(seen.arguments_done) == FINISHED_ARGUMENTS_DONE[variant]


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("variant", sorted(EXPECTED_CUT))
def test_item_statuses_are_the_server_s_by_type_in_the_body_and_in_item_done(variant, stream):
    """tool-two-calls-cut-70: two calls, the first finished, the second cut. The servers here
    write one status per item type, the finished and the cut item alike."""
    declared = next(v for v in VARIANTS if v.name == variant)
    reply = _reply(variant, "tool-two-calls-cut-70", stream)
    response = _seen(reply).response
    ending = (declared.stream if stream else declared.body).cut
    assert [item.get("status", ABSENT) for item in response["output"]] == [ending.items["function_call"]] * 2
    if stream:
        done = [
            e.json()["item"] for e in reply.events if e.json() and e.json().get("type") == "response.output_item.done"
        ]
        assert [item.get("status", ABSENT) for item in done] == [declared.item_done["function_call"]] * 2


# Nothing else changes: without its signals, each reply is the recording.

SIGNAL_KEYS = ("status", "incomplete_details", "completed_at")


def _without_signals(response: dict) -> dict:
    response = {key: value for key, value in copy.deepcopy(response).items() if key not in SIGNAL_KEYS}
    for item in response.get("output") or []:
        item.pop("status", None)
    return response


def _stream_without_signals(events) -> list:
    kept = []
    for event in events:
        payload = event.json()
        if isinstance(payload, dict) and payload.get("type") == "response.function_call_arguments.done":
            continue
        if isinstance(payload, dict) and payload.get("type") in ("response.completed", "response.incomplete"):
            payload = {**payload, "type": "terminal", "response": _without_signals(payload["response"])}
            event = event._replace(name="terminal")
        elif isinstance(payload, dict) and payload.get("type") == "response.output_item.done":
            payload = {**payload, "item": {k: v for k, v in payload["item"].items() if k != "status"}}
        kept.append((event.name, payload if payload is not None else event.data))
    return kept


RESPONSES = [
    (name, stream)
    for name, scenario in sorted(SCENARIOS.items())
    for stream in (False, True)
    if (found := scenario.find("POST", RESPONSES_PATH, stream)) is not None and found.status == 200
]


@pytest.mark.parametrize("variant", sorted(REPLIES))
def test_nothing_but_the_truncation_signals_changes(variant):
    for name, stream in RESPONSES:
        interaction, reply = _interaction(name, stream), _reply(variant, name, stream)
        assert (reply.status, reply.headers) == (interaction.status, interaction.headers)
        if stream:
            assert _stream_without_signals(reply.events) == _stream_without_signals(interaction.events), name
            sent = {event.raw for event in reply.events}
            for event in interaction.events:  # every event but the terminal one and the items' done: as recorded
                if (event.json() or {}).get("type") not in ("response.output_item.done", "response.completed"):
                    assert event.raw in sent, (name, event.raw[:80])
        else:
            assert _without_signals(json.loads(reply.body)) == _without_signals(interaction.body_json), name


@pytest.mark.parametrize("variant", sorted(REPLIES))
def test_other_routes_and_errors_are_sent_as_recorded(variant):
    """/v1/messages and error replies carry no truncation signal: byte for byte. Chat completions
    carry a server's chat-side signals (test_chat_variants.py)."""
    for name, scenario in sorted(SCENARIOS.items()):
        for interaction in scenario.interactions:
            if interaction.path in (RESPONSES_PATH, CHAT_PATH) and interaction.status == 200:
                continue
            reply = REPLIES[variant](interaction, scenario)
            expected = recorded_reply(interaction)
            assert (reply.status, reply.body, reply.events) == (expected.status, expected.body, expected.events), name


def test_stock_llama_server_s_declaration_is_the_recordings_themselves():
    """Applied to llama-server's own recordings, its declared signals change no byte: the
    declaration check names it by agrees with what it really sent."""
    for name, stream in RESPONSES:
        interaction = _interaction(name, stream)
        reply = llama_server.VARIANT.reply(interaction, SCENARIOS[name])
        assert reply.body == interaction.body, (name, stream)


@pytest.mark.parametrize("variant", sorted(REPLIES))
def test_the_rule_that_decided_is_said_only_by_a_server_that_reads_the_stop_reason(variant):
    reads = {"vllm", "inspect-ai", "aimock", "litellm"}
    reply = _reply(variant, "text-cut-8", False)
    assert reply.decided_by == ("chat-twin finish_reason=length" if variant in reads else None)


@pytest.mark.parametrize("variant", SERVERS, ids=lambda v: v.name)
def test_each_module_cites_its_server_and_says_what_it_does_not_copy(variant: Variant):
    module = next(
        m
        for m in __import__("mockllama.behaviours.variants", fromlist=["*"]).__dict__.values()
        if getattr(m, "VARIANT", None) is variant
    )
    doc = module.__doc__
    repository = variant.citation.split()[0].rstrip(",")
    assert repository in doc or repository.split("/")[1] in doc, repository
    assert ":" in doc and any(char.isdigit() for char in doc)  # a file and lines (or commits) cited
    if variant.name != "buggy":
        assert "Not copied:" in doc
