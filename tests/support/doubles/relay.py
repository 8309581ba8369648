"""The doubles' common part: ask a mockllama behaviour, rewrite its /v1/responses reply, or its
/v1/chat/completions one."""

from __future__ import annotations

import json
from collections.abc import Callable

from aiohttp import ClientSession, web

Events = list[tuple[str | None, dict]]  # (the SSE `event:` name, the JSON data), in order


def decode_events(body: bytes) -> Events:
    events = []
    for block in body.decode("utf-8").split("\n\n"):
        lines = block.split("\n")
        names = [line.removeprefix("event:").strip() for line in lines if line.startswith("event:")]
        data = [line.removeprefix("data:").strip() for line in lines if line.startswith("data:")]
        if data and data[0] != "[DONE]":  # a chat stream's end, written back by the relay
            events.append((names[0] if names else None, json.loads(data[0])))
    return events


def encode_events(events: Events) -> bytes:
    return b"".join(
        (f"event: {name}\n" if name else "").encode() + f"data: {json.dumps(data)}\n\n".encode()
        for name, data in events
    )


def relay_app(
    upstream: str,
    rewrite_body: Callable[[dict], dict] = lambda body: body,
    rewrite_events: Callable[[Events], Events] = lambda events: events,
    behaviour: str = "fixed",
    encode: Callable[[Events], bytes] = encode_events,
    rewrite_chat_body: Callable[[dict, dict], dict] = lambda body, request: body,
    rewrite_chat_events: Callable[[Events, dict], Events] = lambda events, request: events,
) -> web.Application:
    """An app that answers each POST by asking ``upstream``'s ``behaviour`` and rewriting the
    Responses reply (a JSON body or an event stream, written back by ``encode``), and the chat
    completion (given the request too); by default the chat completion passes through."""

    async def answer(request: web.Request) -> web.Response:
        body = await request.read()
        async with (
            ClientSession() as session,
            session.post(
                f"{upstream}/{behaviour}{request.path}", data=body, headers={"Content-Type": "application/json"}
            ) as reply,
        ):
            status, content_type, payload = reply.status, reply.content_type, await reply.read()
        if request.path.endswith("/responses") and status == 200:
            if content_type == "text/event-stream":
                payload = encode(rewrite_events(decode_events(payload)))
            else:
                payload = json.dumps(rewrite_body(json.loads(payload))).encode()
        elif request.path.endswith("/chat/completions") and status == 200:
            sent = json.loads(body)
            if content_type == "text/event-stream":
                payload = encode_events(rewrite_chat_events(decode_events(payload), sent)) + b"data: [DONE]\n\n"
            else:
                payload = json.dumps(rewrite_chat_body(json.loads(payload), sent)).encode()
        return web.Response(status=status, body=payload, content_type=content_type)

    app = web.Application()
    app.router.add_post("/{tail:.*}", answer)
    return app


def terminal_response(events: Events, rewrite: Callable[[dict], dict]) -> Events:
    """Apply a body rewrite to the response the stream's last event carries."""
    *rest, (name, data) = events
    return [*rest, (name, {**data, "response": rewrite(data["response"])})]


def items_completed(response: dict) -> dict:
    """Every output item says "completed", the cut one too."""
    return {**response, "output": [{**item, "status": "completed"} for item in response.get("output") or []]}


def item_done_completed(events: Events) -> Events:
    """Every response.output_item.done says "completed", the cut item's too."""
    return [
        (name, {**data, "item": {**data["item"], "status": "completed"}})
        if data.get("type") == "response.output_item.done"
        else (name, data)
        for name, data in events
    ]


def terminal_completed(events: Events) -> Events:
    """The stream ends with response.completed (the event line and the type), whatever the
    response it carries says."""
    *rest, (_, data) = events
    return [*rest, ("response.completed", {**data, "type": "response.completed"})]
