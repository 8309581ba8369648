"""Test double of inspect_ai's agent bridge: `status: null` with `incomplete_details` set.

Mirrors UKGovernmentBEIS/inspect_ai as read for issue 46 (inspect_ai issue 5198, open: "Responses
bridge reports max-token truncation as completed (null status, response.completed terminal
event)"). `src/inspect_ai/agent/_bridge/responses_impl.py:325-337` builds the `Response` without a
`status`, so the dump says `"status": null`, with `incomplete_details: {"reason":
"max_output_tokens"}` for a cut (`:635-643`), `completed_at` null (not set), message items
"completed" (`:1176`) and function_call items with a null status (`:1266`). The sandbox proxy's
stream (`_agent_bridge/proxy.py:715-1410`) sends `response.function_call_arguments.done` for every
call, each `response.output_item.done` with its status forced to "completed", and ends with
`response.completed` whose response is the body with `status: "completed"` and
`incomplete_details` left as it was (`:1389-1401`).
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, item_done_completed, relay_app, terminal_completed, terminal_response


def _items(response: dict) -> list[dict]:
    return [
        {**item, "status": None if item.get("type") == "function_call" else "completed"}
        for item in response.get("output") or []
    ]


def _body(response: dict) -> dict:
    return {**response, "status": None, "completed_at": None, "output": _items(response)}


def _streamed(response: dict) -> dict:
    return {**_body(response), "status": "completed"}


def _stream(events: Events) -> Events:
    return terminal_response(terminal_completed(item_done_completed(events)), _streamed)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _body, _stream)
