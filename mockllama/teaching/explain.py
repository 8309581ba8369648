"""What each scenario teaches: its request, the twin's verdict, and every behaviour's reply.

One source for both ``mockllama explain`` (text) and the teaching page (JSON).
"""

from __future__ import annotations

import json
import textwrap

from mockllama.behaviours.fixed import verdict
from mockllama.behaviours.replay import reply_for
from mockllama.behaviours.variants import REPLIES, SERVERS, own_behaviours
from mockllama.recordings.cassettes import DEFAULT_SETUP, Interaction, Scenario, reading_order
from mockllama.teaching.sweep import sweep_story, sweeps_in
from mockllama.wire.routes import RESPONSES_PATH
from mockllama.wire.terminal import printable

ABSENT = "(absent)"
LAST_EVENTS = 3


def shown_behaviours() -> list[str]:
    """The behaviours side by side: llama-server's own reply, the honest ones and any other that is no
    server's variant. The variants are listed after them, each in a line with its citation (nine
    columns would not fit 80)."""
    return own_behaviours()


def _variants(scenario: Scenario, responses: Interaction, stream: Interaction | None) -> list[dict]:
    """Each other server's variant: what its reply's status and stream's terminal event say, and where that is from."""
    told = []
    for variant in SERVERS:
        if variant.name not in REPLIES:
            continue  # stock llama-server's is buggy, shown side by side
        status = json.loads(reply_for(variant.name, responses, scenario).body).get("status", ABSENT)
        terminal = None
        if stream is not None:
            last = (reply_for(variant.name, stream, scenario).events or ())[-1:]
            terminal = _event_summary(last[0]) if last else None
        told.append(
            {
                "name": variant.name,
                "server": variant.server,
                "status": status if status == ABSENT else json.dumps(status),
                "terminal": terminal,
                "citation": variant.citation,
            }
        )
    return told


def _shown(value) -> str:
    return ABSENT if value is ... else json.dumps(value, ensure_ascii=False)


def _item_value(item: dict):
    if item.get("type") == "function_call":
        return "arguments", item.get("arguments")
    texts = [part.get("text") for part in item.get("content") or []]
    return "reasoning" if item.get("type") == "reasoning" else "text", texts[0] if len(texts) == 1 else texts


def _thinks(body: dict) -> bool:
    return any(item.get("type") == "reasoning" for item in body.get("output") or [])


def output_text(body: dict) -> str:
    """What the SDK's ``output_text`` reads: the message items' text; reasoning is not part of it."""
    return "".join(
        part.get("text") or ""
        for item in body.get("output") or []
        if item.get("type") == "message"
        for part in item.get("content") or []
        if part.get("type") == "output_text"
    )


def _rows(bodies: dict[str, dict]) -> list[dict]:
    """The fields a client judges a reply by, per behaviour, and whether they differ."""

    def row(label, pick):
        values = {}
        for behaviour, body in bodies.items():
            try:
                values[behaviour] = _shown(pick(body))
            except (KeyError, IndexError, TypeError):
                values[behaviour] = ABSENT
        return {"field": label, "values": values, "differs": len(set(values.values())) > 1}

    rows = [
        row("status", lambda b: b["status"]),
        row("incomplete_details", lambda b: b.get("incomplete_details", ...)),
        row("completed_at", lambda b: b.get("completed_at", ...)),
    ]
    if _thinks(bodies["buggy"]):  # the point of a thinking cut: "completed", with nothing to read
        rows.append(row("output_text", output_text))
    for index, item in enumerate(bodies["buggy"].get("output") or []):
        kind, _ = _item_value(item)
        rows.append(row(f"output[{index}].status", lambda b, i=index: b["output"][i]["status"]))
        rows.append(row(f"output[{index}].{kind}", lambda b, i=index: _item_value(b["output"][i])[1]))
    rows.append(row("usage.output_tokens", lambda b: b["usage"]["output_tokens"]))
    return rows


def _event_summary(event) -> str:
    payload = event.json() or {}
    status = (payload.get("item") or payload.get("response") or {}).get("status")
    return f"{event.name or payload.get('type')}" + (f" (status={status})" if status else "")


def _advice(scenario: Scenario, responses: Interaction, cut: bool) -> str:
    body = responses.body_json
    limit = responses.limit
    tokens = (body.get("usage") or {}).get("output_tokens")
    calls = [item for item in body.get("output") or [] if item.get("type") == "function_call"]
    if _thinks(body) and not output_text(body):
        if cut:
            return (
                f"The model was still thinking at the cut: the reply holds only a reasoning item, so output_text "
                f"is ''. On llama-server (buggy) it says 'completed': an empty answer that claims to be whole. "
                f"Check status == 'incomplete' (fixed, spec); on llama-server only usage.output_tokens "
                f"({tokens}) reaching max_output_tokens ({limit}) tells. Retry with a larger limit."
            )
        return (
            "It finished inside its reasoning: 'completed' is right, yet output_text is ''. A complete reply "
            "can still hold no answer, so check for a message item too."
        )
    if cut and calls:
        try:
            json.loads(calls[-1].get("arguments") or "")
        except ValueError:
            return (
                "Never run a function_call whose status is not 'completed'. On llama-server the status "
                "lies, but here the arguments do not even parse."
            )
        return (
            "The arguments parse as JSON, yet the call was cut: only status (fixed, spec) or "
            f"usage.output_tokens >= max_output_tokens={limit} (buggy) tells."
        )
    if cut:
        return (
            f"Check status == 'incomplete'. On llama-server (buggy) the only sign is usage.output_tokens "
            f"({tokens}) reaching max_output_tokens ({limit})."
        )
    if limit is not None and tokens is not None and tokens >= limit:
        return (
            f"It finished in exactly {limit} tokens: 'completed' is right here, and a client that treats "
            "usage at the limit as a cut gets a false positive."
        )
    return "It finished: every behaviour says 'completed', and rightly."


def _parses(arguments) -> bool:
    try:
        json.loads(arguments or "")
    except ValueError:
        return False
    return True


def _javascript_advice(responses: Interaction, cut: bool) -> str:
    """What a JavaScript user reads here: the AI SDK's finishReason, openai-node's status
    (measured by tests/js/matrix.mjs, docs/typescript.md)."""
    body = responses.body_json
    calls = [item for item in body.get("output") or [] if item.get("type") == "function_call"]
    if not cut:
        reason = "'tool-calls'" if calls else "'stop'"
        return f"The AI SDK's finishReason says {reason} and openai-node's status 'completed', in every behaviour."
    if calls:
        parsing = sum(_parses(call.get("arguments")) for call in calls)
        runs = (
            f"generateText runs every call whose arguments parse ({parsing} of {len(calls)} here), though the "
            "reply was cut"
            if parsing
            else "no tool runs, as the arguments do not parse"
        )
        return (
            f"On llama-server (buggy) the AI SDK's finishReason says 'tool-calls' and {runs}; on a correct "
            "server it says 'length' and runs none (it runs tools only on 'stop' or 'tool-calls'). openai-node: "
            "check status == 'incomplete' before running a function_call."
        )
    empty = " with text ''" if _thinks(body) and not output_text(body) else ""
    return (
        f"The AI SDK's finishReason says 'stop'{empty} on llama-server (buggy) and 'length' on a correct server; "
        "openai-node's status says 'completed', then 'incomplete'. On llama-server only usage.outputTokens "
        "(openai-node: usage.output_tokens) reaching the limit tells."
    )


def story(scenario: Scenario) -> dict:
    """Everything the explainer and the teaching page show of one scenario."""
    responses = scenario.find("POST", RESPONSES_PATH, False)
    if responses is None or responses.status != 200:
        return {
            "name": scenario.name,
            "kind": "other",
            "setup": scenario.setup,
            "endpoints": scenario.endpoints,
            "note": "Not a /v1/responses reply: replayed exactly as recorded in every behaviour.",
        }
    stream = scenario.find("POST", RESPONSES_PATH, True)
    bodies = {b: json.loads(reply_for(b, responses, scenario).body) for b in shown_behaviours()}
    last_events = {}
    if stream is not None:
        for behaviour in shown_behaviours():
            events = reply_for(behaviour, stream, scenario).events or ()
            last_events[behaviour] = [_event_summary(event) for event in events[-LAST_EVENTS:]]
    decision = verdict(scenario, responses)
    return {
        "name": scenario.name,
        "kind": "responses",
        "setup": scenario.setup,
        "request": responses.request_json,
        "twin_finish_reason": scenario.twin_finish_reason(responses),
        "cut": decision.cut,
        "decided_by": decision.rule,
        "rows": _rows(bodies),
        "bodies": bodies,
        "last_events": last_events,
        "advice": _advice(scenario, responses, decision.cut),
        "javascript_advice": _javascript_advice(responses, decision.cut),
        "variants": _variants(scenario, responses, stream),
        "turns": [_turn(scenario, number) for number in range(1, scenario.turns + 1)],
    }


def _output_summary(body: dict) -> str:
    parts = []
    for item in body.get("output") or []:
        if item.get("type") == "function_call":
            parts.append(f"function_call {item.get('name')}({item.get('arguments')})")
        else:
            kind, value = _item_value(item)
            parts.append(f"{item.get('type')} {json.dumps(value, ensure_ascii=False)}")
    return "; ".join(parts) or "(no output)"


def _turn(scenario: Scenario, number: int) -> dict:
    """One turn of a conversation: what its request carries, and what was answered."""
    responses = scenario.find("POST", RESPONSES_PATH, False, number)
    if responses is None or not isinstance(responses.body_json, dict):
        return {"turn": number, "carries": "-", "statuses": {}, "output": "(not recorded)"}
    request = responses.request_json
    items = request.get("input") if isinstance(request, dict) else None
    kinds = [item.get("type", "message") for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    carries = ", ".join(f"{kinds.count(kind)} {kind}" for kind in dict.fromkeys(kinds)) or "a string input"
    statuses = {b: json.loads(reply_for(b, responses, scenario).body).get("status") for b in shown_behaviours()}
    return {"turn": number, "carries": carries, "statuses": statuses, "output": _output_summary(responses.body_json)}


class Unexplained(Exception):
    """A scenario that loaded but that some behaviour cannot read (a shape the load checks miss)."""


def explained(scenario: Scenario) -> dict:
    """``story``, or, for a scenario no behaviour can read, an entry that says so: one bad cassette
    never takes the other scenarios' explanations with it."""
    try:
        return story(scenario)
    except Exception as err:  # untrusted recordings: whatever a behaviour trips on, that scenario alone fails
        return {
            "name": scenario.name,
            "kind": "unexplained",
            "setup": scenario.setup,
            "endpoints": scenario.endpoints,
            "note": f"cannot be explained: a behaviour cannot read this recording ({type(err).__name__}: {err})",
        }


def explained_or_raise(scenario: Scenario) -> dict:
    """``story`` for one scenario asked for by name: one that cannot be explained is an error."""
    told = explained(scenario)
    if told["kind"] == "unexplained":
        raise Unexplained(f"scenario {scenario.name!r} {told['note']}")
    return told


def _teaching_order(told: dict):
    """Responses scenarios and sweeps first (the ones with something to teach), each part in reading
    order; a sweep among its family, before the recordings that have a limit."""
    limit = (told.get("request") or {}).get("max_output_tokens") if told["kind"] == "responses" else None
    order = reading_order(told["name"], limit if isinstance(limit, int) else None)
    return told["kind"] not in ("responses", "sweep"), order


def stories(scenarios: dict[str, Scenario]) -> list[dict]:
    """Responses scenarios and sweeps first (the ones with something to teach), then the rest. A
    sweep is one entry, its positions rows of a table (``teaching.sweep``), not one story each."""
    told = [explained(scenario) for scenario in scenarios.values() if scenario.sweep is None]
    told += [sweep_story(name, positions) for name, positions in sweeps_in(scenarios).items()]
    return sorted(told, key=_teaching_order)


WIDTH = 80
LABEL = 22
COLUMN = 19
COLUMNS = (WIDTH - LABEL) // COLUMN  # behaviours side by side in one table: 3


def _cell(text: str, width: int = COLUMN - 1) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _wrap(prefix: str, text: str) -> list[str]:
    """``text`` after ``prefix``, folded at word boundaries to the terminal width."""
    return textwrap.wrap(
        text, WIDTH, initial_indent=prefix, subsequent_indent=" " * len(prefix), break_on_hyphens=False
    ) or [prefix]  # 'tool-calls', 'openai-node' stay whole


def _request_lines(request: dict) -> list[str]:
    lines = ["request  POST /v1/responses"]
    for key, value in request.items():
        lines.append(_cell(printable(f"           {key}: {json.dumps(value, ensure_ascii=False)}"), WIDTH))
    return lines


def _body_table(rows: list[dict], behaviours: list[str]) -> list[str]:
    """The fields a client judges a reply by, one column per behaviour; a value that differs from
    buggy's is styled for a tty."""
    import click

    lines = ["non-streaming body".ljust(LABEL) + "".join(b.ljust(COLUMN) for b in behaviours).rstrip()]
    for row in rows:
        cells = []
        for position, behaviour in enumerate(behaviours):
            plain = _cell(printable(row["values"][behaviour]))
            text = plain
            if row["values"][behaviour] != row["values"]["buggy"]:
                text = click.style(plain, fg="green", bold=True)
            padding = " " * (COLUMN - len(plain))
            cells.append(text + (padding if position < len(behaviours) - 1 else ""))
        label = _cell(printable(row["field"]), LABEL - 1).ljust(LABEL)
        lines.append((click.style(label, fg="yellow") if row["differs"] else label) + "".join(cells))
    return lines


def render(told: dict) -> list[str]:
    """One scenario as plain text for an 80-column terminal; differences styled for a tty."""
    title = f"== {printable(told['name'])} "
    lines = [title + "=" * (WIDTH - len(title))]
    if told["setup"] != DEFAULT_SETUP:
        lines += _wrap(
            "set-up   ",
            printable(
                f"{told['setup']}: recorded from a server set up differently (its chat "
                "template); answers by prompt only under serve --setup "
                f"{told['setup']}, else when chosen by name"
            ),
        )
    if told["kind"] != "responses":
        return [*lines, *_wrap("  ", printable(f"{' '.join(told['endpoints'])}: {told['note']}")), ""]
    twin = told["twin_finish_reason"]
    lines += _request_lines(told["request"])
    meaning = "the reply was cut off" if told["cut"] else "the reply finished"
    lines.append(f"chat twin finish_reason: {printable(repr(twin))} ({meaning})")
    lines.append("")
    behaviours = list(told["bodies"])
    for start in range(0, len(behaviours), COLUMNS):  # as many tables as 80 columns need
        lines += [""] if start else []
        lines += _body_table(told["rows"], behaviours[start : start + COLUMNS])
    if told["last_events"]:
        lines += ["", f"stream, last {LAST_EVENTS} events"]
        width = max(7, *(len(behaviour) + 2 for behaviour in told["last_events"]))
        for behaviour, events in told["last_events"].items():
            for number, event in enumerate(events):
                lines.append(f"  {behaviour if number == 0 else '':{width}}{printable(event)}")
    if told["variants"]:
        lines += ["", "other servers' variants (served at /NAME/v1; mockllama check names yours)"]
        for variant in told["variants"]:
            said = f"body {variant['status']}" + (f", stream {variant['terminal']}" if variant["terminal"] else "")
            lines += _wrap(f"  {variant['name']:<12}", printable(said))
            lines += _wrap(" " * 14, printable(f"{variant['server']}: {variant['citation']}"))
    lines += ["", *_wrap("client:  ", printable(told["advice"]))]
    lines += _wrap("js:      ", printable(told["javascript_advice"]))
    if len(told["turns"]) > 1:
        lines += ["", f"conversation, {len(told['turns'])} turns (each request gets the turn its input asks for)"]
        for turn in told["turns"]:
            statuses = ", ".join(f"{b} {status}" for b, status in turn["statuses"].items())
            lines += _wrap(f"  turn {turn['turn']}: ", printable(f"input carries {turn['carries']}; {statuses}"))
            lines += _wrap("          answers ", printable(turn["output"]))
    return [*lines, ""]


# --- the journal: what a client sent, for a person demoing (journal_client fetches it) ---------


def _outcome(entry: dict) -> str:
    parts = [
        "stream" if entry["stream"] else "body",
        "finished" if entry["finished"] else "NOT finished",
        f"{entry['bytes_sent']} bytes",
    ]
    if entry.get("fault"):
        parts.append(f"fault {entry['fault']}")
    return ", ".join(parts)


def journal_lines(entries: list[dict]) -> list[str]:
    """Each journalled request: when, what, how it was answered, and the body that was sent. Every
    value came from a client (any web page can send one), so each line is made printable: no
    escape sequence reaches the terminal."""
    import time

    if not entries:
        return ["The journal is empty: no request has been answered yet (or --journal-size is 0)."]
    lines = []
    for entry in entries:
        when = time.strftime("%H:%M:%S", time.localtime(entry["time"]))
        chosen = f"{entry['scenario']} ({entry['selected_by']})" if entry["scenario"] else "no scenario"
        lines.append(
            f"#{entry['id']:<4}{when}  {entry['method']} {entry['path']} -> {entry['status']}  "
            f"{entry['behaviour']}  {chosen}"
        )
        lines.append(f"      {_outcome(entry)}")
        if entry.get("error"):
            lines.append(f"      error: {entry['error']}")
        if entry.get("body") is not None:
            lines.append(f"      sent: {_shown_body(entry['body'])}")
    return [_cell(printable(line), WIDTH) for line in lines]


def _shown_body(body) -> str:
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, ensure_ascii=False)
    except (RecursionError, ValueError):
        return "(JSON nested too deeply to show)"
