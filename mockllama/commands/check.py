"""``mockllama check``: does a server report a reply cut off by its output limit as cut off?"""

from __future__ import annotations

import json
import sys

import click

from mockllama.check import run
from mockllama.check.probes import GROUPS, PROBES


@click.command()
@click.argument("url")
@click.option(
    "--probe",
    "probe",
    type=click.Choice([*PROBES, *GROUPS, "all"]),
    default="all",
    show_default=True,
    help="all: text, tool and stream, then chat-text, chat-tool and chat-stream, what a CI gate "
    "should run (a server may lie only in its streams, or only on one endpoint); responses or chat: "
    "that endpoint's part of all. On /v1/responses: text: text-cut-8; tool: tool-cut-20; stream: "
    "both, streamed; reasoning: thinking-cut-12, a reply cut while the model thinks (exit 2 if the "
    "server does not think). On /v1/chat/completions: chat-text: text-cut-8; chat-tool: tool-cut-20; "
    "chat-stream: both, streamed. Each also sends its scenario with room to finish (text-finishes, "
    "tool-finishes, thinking-finishes).",
)
@click.option("--model", help='The "model" to send (default: the recorded "x"; set it for servers that check).')
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every field and the verdict.")
@click.option(
    "--timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds for each request, from connecting to the last byte of the reply.",
)
def check(url, probe, model, as_json, timeout) -> None:
    """Tell whether URL reports a reply cut off by its output limit as cut off, on
    /v1/responses and on /v1/chat/completions.

    Sends requests that cannot finish within their limit to URL/v1/responses, and their twins
    to URL/v1/chat/completions, then judges each aspect of the cut reply on its own: status,
    incomplete_details.reason, the cut item's status, completed_at, and in a stream the
    terminal event and the cut call's function_call_arguments.done. Sends the same chat
    requests on their own and judges their finish_reason. A chat reply shows the cut by
    finish_reason "length", by usage.completion_tokens reaching max_tokens (the usage
    fallback) or by a tool call whose arguments do not parse. Each probe also sends a request
    with room to finish, judged the other way, none of whose aspects may say it was cut: a
    status that says "incomplete" to every reply tells a client nothing. The verdict names the
    aspects that fail, and the servers whose signals they are, per endpoint. URL is the
    server's base URL, e.g. http://127.0.0.1:8080 or http://127.0.0.1:18090/buggy; a
    user:password in it is sent as Basic auth and a ?query with every request, and neither is
    printed.

    \b
    Exit codes (with both endpoints probed, the worse endpoint's: dishonest or
    wrong, then can't tell, then honest; each one's verdict is printed, and in
    --json's "endpoints"):
      0  every aspect of every cut-off reply reports the cut: "incomplete", reason
         "max_output_tokens", the cut item "incomplete", no completed_at, a stream that
         ends with one response.incomplete and sends arguments.done for a cut call,
         finish_reason "length"; and every reply that finished says so: "completed", no
         incomplete_details, every item "completed", a stream that ends with one
         response.completed and sends arguments.done for every call, finish_reason
         "stop" or "tool_calls"
      1  the server reports it wrongly: an aspect says a cut-off reply finished (status or
         the cut item "completed", a null status, a completed_at time, a stream that ends
         with response.completed or sends two terminal events, finish_reason "stop" or
         "tool_calls": the llama-server bug and the variants other servers ship), a reply
         that finished says it was cut ("incomplete", incomplete_details, an "incomplete"
         item, a response.incomplete, finish_reason "length"), or an aspect is wrong (e.g.
         reason "length", no reason, another status, a missing arguments.done); --json's
         verdict says which: "dishonest" or "wrong"
      2  can't tell: a bad URL, unreachable, an HTTP error, malformed HTTP, not JSON, JSON
         that RFC 8259 rejects (NaN, 1e999, a key twice), not the expected shape, a
         timeout, a reply over 8 MiB, a chat reply that shows no cut (the reply finished,
         which proves nothing), or, for --probe reasoning, a reply with no reasoning item
    """
    report = run(url, probes=[probe], model=model, timeout=timeout)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    sys.exit(report.exit_code)
