"""Errors in llama-server's own shape: ``{"error": {"code", "message", "type"}}``."""

from __future__ import annotations

import json

# The "type" llama-server gives each status code.
ERROR_TYPES = {
    400: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "invalid_request_error",  # mockllama's own: a body that did not arrive (llama-server has no 408)
    413: "invalid_request_error",
    500: "server_error",
    # mockllama's own, when the upstream it records from fails: llama-server's word for "cannot
    # answer now" (it sends 503 "unavailable_error" while loading a model).
    502: "unavailable_error",
    503: "unavailable_error",
    504: "unavailable_error",
}


class RequestError(Exception):
    """A request mockllama cannot answer from a recording; the server turns it into a reply."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def error_body(status: int, message: str) -> bytes:
    error = {"error": {"code": status, "message": message, "type": ERROR_TYPES.get(status, "server_error")}}
    try:
        return json.dumps(error, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate echoed from the request: \u escapes are valid JSON
        return json.dumps(error, separators=(",", ":")).encode("ascii")
