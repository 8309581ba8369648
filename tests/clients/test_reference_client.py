"""examples/truncation_safe_client.py against every recording in every behaviour (stock llama-server,
the honest fixed and spec, and each other server's variant), limits pinned."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import openai
import pytest

from mockllama.pytest_plugin.session import variant_url_behaviours
from support import ROOT
from support.recordings import SCENARIOS, chosen

EXAMPLE = ROOT / "examples" / "truncation_safe_client.py"
_spec = importlib.util.spec_from_file_location("truncation_safe_client", EXAMPLE)
client_module = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(client_module)

RESPONSE_SCENARIOS = sorted(
    n
    for n, s in SCENARIOS.items()
    if s.find("POST", "/v1/responses", False) and s.find("POST", "/v1/responses", False).status == 200
)
PINNED = {"text-exact-limit", "tool-cut-30"}
EVERY_SERVER = variant_url_behaviours()  # buggy, fixed, spec and every other server's variant

STATUS, DETAILS, USAGE = "status is 'incomplete'", "incomplete_details gives the reason", "usage.output_tokens reached"
# The rule that catches a cut first, on each server: the signal it keeps (docs/variants.md).
FIRST_RULE = {
    "buggy": USAGE,
    "fixed": STATUS,
    "spec": STATUS,
    "aimock": STATUS,
    "inspect-ai": DETAILS,  # status null, or "completed" in a stream, with the reason given
    "localai": USAGE,
    "ollama": USAGE,
    "sglang": USAGE,
    "vllm": STATUS,
    "litellm": STATUS,  # its bridge reads the chat finish_reason: "incomplete", though a cut call says "completed"
    "lmstudio": USAGE,  # its Responses side is llama-server's (only its chat side is its own)
}


def _ask(server, behaviour, name):
    request = dict(SCENARIOS[name].find("POST", "/v1/responses", False).request_json)
    client = openai.OpenAI(base_url=server.base_url(behaviour), api_key="unused", default_headers=chosen(name))
    return client_module.ask(client, **request)


def _really_cut(name) -> bool:
    scenario = SCENARIOS[name]
    return scenario.twin_finish_reason(scenario.find("POST", "/v1/responses", False)) == "length"


def test_every_server_has_its_first_rule():
    assert sorted(FIRST_RULE) == sorted(EVERY_SERVER)


@pytest.mark.parametrize("behaviour", EVERY_SERVER)
@pytest.mark.parametrize("name", sorted(set(RESPONSE_SCENARIOS) - PINNED))
def test_client_agrees_with_the_chat_twin(server, behaviour, name):
    answer = _ask(server, behaviour, name)
    assert answer.cut_off == _really_cut(name), answer.reason
    if answer.cut_off:
        assert answer.reason.startswith(FIRST_RULE[behaviour]), answer.reason


@pytest.mark.parametrize("name", ["text-cut-8", "text-cut-64", "poem-cut-20"])
def test_on_buggy_the_usage_rule_is_what_catches_a_cut(server, name):
    answer = _ask(server, "buggy", name)
    assert answer.response.status == "completed"
    assert answer.cut_off and answer.reason.startswith("usage.output_tokens reached")


@pytest.mark.parametrize("behaviour", EVERY_SERVER)
def test_pinned_limit_exact_limit_is_a_false_positive_of_the_usage_rule(server, behaviour):
    answer = _ask(server, behaviour, "text-exact-limit")
    assert not _really_cut("text-exact-limit")  # the chat twin says "stop": the reply finished
    assert answer.response.status == (None if behaviour == "inspect-ai" else "completed")
    assert answer.response.incomplete_details is None
    assert answer.response.usage.output_tokens == 8
    assert answer.cut_off is True
    assert answer.reason == "usage.output_tokens reached max_output_tokens=8"


def test_pinned_limit_valid_json_is_not_proof_of_a_finished_call(server):
    answer = _ask(server, "buggy", "tool-cut-30")
    call = answer.response.output[-1]
    assert json.loads(call.arguments)  # parses as JSON ...
    assert _really_cut("tool-cut-30")  # ... yet the chat twin says "length"
    assert client_module.unparsable_function_call(answer.response) is False  # rule 3 alone misses it
    assert answer.cut_off and answer.reason.startswith("usage.output_tokens reached")  # rule 2 catches it


def test_an_unparsable_call_is_caught_even_without_a_limit(server):
    request = dict(SCENARIOS["tool-cut-20"].find("POST", "/v1/responses", False).request_json)
    client = openai.OpenAI(base_url=server.base_url("buggy"), api_key="unused")
    answer = client_module.judge(client.responses.create(**request), max_output_tokens=None)
    assert answer.cut_off and answer.reason == "a function_call's arguments do not parse as JSON"


def test_the_example_runs_as_a_script(server):
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), server.base_url("buggy")], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[0] == "status='completed' cut_off=True (usage.output_tokens reached max_output_tokens=8)"


# --- faults: a reply that never arrives whole is never taken for an answer ---------------------

from mockllama.behaviours.replay import reply_for  # noqa: E402
from mockllama.server.faults import FaultPlan, Seen, apply_fault, parse_fault  # noqa: E402
from mockllama.server.outgoing import Outgoing  # noqa: E402
from mockllama.teaching.fault_matrix import STALL_TIMEOUT, faults_measured, is_silent  # noqa: E402

FINISHED = {"model": "text-finishes", "input": "anything"}
EXPECTED_REASON = {  # what the client says for what it sees of a fault
    Seen.DROPPED: "the connection dropped before the reply was whole",
    Seen.NO_TERMINAL_EVENT: "the stream ended without a terminal event",
    Seen.BROKEN_JSON: "the reply is not valid JSON",
    Seen.SILENCE: "the server stalled past the client's timeout",
    Seen.ERROR_STATUS: "the server answered HTTP",
}


def _faulted_client(server, fault):
    return openai.OpenAI(
        base_url=server.base_url("spec"),
        api_key="unused",
        max_retries=0,
        timeout=STALL_TIMEOUT if is_silent(fault) else 30,
        default_headers={"X-Mockllama-Fault": fault},
    )


def _expected(fault: str) -> str:
    return EXPECTED_REASON[parse_fault(fault).kind.seen]


def _leaves_a_plain_body_whole(fault: str) -> bool:
    """Whether the fault sends a plain body as it is, at once (a plain body is one event)."""
    plain = SCENARIOS["text-finishes"].find("POST", "/v1/responses", False)
    outgoing = Outgoing.of(reply_for("spec", plain, SCENARIOS["text-finishes"]), {})
    untouched = (outgoing.status, list(outgoing.blocks))
    apply_fault(parse_fault(fault), outgoing, FaultPlan.build(SCENARIOS))
    timed = outgoing.before or outgoing.waits or outgoing.drop
    return (outgoing.status, outgoing.blocks) == untouched and not timed


def test_the_client_has_a_reason_for_everything_a_fault_can_show():
    assert set(EXPECTED_REASON) == set(Seen)


@pytest.mark.parametrize("fault", faults_measured(SCENARIOS))
def test_the_client_never_takes_a_faulted_stream_for_an_answer(server, fault):
    answer = client_module.ask_streaming(_faulted_client(server, fault), **FINISHED)
    assert answer.cut_off is True and answer.response is None
    assert answer.reason.startswith(_expected(fault)), answer.reason


@pytest.mark.parametrize("fault", faults_measured(SCENARIOS))
def test_the_client_never_takes_a_faulted_body_for_an_answer(server, fault):
    answer = client_module.ask(_faulted_client(server, fault), **FINISHED)
    if _leaves_a_plain_body_whole(fault):  # disconnect=3, truncate-stream=3: a plain body is one event
        assert answer.cut_off is False and answer.response.status == "completed"
        return
    assert answer.cut_off is True and answer.response is None
    assert answer.reason.startswith(_expected(fault)), answer.reason


@pytest.mark.parametrize("behaviour", EVERY_SERVER)
@pytest.mark.parametrize("name", ["text-cut-8", "text-finishes", "tool-cut-20", "tool-finishes", "thinking-cut-12"])
def test_streams_without_faults_are_judged_like_bodies(server, behaviour, name):
    request = dict(SCENARIOS[name].find("POST", "/v1/responses", False).request_json)
    client = openai.OpenAI(
        base_url=server.base_url(behaviour), api_key="unused", max_retries=0, default_headers=chosen(name)
    )
    streamed, plain = client_module.ask_streaming(client, **request), client_module.ask(client, **request)
    assert streamed.cut_off == plain.cut_off == _really_cut(name)
    if plain.cut_off:  # the same rule decides (a finished reply's reason quotes its status, null in inspect_ai's body)
        assert streamed.reason == plain.reason


LADDER = ("ladder-cut-8", "ladder-cut-16", "ladder-finishes")


@pytest.mark.parametrize("behaviour", EVERY_SERVER)
def test_the_retry_ladder_doubles_the_limit_until_the_reply_is_complete(server, behaviour):
    client = openai.OpenAI(base_url=server.base_url(behaviour), api_key="unused")
    attempts = client_module.ask_until_complete(
        client, client_module.limits_doubling(8, 1024), model="x", input=client_module.LADDER_PROMPT, temperature=0
    )
    assert [a.max_output_tokens for a in attempts] == [8, 16, 32]
    assert [a.cut_off for a in attempts] == [True, True, False]
    assert [_really_cut(name) for name in LADDER] == [True, True, False]  # the chat twins agree
    final = attempts[-1].response
    assert (
        final.status == (None if behaviour == "inspect-ai" else "completed")
        and final.output_text
        == SCENARIOS["ladder-finishes"]
        .find("POST", "/v1/responses", False)
        .body_json["output"][0]["content"][0]["text"]
    )
    assert all(a.reason.startswith(FIRST_RULE[behaviour]) for a in attempts[:-1])


def test_in_buggy_only_the_usage_rule_starts_the_retry(server):
    client = openai.OpenAI(base_url=server.base_url("buggy"), api_key="unused")
    first = client.responses.create(model="x", input=client_module.LADDER_PROMPT, max_output_tokens=8, temperature=0)
    assert first.status == "completed"  # the status rule never fires on llama-server
    assert not client_module.status_says_incomplete(first) and not client_module.unparsable_function_call(first)
    assert client_module.usage_reached_limit(first, 8)  # only this one does


def test_the_ladder_works_on_the_poem_calls_recorded_limits(server):
    client = openai.OpenAI(base_url=server.base_url("fixed"), api_key="unused")
    request = dict(SCENARIOS["poem-cut-20"].find("POST", "/v1/responses", False).request_json)
    request.pop("max_output_tokens")
    attempts = client_module.ask_until_complete(client, (20, 30, 400), **request)
    assert [(a.max_output_tokens, a.cut_off) for a in attempts] == [(20, True), (30, True), (400, False)]
    assert json.loads(attempts[-1].response.output[-1].arguments)


@pytest.mark.parametrize("rule", ["status", "terminal event"])
def test_a_stream_is_judged_by_the_response_its_terminal_event_carries_not_its_name(server, rule):
    """vLLM's and aimock's cut streams end with response.completed around an incomplete response:
    the client reads the response. A response.incomplete is a cut whatever its response says."""
    request = dict(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json)
    client = openai.OpenAI(base_url=server.base_url("vllm" if rule == "status" else "fixed"), api_key="unused")
    events = list(client.responses.create(**{**request, "stream": True}))
    last = events[-1]
    if rule == "status":
        assert last.type == "response.completed" and last.response.status == "incomplete"
    else:  # an honest terminal event around a response that says nothing of the cut
        last = last.model_copy(update={"response": last.response.model_copy(update={"status": "completed"})})
        last.response.incomplete_details = None

    class Replayed:
        class responses:
            @staticmethod
            def create(**_):
                return iter([*events[:-1], last])

    answer = client_module.ask_streaming(Replayed, **{**request, "max_output_tokens": None})
    assert answer.cut_off
    expected = "status is 'incomplete'" if rule == "status" else "the stream ended with response.incomplete"
    assert answer.reason == expected


def test_limits_doubling_ends_at_the_ceiling():
    assert list(client_module.limits_doubling(8, 40)) == [8, 16, 32, 40]
