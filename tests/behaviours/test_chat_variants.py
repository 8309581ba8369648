"""The variant behaviours on /v1/chat/completions: each server's chat-side truncation signals
(finish_reason, usage) on llama-server's recorded chat replies, and nothing else.

The expected values are written by hand from each server's source or bug tracker (cited in its
module), not computed from the declarations under test.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from mockllama.behaviours.reply import recorded_reply
from mockllama.behaviours.variants import REPLIES, SERVERS
from mockllama.wire.routes import CHAT_PATH
from support.recordings import SCENARIOS


def _chat(name: str, stream: bool, **request):
    """The recorded chat interaction of ``name``; ``request`` changes what its request said (a
    ``tool_choice`` the bundled recordings do not hold), the reply staying the recording's."""
    interaction = SCENARIOS[name].find("POST", CHAT_PATH, stream)
    if not request:
        return interaction
    sent = copy.deepcopy(interaction.request_json)
    for key, value in request.items():
        if value is None:
            sent.pop(key, None)
        else:
            sent[key] = value
    return dataclasses.replace(interaction, request_json=sent)


def _finish_reason(reply) -> str | None:
    if reply.events is None:
        return json.loads(reply.body)["choices"][0]["finish_reason"]
    reasons = [
        choice.get("finish_reason")
        for event in reply.events
        if isinstance(event.json(), dict)
        for choice in event.json().get("choices") or []
        if choice.get("finish_reason")
    ]
    return reasons[-1] if reasons else None


def _reply(variant: str, name: str, stream: bool, **request):
    return REPLIES[variant](_chat(name, stream, **request), SCENARIOS[name])


# vLLM, vllm/entrypoints/openai/chat_completion/serving.py @006c49d4: non-streamed, "tool_calls" when
# the parser returned a call under tool_choice "auto" (or none sent, which vLLM makes "auto"), else
# the engine's reason; streamed, "tool_calls" only when the engine said "stop".


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_vllm_keeps_length_for_a_required_tool_call_as_recorded(stream):
    """tool-cut-30 was recorded with tool_choice "required": vLLM relabels only auto-chosen calls."""
    assert _chat("tool-cut-30", stream).request_json["tool_choice"] == "required"
    assert _finish_reason(_reply("vllm", "tool-cut-30", stream)) == "length"


@pytest.mark.parametrize("tool_choice", ["auto", None], ids=["auto", "none-sent"])
def test_vllm_says_tool_calls_for_a_cut_auto_call_whose_arguments_parse(tool_choice):
    reply = _reply("vllm", "tool-cut-30", False, tool_choice=tool_choice)
    assert _finish_reason(reply) == "tool_calls"
    body, recorded = json.loads(reply.body), _chat("tool-cut-30", False).body_json
    assert body["usage"] == recorded["usage"]  # vLLM counts every generated token
    body["choices"][0]["finish_reason"] = "length"
    assert body == recorded  # nothing but the finish_reason changes


def test_vllm_keeps_length_for_a_cut_auto_call_whose_arguments_do_not_parse():
    """tool-cut-20's arguments are cut mid-string: hermes's json.loads of the call fails, no call is parsed."""
    assert _finish_reason(_reply("vllm", "tool-cut-20", False, tool_choice="auto")) == "length"


def test_vllm_streams_length_for_a_cut_auto_call():
    reply = _reply("vllm", "tool-cut-30", True, tool_choice="auto")
    assert _finish_reason(reply) == "length"
    assert reply.body == _chat("tool-cut-30", True).body


def test_vllm_leaves_a_cut_text_reply_and_a_finished_call_as_recorded():
    for name, tool_choice in (("text-cut-8", None), ("tool-finishes", "auto")):
        for stream in (False, True):
            reply = _reply("vllm", name, stream, tool_choice=tool_choice)
            assert reply.body == _chat(name, stream).body, (name, stream)


# LM Studio, lmstudio-bug-tracker issue 2335: completion_tokens = max_tokens - 1 on a length stop.

LENGTH_STOPS = ["text-cut-8", "text-cut-16", "tool-cut-20", "tool-cut-30", "thinking-cut-12", "ladder-cut-8"]


@pytest.mark.parametrize("name", LENGTH_STOPS)
def test_lmstudio_counts_one_token_less_than_max_tokens_on_a_length_stop(name):
    interaction = _chat(name, False)
    body = json.loads(_reply("lmstudio", name, False).body)
    recorded = interaction.body_json
    assert recorded["usage"]["completion_tokens"] == interaction.request_json["max_tokens"]
    assert body["usage"]["completion_tokens"] == interaction.request_json["max_tokens"] - 1
    assert body["usage"]["total_tokens"] == recorded["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    assert body["choices"][0]["finish_reason"] == "length"  # LM Studio says length, honestly
    body["usage"], recorded_usage = recorded["usage"], body["usage"]
    assert body == recorded and recorded_usage != recorded["usage"]


@pytest.mark.parametrize("name", ["text-finishes", "tool-finishes", "text-exact-limit"])
def test_lmstudio_counts_a_finished_reply_as_recorded(name):
    """text-exact-limit finished in exactly its limit with "stop": the issue is about length stops only."""
    for stream in (False, True):
        assert _reply("lmstudio", name, stream).body == _chat(name, stream).body


def test_lmstudio_streams_a_cut_reply_as_recorded_when_it_carries_no_usage():
    """llama-server's recorded streams carry no usage chunk (none was asked for): nothing to under-count."""
    assert _reply("lmstudio", "text-cut-8", True).body == _chat("text-cut-8", True).body


# LocalAI, core/http/endpoints/openai/chat.go @82c191af: "tool_calls" for any call its parser
# returned, before and instead of "length"; "length" for a cut text reply.


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("name", ["tool-cut-30", "tool-cut-20", "tool-two-calls-cut-70"])
def test_localai_says_tool_calls_for_any_cut_call(name, stream):
    """tool-cut-20's arguments do not parse, but llama.cpp's parser (LocalAI's ChatDeltas) returned the call."""
    reply = _reply("localai", name, stream)
    assert _finish_reason(reply) == "tool_calls"
    if not stream:
        body, recorded = json.loads(reply.body), _chat(name, False).body_json
        body["choices"][0]["finish_reason"] = "length"
        assert body == recorded


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_localai_says_length_for_cut_text(stream):
    assert _reply("localai", "text-cut-8", stream).body == _chat("text-cut-8", stream).body


# inspect_ai, src/inspect_ai/model/_openai.py @499e6152 (issue 5143, fixed later by PR 5189): a
# max_tokens stop falls through to "stop", tool call or not, in the body and in the proxy's stream.


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-30", "tool-cut-20", "thinking-cut-12"])
def test_inspect_ai_says_stop_for_every_cut_reply(name, stream):
    assert _finish_reason(_reply("inspect-ai", name, stream)) == "stop"


def test_inspect_ai_sends_finished_replies_as_recorded():
    for name in ("text-finishes", "tool-finishes"):
        for stream in (False, True):
            assert _reply("inspect-ai", name, stream).body == _chat(name, stream).body


# Every variant: what is not a cut chat reply is sent as recorded, and the honest ones change nothing.


@pytest.mark.parametrize("variant", sorted(REPLIES))
def test_a_chat_reply_changes_only_where_the_server_s_chat_side_is_declared_dishonest(variant):
    declared = next(server for server in SERVERS if server.name == variant)
    for name, scenario in sorted(SCENARIOS.items()):
        for interaction in scenario.interactions:
            if interaction.path != CHAT_PATH:
                continue
            reply, expected = REPLIES[variant](interaction, scenario), recorded_reply(interaction)
            if declared.chat.honest or interaction.status != 200:
                assert (reply.status, reply.body, reply.events) == (expected.status, expected.body, expected.events)
            assert (reply.status, reply.headers) == (expected.status, expected.headers), name


def test_the_chat_side_of_each_server_is_declared_as_read_or_not():
    """The servers whose chat code was read say so; the others are kept as llama-server's and say that."""
    read = {server.name for server in SERVERS if server.chat.read}
    assert read == {"buggy", "vllm", "lmstudio", "ollama", "localai", "inspect-ai", "sglang", "litellm"}
    dishonest = {server.name for server in SERVERS if not server.chat.honest}
    assert dishonest == {"vllm", "lmstudio", "localai", "inspect-ai"}


# Over HTTP: the path prefix reaches the chat side as it reaches /v1/responses.


def test_the_path_prefix_serves_each_server_s_chat_side(server):
    from support.httpkit import call, request_bytes

    def sent(behaviour: str, name: str, **request):
        interaction = _chat(name, False, **request)
        body = json.dumps(interaction.request_json).encode() if request else request_bytes(interaction)
        status, _, reply = call(server.url, "POST", f"/{behaviour}{CHAT_PATH}", body, {"X-Mockllama-Scenario": name})
        assert status == 200
        return json.loads(reply)

    assert sent("vllm", "tool-cut-30")["choices"][0]["finish_reason"] == "length"  # recorded "required"
    # A reply is made of the recording, request included, never of what a selecting client sent: vLLM
    # answered the recorded "required" request with "length", whatever tool_choice asks for it now.
    assert sent("vllm", "tool-cut-30", tool_choice="auto")["choices"][0]["finish_reason"] == "length"
    assert sent("lmstudio", "tool-cut-30")["usage"]["completion_tokens"] == 29
    assert sent("buggy", "tool-cut-30")["usage"]["completion_tokens"] == 30
