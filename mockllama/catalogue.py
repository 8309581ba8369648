"""The scenario catalogue: what `mockllama record` sends, one cassette per scenario.

A catalogue is a JSON file::

    {"scenarios": [
      {"name": "text-cut-8",
       "responses": {"model": "x", "input": "Count from 1 to 200, separated by spaces.",
                     "max_output_tokens": 8, "temperature": 0}},
      {"name": "messages-cut-8",
       "requests": [{"method": "POST", "path": "/v1/messages", "json": {"model": "x", ...}}]}
    ]}

A ``responses`` scenario is sent four times, in this order: the Responses request, then its chat
twin (derived by :func:`chat_twin`), each with ``"stream": false`` and then ``"stream": true``.
A ``requests`` scenario sends its raw requests as written: ``json`` for a JSON body, ``data`` for
a body sent byte for byte (malformed requests), neither for a GET.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .cassettes import CHAT_PATH, RESPONSES_PATH

DEFAULT_CATALOGUE = Path(__file__).resolve().parent / "catalogue.json"


class CatalogueError(Exception):
    pass


@dataclass(frozen=True)
class PlannedRequest:
    method: str
    path: str
    json: object = None
    data: str | None = None
    headers: dict = field(default_factory=dict)

    def body_text(self) -> str | None:
        """The body exactly as sent: JSON in the catalogue's key order (llama-server renders tool
        schemas in the order sent, so the order is part of the request), or ``data`` as written."""
        if self.json is not None:
            return json.dumps(self.json, ensure_ascii=False)
        return self.data

    def send_headers(self) -> dict:
        if self.json is not None and not any(name.lower() == "content-type" for name in self.headers):
            return {**self.headers, "Content-Type": "application/json"}
        return self.headers

    def describe(self) -> str:
        stream = isinstance(self.json, dict) and self.json.get("stream") is True
        return f"{self.method} {self.path}" + (" (stream)" if stream else "")


@dataclass(frozen=True)
class CatalogueScenario:
    name: str
    responses: dict | None = None
    requests: tuple[PlannedRequest, ...] = ()

    def planned(self) -> list[PlannedRequest]:
        if self.responses is None:
            return list(self.requests)
        planned = []
        for stream in (False, True):
            body = {**self.responses, "stream": stream}
            planned.append(PlannedRequest("POST", RESPONSES_PATH, json=body))
            planned.append(PlannedRequest("POST", CHAT_PATH, json=chat_twin(body)))
        return planned


def _chat_content(content):
    """Responses content parts -> chat content parts; a plain string stays a string."""
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        kind = part.get("type")
        if kind in ("input_text", "output_text"):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url")}})
        else:
            parts.append(part)
    return parts


def _chat_messages(request: dict) -> list[dict]:
    messages = []
    if request.get("instructions"):
        messages.append({"role": "system", "content": request["instructions"]})
    given = request.get("input")
    if isinstance(given, str):
        return [*messages, {"content": given, "role": "user"}]
    for item in given or []:
        if item.get("type", "message") == "message":
            messages.append({"content": _chat_content(item["content"]), "role": item["role"]})
        elif item.get("type") == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            messages.append({"role": "assistant", "tool_calls": [call]})
        elif item.get("type") == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
    return messages


def _chat_tool(tool: dict) -> dict:
    if tool.get("type") != "function":
        return tool
    function = {key: value for key, value in tool.items() if key != "type"}
    return {"function": function, "type": "function"}


def _chat_tool_choice(choice):
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"function": {"name": choice["name"]}, "type": "function"}
    return choice


def chat_twin(request: dict) -> dict:
    """The /v1/chat/completions request that asks the same as a /v1/responses request."""
    twin = {}
    for key, value in request.items():
        if key in ("input", "instructions"):
            continue
        if key == "max_output_tokens":
            twin["max_tokens"] = value
        elif key == "tools":
            twin["tools"] = [_chat_tool(tool) for tool in value]
        elif key == "tool_choice":
            twin["tool_choice"] = _chat_tool_choice(value)
        else:
            twin[key] = value
    twin["messages"] = _chat_messages(request)
    return twin


def _raw_request(scenario: str, raw) -> PlannedRequest:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
        raise CatalogueError(f"scenario {scenario!r}: each request needs at least a \"path\"")
    if "json" in raw and "data" in raw:
        raise CatalogueError(f"scenario {scenario!r}: a request has \"json\" or \"data\", not both")
    method = str(raw.get("method", "POST" if ("json" in raw or "data" in raw) else "GET")).upper()
    return PlannedRequest(method, raw["path"], raw.get("json"), raw.get("data"), dict(raw.get("headers", {})))


def parse_catalogue(data, source: str = "catalogue") -> list[CatalogueScenario]:
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise CatalogueError(f"{source}: expected a JSON object with a \"scenarios\" list")
    scenarios, names = [], set()
    for entry in data["scenarios"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise CatalogueError(f"{source}: every scenario needs a plain \"name\" (a file name), got {name!r}")
        if name in names:
            raise CatalogueError(f"{source}: scenario {name!r} appears twice")
        names.add(name)
        responses, requests = entry.get("responses"), entry.get("requests")
        if (responses is None) == (requests is None):
            raise CatalogueError(f"{source}: scenario {name!r} needs exactly one of \"responses\" or \"requests\"")
        if responses is not None and not isinstance(responses, dict):
            raise CatalogueError(f"{source}: scenario {name!r}: \"responses\" must be a request body object")
        if requests is not None and not isinstance(requests, list):
            raise CatalogueError(f"{source}: scenario {name!r}: \"requests\" must be a list")
        planned = tuple(_raw_request(name, raw) for raw in requests or [])
        scenarios.append(CatalogueScenario(name, responses, planned))
    return scenarios


def load_catalogue(path: Path | None = None) -> list[CatalogueScenario]:
    path = Path(path) if path else DEFAULT_CATALOGUE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CatalogueError(f"cannot read catalogue {path}: {err.strerror or err}") from None
    except ValueError as err:
        raise CatalogueError(f"catalogue {path} is not valid JSON: {err}") from None
    return parse_catalogue(data, str(path))
