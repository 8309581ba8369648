"""The ``litellm`` behaviour against the real LiteLLM: its Responses bridge over a chat backend, run
in front of ``buggy`` (a test double of llama-server: its recorded bytes), says of each reply what
``/litellm/v1/responses`` says of it.

The client is LiteLLM's own SDK (``litellm.responses``, which its proxy's ``/v1/responses`` calls),
unmodified, forced onto its chat-completions bridge by the ``openai/chat_completions/`` model
prefix: it asks the double's ``/v1/chat/completions`` and builds the Responses reply from its
``finish_reason``. What is compared is the truncation signals only (mockllama keeps llama-server's
ids, text and item list; LiteLLM writes its own): the status, ``incomplete_details``, whether
``completed_at`` is there, each output item type's status, and in a stream the terminal event, each
``response.output_item.done`` item type's status and how many ``function_call_arguments.done``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os

import pytest

from support.httpkit import call

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else it fetches a price list at import

TOOLS = [{"type": "function", "name": "write_file", "parameters": {"type": "object", "properties": {}}}]
SCENARIOS = ["text-cut-8", "text-finishes", "tool-cut-20", "tool-cut-30", "tool-finishes"]
SCENARIOS += ["thinking-cut-12", "thinking-finishes", "tool-two-calls-cut-70"]
TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def _type(event: dict) -> str:
    return getattr(event["type"], "value", event["type"])  # LiteLLM's event types are an enum


def _signals(response: dict, events: list[dict] | None) -> dict:
    """What a reply says of its own end, and nothing else."""
    said = {
        "status": response.get("status", "absent"),
        "incomplete_details": response.get("incomplete_details", "absent"),
        "completed_at": response.get("completed_at") is not None,
        "items": {item["type"]: item.get("status", "absent") for item in response.get("output") or []},
    }
    if events is not None:
        said["terminal"] = [_type(event) for event in events if _type(event) in TERMINAL]
        said["item_done"] = {
            event["item"]["type"]: event["item"].get("status", "absent")
            for event in events
            if _type(event) == "response.output_item.done"
        }
        said["arguments_done"] = sum(_type(event) == "response.function_call_arguments.done" for event in events)
    return said


def _from_litellm(url: str, name: str, stream: bool) -> dict:
    import litellm

    request = {"model": f"openai/chat_completions/{name}", "input": "hi", "api_base": f"{url}/buggy/v1"}
    request |= {"api_key": "unused", "num_retries": 0, **({"tools": TOOLS} if name.startswith("tool") else {})}
    if not stream:
        return _signals(litellm.responses(**request).model_dump(), None)
    events = [event.model_dump() for event in litellm.responses(stream=True, **request)]
    return _signals(next(e for e in reversed(events) if _type(e) in TERMINAL)["response"], events)


def _from_mockllama(url: str, name: str, stream: bool) -> dict:
    body = json.dumps({"model": name, "input": "hi", "stream": stream}).encode()
    status, _, reply = call(url, "POST", "/litellm/v1/responses", body, {"X-Mockllama-Scenario": name})
    assert status == 200
    if not stream:
        return _signals(json.loads(reply), None)
    data = [line[len("data: ") :] for line in reply.decode().splitlines() if line.startswith("data: {")]
    events = [json.loads(payload) for payload in data]
    return _signals(next(e for e in reversed(events) if _type(e) in TERMINAL)["response"], events)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_the_litellm_behaviour_says_what_litellm_s_bridge_says(server, name, stream):
    real, served = _from_litellm(server.url, name, stream), _from_mockllama(server.url, name, stream)
    # LiteLLM adds a message item for a chat reply's empty text: compare the item types both hold
    shared = real["items"].keys() & served["items"].keys()
    assert shared, (real, served)
    real["items"] = {kind: real["items"][kind] for kind in shared}
    served["items"] = {kind: served["items"][kind] for kind in shared}
    version = importlib.metadata.version("litellm")
    assert served == real, f"litellm {version} (the module read 1.110.2): {real} != mockllama {served}"


def test_a_cut_reply_is_one_litellm_reports_as_cut_but_a_cut_call_it_calls_completed(server):
    """The two halves of the variant, from LiteLLM itself: honest at the top, not on the cut call."""
    said = _from_litellm(server.url, "tool-cut-20", False)
    assert (said["status"], said["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})
    assert said["items"]["function_call"] == "completed"
    assert _from_litellm(server.url, "text-cut-8", True)["terminal"] == ["response.incomplete"]
