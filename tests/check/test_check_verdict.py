"""check's verdict, rule by rule, as `mockllama check --help` and docs/check.md state it.

When the chat twin says `length`, each aspect of the cut reply is judged on its own: the status,
incomplete_details.reason, the cut (last) item's status, completed_at, and in a stream the
terminal event and the cut call's arguments.done. A probe is `dishonest` when any aspect says the
reply finished; `honest` when every aspect that applies reports the cut; `unknown` otherwise (the
twin did not say `length`, so the probe proves nothing, or an aspect is neither). A report is
`dishonest` if any probe is, else `unknown` if any probe is, else `honest`; exit codes 1, 2 and 0.
The replies are the bundled recordings' own (read from their YAML), as `fixed` corrects them,
plus hand-made variants where no recording has the case.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from mockllama.check import Aspect, Observation, ProbeResult, Report
from mockllama.check.reading import Seen, StreamEvent
from mockllama.check.verdicts import _judge as _judge_probe
from mockllama.check.verdicts import _judge_finished, _judge_usage
from support import ROOT, yamlkit
from support.twins import said

INCOMPLETE = {"reason": "max_output_tokens"}
NOT_A_STREAM = Aspect("terminal_event", "not applicable", "not a stream", "only a stream has one")


def _judge(reply: dict, twin_reason, probe: str = "tool"):
    return _judge_probe(Seen(reply), said(twin_reason), probe)[:2]


def _aspects(seen: Seen) -> dict[str, str]:
    """Each aspect's verdict, by name."""
    return {aspect.name: aspect.verdict for aspect in _judge_probe(seen, said("length"), "stream")[2]}


def _recorded(name: str) -> dict:
    return yamlkit.find(name, "/v1/responses", False).json()


def _honest(name: str) -> dict:
    """A recorded cut reply as an honest server reports it: the reply and its cut item incomplete."""
    reply = copy.deepcopy(_recorded(name))
    reply["status"], reply["incomplete_details"], reply["completed_at"] = "incomplete", dict(INCOMPLETE), None
    reply["output"][-1]["status"] = "incomplete"
    return reply


@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20", "tool-two-calls-cut-70"])
def test_a_recorded_cut_reply_is_dishonest_when_the_twin_says_length(name):
    assert yamlkit.chat_finish_reason(name, False) == "length"
    verdict, reason = _judge(_recorded(name), "length")
    assert verdict == "dishonest"
    kind = _recorded(name)["output"][-1]["type"]
    assert reason == (
        "the chat twin shows a cut (finish_reason 'length') but the reply is reported as finished by: "
        f"status ('completed'), cut item status (the last item ({kind!r}) says 'completed'), completed_at "
        f"({_recorded(name)['completed_at']}); also wrong: incomplete_details.reason (absent)"
    )


@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20", "tool-two-calls-cut-70"])
def test_the_same_reply_reported_incomplete_is_honest(name):
    assert _judge(_honest(name), "length") == ("honest", "reported as 'incomplete' with reason 'max_output_tokens'")


@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20"])
def test_a_cut_item_still_completed_inside_an_incomplete_reply_is_dishonest(name):
    """The response says incomplete, but the message or call being generated says completed:
    still the bug (vLLM's variant, vllm-project/vllm issue 57998), and the reason says where."""
    reply = _honest(name)
    reply["output"][-1]["status"] = "completed"
    verdict, reason = _judge(reply, "length")
    assert verdict == "dishonest"
    assert reason.endswith(
        f"reported as finished by: cut item status (the last item ({reply['output'][-1]['type']!r}) says 'completed')"
    )


def test_an_earlier_call_that_finished_may_say_completed():
    """Two calls, cut inside the second (the real tool-two-calls-cut-70): the first call finished,
    so an honest server reports it completed and only the second incomplete, as fixed does."""
    reply = _honest("tool-two-calls-cut-70")
    assert [item["status"] for item in reply["output"]] == ["completed", "incomplete"]
    assert _judge(reply, "length")[0] == "honest"
    reply["output"][0]["status"] = "incomplete"  # marking the finished call incomplete is no lie about the cut
    assert _judge(reply, "length")[0] == "honest"


@pytest.mark.parametrize("reason", ["stop", "tool_calls", None])
@pytest.mark.parametrize("name", ["text-finishes", "tool-finishes", "text-cut-8"])
def test_without_a_length_twin_the_probe_proves_nothing(name, reason):
    verdict, why = _judge(_recorded(name), reason)
    assert verdict == "unknown"
    assert why == (
        f"the chat twin says finish_reason={reason!r}, and nothing in it shows a cut: the reply finished "
        "inside the limit, so this probe proves nothing"
    )


@pytest.mark.parametrize(
    ("status", "details"),
    [
        ("incomplete", None),
        ("incomplete", {"reason": "content_filter"}),
        ("incomplete", {"reason": "length"}),
        ("failed", INCOMPLETE),
        ("in_progress", None),
    ],
)
def test_a_reply_neither_completed_nor_honestly_incomplete_is_wrong(status, details):
    """Wrong, not can't tell: the reply says what it says, and a client that reads that field
    misses the cut. The reason names each wrong field, what it said and what is wrong with it."""
    reply = {**_recorded("text-cut-8"), "status": status, "incomplete_details": details, "completed_at": None}
    reply["output"] = [{**item, "status": "incomplete"} for item in reply["output"]]
    verdict, reason = _judge(reply, "length")
    assert verdict == "wrong"
    assert reason.startswith("not reported as finished, but not fully as cut either: ")
    wrong = reason.removeprefix("not reported as finished, but not fully as cut either: ")
    assert (f"status ({status!r}: neither 'incomplete' nor 'completed')" in wrong) is (status != "incomplete")
    assert ("incomplete_details.reason" in wrong) is (details != INCOMPLETE)


def test_a_wrong_reason_says_what_it_must_be():
    reply = _honest("text-cut-8")
    reply["incomplete_details"] = {"reason": "length"}
    assert _judge(reply, "length") == (
        "wrong",
        "not reported as finished, but not fully as cut either: incomplete_details.reason ('length': must be "
        "'max_output_tokens', the limit that cut the reply: a client that checks for it misses the cut)",
    )


@pytest.mark.parametrize("details", [INCOMPLETE, None])
def test_a_null_status_is_dishonest_whatever_incomplete_details_says(details):
    """inspect_ai's variant: a client that checks status == 'incomplete' takes the reply as finished."""
    reply = _honest("text-cut-8")
    reply["status"], reply["incomplete_details"] = None, details
    verdict, reason = _judge(reply, "length")
    assert verdict == "dishonest"
    assert reason.startswith(
        "the chat twin shows a cut (finish_reason 'length') but the reply is reported as finished by: status (null)"
    )


def test_a_reply_without_output_is_judged_by_its_status():
    assert _judge({"status": "completed", "output": None}, "length")[0] == "dishonest"
    assert _judge({"status": "incomplete", "incomplete_details": INCOMPLETE}, "length")[0] == "honest"


def test_the_reasoning_probe_needs_a_reasoning_item_and_judges_it():
    """The forced-thinking recordings: llama-server parses everything as reasoning, and its cut
    reasoning item says completed like the rest."""
    thinking = _recorded("thinking-cut-12")
    assert yamlkit.chat_finish_reason("thinking-cut-12", False) == "length"
    assert [item["type"] for item in thinking["output"]][-1:] == ["reasoning"]
    assert _judge(thinking, "length", "reasoning")[0] == "dishonest"
    verdict, reason = _judge(_recorded("text-cut-8"), "length", "reasoning")
    assert verdict == "unknown" and reason.startswith("the reply carries no reasoning item")
    honest = copy.deepcopy(thinking)
    honest["status"], honest["incomplete_details"], honest["completed_at"] = "incomplete", dict(INCOMPLETE), None
    assert _judge(honest, "length", "reasoning")[0] == "dishonest"  # the reasoning item still says completed
    honest["output"][-1]["status"] = "incomplete"
    assert _judge(honest, "length", "reasoning")[0] == "honest"


def test_without_a_reasoning_item_the_reason_says_how_to_make_llama_server_think():
    """The advice names the cause and a command that exists: the setup must be one that
    scripts/llama-server.sh accepts, read from the script itself."""
    verdict, reason = _judge(_recorded("text-cut-8"), "length", "reasoning")
    assert verdict == "unknown"
    advice = re.fullmatch(
        r"the reply carries no reasoning item, so the server did not think and this probe cannot tell how it "
        r"reports a cut inside reasoning \(llama-server thinks only with a reasoning chat template, "
        r"e\.g\. (scripts/llama-server\.sh) run --setup (\S+)\)",
        reason,
    )
    assert advice, reason
    script = (ROOT / advice.group(1)).read_text()
    assert re.search(rf"^\s*{re.escape(advice.group(2))}\)", script, re.MULTILINE), advice.group(2)


COMPLETED_STATUS = Aspect("status", "dishonest", "'completed'", "says the reply finished")
LENGTH_REASON = Aspect("incomplete_details.reason", "wrong", "'length'", "must be 'max_output_tokens'")
ASPECTS_FOR = {"dishonest": [COMPLETED_STATUS], "wrong": [LENGTH_REASON]}


def _report(*verdicts: str) -> Report:
    return Report(
        "http://x",
        [
            ProbeResult(f"p{n}", "text-cut-8", verdict, f"why {n}", aspects=ASPECTS_FOR.get(verdict, []))
            for n, verdict in enumerate(verdicts)
        ],
    )


@pytest.mark.parametrize(
    ("verdicts", "overall", "exit_code"),
    [
        (("honest",), "honest", 0),
        (("dishonest",), "dishonest", 1),
        (("wrong",), "wrong", 1),
        (("unknown",), "unknown", 2),
        (("wrong", "unknown"), "wrong", 1),
        (("wrong", "dishonest"), "dishonest", 1),
        (("honest", "wrong"), "wrong", 1),
        (("honest", "dishonest", "unknown"), "dishonest", 1),
        (("unknown", "dishonest"), "dishonest", 1),
        (("honest", "unknown"), "unknown", 2),
        (("honest", "honest"), "honest", 0),
    ],
)
def test_the_report_takes_the_worst_probe_and_its_exit_code(verdicts, overall, exit_code):
    report = _report(*verdicts)
    assert (report.verdict, report.exit_code) == (overall, exit_code)
    assert report.to_dict()["verdict"] == overall and report.to_dict()["exit_code"] == exit_code


def test_the_summary_says_the_verdict_in_words():
    assert _report("dishonest").summary == (
        "http://x: a reply cut off at max_output_tokens is reported as finished by: status."
    )
    assert _report("honest").summary == (
        "http://x: a reply cut off at max_output_tokens is reported as 'incomplete' (reason 'max_output_tokens')."
    )
    assert _report("honest", "unknown", "unknown").summary == (
        "http://x: can't tell whether a cut-off reply is reported honestly: p1: why 1; p2: why 2."
    )


def test_the_report_lists_every_observation_then_the_summary_and_serialises_them():
    probe = ProbeResult(
        "text",
        "text-cut-8",
        "dishonest",
        "r",
        [
            Observation("/v1/responses", False, 8, "line one", {"status": "completed"}),
            Observation("/v1/chat/completions", False, 8, "line two", {"finish_reason": "length"}),
        ],
        [COMPLETED_STATUS, Aspect("terminal_event", "not applicable", "not a stream", "only a stream has one")],
        ["a variant"],
    )
    report = Report("http://x", [probe, ProbeResult("tool", "tool-cut-20", "honest", "s")])
    assert report.lines() == [
        "line one",
        "line two",
        "  dishonest status: 'completed' (says the reply finished)",
        "  known variant: a variant",
        report.summary,
    ]
    data = json.loads(json.dumps(report.to_dict()))
    assert data["url"] == "http://x" and data["summary"] == report.summary
    assert [p["probe"] for p in data["probes"]] == ["text", "tool"]
    assert data["probes"][0]["observations"][1] == {
        "endpoint": "/v1/chat/completions",
        "stream": False,
        "limit": 8,
        "line": "line two",
        "fields": {"finish_reason": "length"},
    }


def test_the_summary_names_each_failing_aspect_once_in_the_order_judged_and_the_variant_every_probe_fits():
    probes = [
        ProbeResult(
            "text",
            "text-cut-8",
            "dishonest",
            "r",
            aspects=[
                Aspect("completed_at", "dishonest", "1", "t"),
                Aspect("incomplete_details.reason", "wrong", "absent", "w"),
                COMPLETED_STATUS,
            ],
            variants=["v1"],
        ),
        ProbeResult(
            "stream",
            "tool-cut-20",
            "dishonest",
            "r",
            aspects=[COMPLETED_STATUS, Aspect("function_call_arguments.done", "wrong", "none", "w")],
            variants=["v1", "v2"],
        ),
    ]
    assert Report("http://x", probes).summary == (
        "http://x: a reply cut off at max_output_tokens is reported as finished by: status, completed_at; also wrong: "
        "incomplete_details.reason, function_call_arguments.done. Known variant: v1."
    )
    probes[0].variants = ["v3"]  # no variant fits every probe: each one that fits some is named, once
    assert Report("http://x", probes).summary.endswith("Known variant: v3; v1; v2.")
    probes[0].aspects = []  # a probe that was not judged (can't tell) does not count
    assert Report("http://x", probes).variants == ["v1", "v2"]


# Each aspect on its own: an otherwise honest cut reply (tool-cut-20 as `fixed` reports it) with
# one aspect changed gets that one aspect, and only that one, judged as not honest.


def _honest_stream(**changes) -> Seen:
    reply = _honest("tool-cut-20")
    call = reply["output"][-1]
    terminal = StreamEvent("response.incomplete", {"type": "response.incomplete", "response": reply})
    return (
        Seen(reply, terminal, {call["id"]: call["arguments"]})
        if not changes
        else Seen(
            reply, changes.get("terminal", terminal), changes.get("arguments_done", {call["id"]: call["arguments"]})
        )
    )


def test_the_honest_stream_is_honest_in_every_aspect():
    assert set(_aspects(_honest_stream()).values()) == {"honest"}


def _changed_aspects(seen: Seen) -> dict[str, str]:
    return {name: verdict for name, verdict in _aspects(seen).items() if verdict != "honest"}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"completed_at": 1796056009}, "dishonest"),
        ({"completed_at": "soon"}, "wrong"),
        ({"status": "completed"}, "dishonest"),
        ({"status": "failed"}, "wrong"),
        ({"incomplete_details": {"reason": "content_filter"}}, "wrong"),
        ({"incomplete_details": None}, "wrong"),
    ],
)
def test_one_top_level_field_changed_fails_that_aspect_alone(change, expected):
    seen = _honest_stream()
    seen.response.update(change)
    name = {"completed_at": "completed_at", "status": "status", "incomplete_details": "incomplete_details.reason"}[
        next(iter(change))
    ]
    assert _changed_aspects(seen) == {name: expected}


@pytest.mark.parametrize(
    ("status", "expected"), [("completed", "dishonest"), ("in_progress", "wrong"), (None, "wrong")]
)
def test_the_cut_item_is_judged_on_its_own(status, expected):
    seen = _honest_stream()
    if status is None:
        del seen.response["output"][-1]["status"]
    else:
        seen.response["output"][-1]["status"] = status
    assert _changed_aspects(seen) == {"cut_item.status": expected}


@pytest.mark.parametrize(
    ("name", "kind", "expected"),
    [
        ("response.completed", "response.completed", "dishonest"),  # the hybrid terminal event: it carries 'incomplete'
        ("response.incomplete", "response.completed", "dishonest"),  # a client reading the JSON type is misled
        ("response.completed", "response.incomplete", "dishonest"),  # a client reading the event line is misled
        (None, "response.completed", "dishonest"),
        (None, "response.incomplete", "honest"),
        ("response.failed", "response.failed", "wrong"),
        ("response.incomplete", None, "wrong"),
    ],
)
def test_the_terminal_event_is_judged_by_its_event_line_and_its_type(name, kind, expected):
    seen = _honest_stream()
    terminal = StreamEvent(name, {"type": kind, "response": seen.response})
    changed = _changed_aspects(_honest_stream(terminal=terminal))
    assert changed == ({} if expected == "honest" else {"terminal_event": expected})


def test_the_hybrid_terminal_event_is_named_so():
    seen = _honest_stream(terminal=StreamEvent("response.completed", {"type": "response.completed"}))
    aspect = {aspect.name: aspect for aspect in _judge_probe(seen, said("length"), "stream")[2]}["terminal_event"]
    assert aspect.seen == "'response.completed' carrying a response whose status is 'incomplete'"
    assert aspect.why.endswith("(the hybrid terminal event)")


@pytest.mark.parametrize(("arguments_done", "expected"), [({}, "wrong"), ({"other": "{}"}, "wrong")])
def test_a_cut_call_without_its_arguments_done_is_wrong(arguments_done, expected):
    assert _changed_aspects(_honest_stream(arguments_done=arguments_done)) == {"function_call_arguments.done": expected}


def test_arguments_done_that_differ_from_the_call_are_wrong():
    seen = _honest_stream()
    call = seen.response["output"][-1]
    seen.arguments_done[call["id"]] = call["arguments"] + '"}'  # repaired: not the arguments as generated
    assert _changed_aspects(seen) == {"function_call_arguments.done": "wrong"}


def test_what_a_reply_cannot_say_is_not_applicable():
    text = _honest("text-cut-8")
    assert _aspects(Seen(text)) == {
        "status": "honest",
        "incomplete_details.reason": "honest",
        "cut_item.status": "honest",
        "completed_at": "honest",
        "terminal_event": "not applicable",
        "function_call_arguments.done": "not applicable",
    }
    empty = {**text, "output": []}
    assert _aspects(Seen(empty))["cut_item.status"] == "not applicable"
    streamed = Seen(text, StreamEvent("response.incomplete", {"type": "response.incomplete"}))
    assert _aspects(streamed)["function_call_arguments.done"] == "not applicable"  # the cut item is a message


# A stream has exactly one terminal event.


def _terminal(kind: str) -> StreamEvent:
    return StreamEvent(kind, {"type": kind, "response": {}})


@pytest.mark.parametrize(
    ("kinds", "expected", "why"),
    [
        (
            ["response.completed", "response.incomplete"],
            "dishonest",
            "a stream has exactly one terminal event; a client that stops at the first takes the reply as finished",
        ),
        (
            ["response.incomplete", "response.completed"],
            "dishonest",
            "a stream has exactly one terminal event; a client that reads to the last takes the reply as finished",
        ),
        (["response.incomplete", "response.incomplete"], "wrong", "a stream has exactly one terminal event"),
        (["response.failed", "response.incomplete"], "wrong", "a stream has exactly one terminal event"),
    ],
)
def test_more_than_one_terminal_event_is_never_honest(kinds, expected, why):
    seen = _honest_stream()
    seen.terminals = tuple(_terminal(kind) for kind in kinds)
    seen.terminal = seen.terminals[-1]
    aspect = {aspect.name: aspect for aspect in _judge_probe(seen, said("length"), "stream")[2]}["terminal_event"]
    assert (aspect.verdict, aspect.why) == (expected, why)
    assert aspect.seen == f"{len(kinds)} terminal events: " + ", then ".join(repr(kind) for kind in kinds)
    assert _changed_aspects(seen) == {"terminal_event": expected}


def test_one_terminal_event_among_other_events_is_judged_as_before():
    seen = _honest_stream()
    seen.terminals = (seen.terminal,)
    assert set(_aspects(seen).values()) == {"honest"}


# The request with room to finish: it must be reported finished.


def _finished(name: str, stream_end: str | None = None, **changes) -> Seen:
    reply = {**_recorded(name), **changes}
    if stream_end is None:
        return Seen(reply)
    terminal = StreamEvent(stream_end, {"type": stream_end, "response": reply})
    done = {item["id"]: item["arguments"] for item in reply["output"] if item["type"] == "function_call"}
    return Seen(reply, terminal, done, (terminal,))


@pytest.mark.parametrize("name", ["text-finishes", "tool-finishes"])
def test_a_finished_reply_reported_completed_is_honest(name):
    reason = "stop" if name == "text-finishes" else "tool_calls"
    assert yamlkit.chat_finish_reason(name, False) == reason
    verdict, why, aspects = _judge_finished(_finished(name), said(reason))
    assert (verdict, why) == ("honest", "reported as 'completed'")
    assert aspects[0] == Aspect("status", "honest", "'completed'", "the reply finished, and says so")
    assert NOT_A_STREAM in aspects
    assert {aspect.verdict for aspect in aspects} == {"honest", "not applicable"}


def test_a_finished_reply_reported_incomplete_is_dishonest_the_other_way():
    verdict, reason, aspects = _judge_finished(_finished("text-finishes", status="incomplete"), said("stop"))
    assert verdict == "dishonest"
    assert reason == (
        "the chat twin shows a finish (finish_reason 'stop') but the reply is reported as cut by: status ('incomplete')"
    )
    assert aspects[0].why == "says a reply that finished inside its limit was cut"


@pytest.mark.parametrize(
    ("end", "status", "expected"),
    [
        ("response.completed", "completed", {"status": "honest", "terminal_event": "honest"}),
        ("response.incomplete", "completed", {"status": "honest", "terminal_event": "dishonest"}),
        ("response.incomplete", "incomplete", {"status": "dishonest", "terminal_event": "dishonest"}),
        ("response.failed", "completed", {"status": "honest", "terminal_event": "wrong"}),
        ("response.completed", None, {"status": "wrong", "terminal_event": "honest"}),
        ("response.completed", "queued", {"status": "wrong", "terminal_event": "honest"}),
    ],
)
def test_a_finished_stream_is_judged_by_its_status_and_its_terminal_event(end, status, expected):
    aspects = _judge_finished(_finished("tool-finishes", end, status=status), said("tool_calls"))[2]
    assert {aspect.name: aspect.verdict for aspect in aspects if aspect.name in expected} == expected
    assert {aspect.verdict for aspect in aspects if aspect.name not in expected} == {"honest"}


def test_two_terminal_events_in_a_finished_stream_are_never_honest():
    seen = _finished("text-finishes", "response.completed")
    seen.terminals = (_terminal("response.completed"), _terminal("response.completed"))
    assert _finished_verdicts(seen)["terminal_event"] == "wrong"
    seen.terminals = (_terminal("response.incomplete"), _terminal("response.completed"))
    assert _finished_verdicts(seen)["terminal_event"] == "dishonest"


def _finished_verdicts(seen: Seen) -> dict[str, str]:
    return {aspect.name: aspect.verdict for aspect in _judge_finished(seen, said("stop"))[2]}


@pytest.mark.parametrize("reason", ["length", None, "content_filter"])
def test_a_request_with_room_to_finish_that_did_not_finish_proves_nothing(reason):
    verdict, why, aspects = _judge_finished(_finished("text-finishes", status="incomplete"), said(reason))
    assert (verdict, aspects) == ("unknown", [])
    assert why == (
        f"the chat twin says finish_reason={reason!r}, and nothing in it shows a finish: the request with room to "
        "finish did not finish, so it proves nothing"
    )


def test_the_summary_names_each_direction_in_its_own_sentence():
    finished = ProbeResult(
        "text", "text-finishes", "dishonest", "r", aspects=[Aspect("status", "dishonest", "'incomplete'", "c")]
    )
    cut = ProbeResult("text", "text-cut-8", "dishonest", "r", aspects=[COMPLETED_STATUS], finished=finished)
    assert Report("http://x", [cut]).summary == (
        "http://x: a reply cut off at max_output_tokens is reported as finished by: status. A reply that finished "
        "inside its limit is reported as cut by: status."
    )
    cut = ProbeResult("text", "text-cut-8", "honest", "r", finished=finished)
    report = Report("http://x", [cut])
    assert (report.verdict, report.exit_code) == ("dishonest", 1)
    assert report.summary == "http://x: a reply that finished inside its limit is reported as cut by: status."


def test_can_t_tell_names_the_request_with_room_to_finish_apart():
    finished = ProbeResult("text", "text-finishes", "unknown", "why not")
    report = Report("http://x", [ProbeResult("text", "text-cut-8", "honest", "r", finished=finished)])
    assert report.summary == (
        "http://x: can't tell whether a cut-off reply is reported honestly: text, with room to finish: why not."
    )


# The usage fallback (issue 55 item 12): a number is compared as a number, whatever JSON wrote it as.


@pytest.mark.parametrize(("tokens", "shown"), [(8, "8"), (8.0, "8.0"), (9, "9"), (8.5, "8.5")])
def test_usage_at_or_past_the_limit_keeps_the_fallback_whatever_number_it_is(tokens, shown):
    aspect = _judge_usage({"usage": {"output_tokens": tokens}}, 8)
    assert (aspect.verdict, aspect.seen) == ("kept", f"output_tokens={shown} reaches max_output_tokens=8")


def _gone(*usages) -> Report:
    probes = [
        ProbeResult(probe, "text-cut-8", "honest", "r", usage_fallback=_judge_usage({"usage": usage}, 8))
        for probe, usage in zip(("text", "tool", "stream"), usages, strict=False)
    ]
    return Report("http://x", probes)


def test_the_summary_says_below_only_of_a_number_below_the_limit():
    assert _gone({"output_tokens": 8.0}).summary == (
        "http://x: a reply cut off at max_output_tokens is reported as 'incomplete' (reason 'max_output_tokens')."
    )
    assert _gone({"output_tokens": 7.0}, {"output_tokens": "8"}, {}).summary.endswith(
        " usage.output_tokens of a cut reply stays below max_output_tokens (text), or is missing or not a number "
        "(tool, stream): the one fallback signal a client has where the status lies is gone."
    )
    assert _gone({"output_tokens": True}).summary.endswith(
        " usage.output_tokens of a cut reply is missing or not a number (text): the one fallback signal a client "
        "has where the status lies is gone."
    )
