"""check's verdict, rule by rule, as `mockllama check --help` and the README state it.

A probe is `dishonest` when the chat twin says `length` and the Responses reply (or the function
call being generated at the cut, its last item) says `completed`; `honest` when the twin says `length` and the reply says
`incomplete` with reason `max_output_tokens`; `unknown` otherwise (the twin did not say `length`,
so the probe proves nothing, or the reply says something else). A report is `dishonest` if any
probe is, else `unknown` if any probe is, else `honest`; exit codes 1, 2 and 0. The replies are
the bundled recordings' own (read from their YAML), as `fixed` corrects them, plus hand-made
variants where no recording has the case.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yamlkit

from mockllama.check import Observation, ProbeResult, Report
from mockllama.check import _judge as _judge_probe

INCOMPLETE = {"reason": "max_output_tokens"}
ROOT = Path(__file__).resolve().parent.parent


def _judge(reply: dict, twin_reason, probe: str = "tool"):
    return _judge_probe(reply, twin_reason, probe)


def _recorded(name: str) -> dict:
    return yamlkit.find(name, "/v1/responses", False).json()


def _honest(name: str) -> dict:
    """A recorded cut reply as an honest server reports it: the reply and its cut item incomplete."""
    reply = copy.deepcopy(_recorded(name))
    reply["status"], reply["incomplete_details"] = "incomplete", dict(INCOMPLETE)
    reply["output"][-1]["status"] = "incomplete"
    return reply


@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20", "tool-two-calls-cut-70"])
def test_a_recorded_cut_reply_is_dishonest_when_the_twin_says_length(name):
    assert yamlkit.chat_finish_reason(name, False) == "length"
    verdict, reason = _judge(_recorded(name), "length")
    assert verdict == "dishonest"
    assert reason == "the chat twin says 'length' but /v1/responses says 'completed'"


@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20", "tool-two-calls-cut-70"])
def test_the_same_reply_reported_incomplete_is_honest(name):
    assert _judge(_honest(name), "length") == ("honest", "reported as 'incomplete' with reason 'max_output_tokens'")


def test_a_function_call_still_completed_inside_an_incomplete_reply_is_dishonest():
    """The response says incomplete, but a call it holds says completed: still the bug."""
    reply = _honest("tool-cut-20")
    reply["output"][-1]["status"] = "completed"
    assert _judge(reply, "length")[0] == "dishonest"


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
    assert why == (f"the chat twin says finish_reason={reason!r}, not 'length': the reply finished "
                   "inside the limit, so this probe proves nothing")


@pytest.mark.parametrize(
    ("status", "details"),
    [("incomplete", None), ("incomplete", {"reason": "content_filter"}), ("failed", INCOMPLETE),
     (None, INCOMPLETE), ("in_progress", None)],
)
def test_a_reply_neither_completed_nor_honestly_incomplete_is_unknown(status, details):
    reply = {**_recorded("text-cut-8"), "status": status, "incomplete_details": details}
    reply["output"] = [{**item, "status": "incomplete"} for item in reply["output"]]
    assert _judge(reply, "length") == ("unknown", f"status={status!r} incomplete_details={details!r}")


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
    honest["status"], honest["incomplete_details"] = "incomplete", dict(INCOMPLETE)
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
        r"e\.g\. (scripts/llama-server\.sh) run --setup (\S+)\)", reason)
    assert advice, reason
    script = (ROOT / advice.group(1)).read_text()
    assert re.search(rf"^\s*{re.escape(advice.group(2))}\)", script, re.MULTILINE), advice.group(2)


def _report(*verdicts: str) -> Report:
    return Report("http://x", [ProbeResult(f"p{n}", "text-cut-8", verdict, f"why {n}") for n, verdict in enumerate(verdicts)])


@pytest.mark.parametrize(
    ("verdicts", "overall", "exit_code"),
    [(("honest",), "honest", 0), (("dishonest",), "dishonest", 1), (("unknown",), "unknown", 2),
     (("honest", "dishonest", "unknown"), "dishonest", 1), (("unknown", "dishonest"), "dishonest", 1),
     (("honest", "unknown"), "unknown", 2), (("honest", "honest"), "honest", 0)],
)
def test_the_report_takes_the_worst_probe_and_its_exit_code(verdicts, overall, exit_code):
    report = _report(*verdicts)
    assert (report.verdict, report.exit_code) == (overall, exit_code)
    assert report.to_dict()["verdict"] == overall and report.to_dict()["exit_code"] == exit_code


def test_the_summary_says_the_verdict_in_words():
    assert _report("dishonest").summary == "http://x: a reply cut off at max_output_tokens is reported as 'completed'."
    assert _report("honest").summary == ("http://x: a reply cut off at max_output_tokens is reported as "
                                         "'incomplete' (reason 'max_output_tokens').")
    assert _report("honest", "unknown", "unknown").summary == (
        "http://x: can't tell whether a cut-off reply is reported honestly: p1: why 1; p2: why 2.")


def test_the_report_lists_every_observation_then_the_summary_and_serialises_them():
    probe = ProbeResult("text", "text-cut-8", "dishonest", "r", [
        Observation("/v1/responses", False, 8, "line one", {"status": "completed"}),
        Observation("/v1/chat/completions", False, 8, "line two", {"finish_reason": "length"})])
    report = Report("http://x", [probe, ProbeResult("tool", "tool-cut-20", "honest", "s")])
    assert report.lines() == ["line one", "line two", report.summary]
    data = json.loads(json.dumps(report.to_dict()))
    assert data["url"] == "http://x" and data["summary"] == report.summary
    assert [p["probe"] for p in data["probes"]] == ["text", "tool"]
    assert data["probes"][0]["observations"][1] == {"endpoint": "/v1/chat/completions", "stream": False, "limit": 8,
                                                    "line": "line two", "fields": {"finish_reason": "length"}}
