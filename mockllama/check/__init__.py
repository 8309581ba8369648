"""Does a server report a reply cut off by its output limit as cut off, on /v1/responses and on
/v1/chat/completions?

Each Responses probe sends a request that cannot finish within its limit to ``/v1/responses``,
and its twin to ``/v1/chat/completions``, then compares; each chat probe (``chat-text``,
``chat-tool``, ``chat-stream``) sends the chat requests on their own. The requests are the bundled
scenarios' own recorded requests (``text-cut-8``, ``tool-cut-20``, from the recorder's catalogue),
so mockllama answers them and a real server gets exactly what was recorded. Use it from Python::

    report = mockllama.check.run("http://127.0.0.1:8080", probes=["text", "stream"])
    assert report.exit_code == 0, report.summary

A chat reply shows a cut by ``finish_reason: "length"``, by ``usage.completion_tokens`` reaching
``max_tokens`` (the cut requests cannot finish inside their limit) or by a tool call whose
arguments do not parse, and a finish by ``"stop"`` or ``"tool_calls"`` with no usage at the limit
(``verdicts.shows_cut``, ``shows_finished``): the twin so tells a Responses probe what happened,
and a chat probe judges its own reply's ``finish_reason`` so. When the twin shows the cut, each
aspect of the cut Responses reply is judged on its own (``ASPECTS``):
the response ``status``, ``incomplete_details.reason``, the cut output item's ``status``,
``completed_at``, and in a stream the terminal event and the cut call's
``response.function_call_arguments.done``. An aspect is ``dishonest`` when it says the reply
finished (a ``null`` status too: a client that checks ``status == "incomplete"`` reads it so),
``honest`` when it reports the cut as an honest server does, ``wrong`` when it does neither
(missing, or another value), and ``not applicable`` when the reply has nothing it could say it
in. A stream has exactly one terminal event; more than one is never honest. A stream is read as
the SDKs read it (``sse.read_events``: CR, LF or CRLF, up to ``[DONE]``), and a terminal event is
known by its ``event:`` line whatever its data.

A status is only worth checking if it can say both things, so each probe also sends a request
with room to finish (``FINISHING``: ``text-finishes``, ``tool-finishes``, ``thinking-finishes``)
and its twin, and judges that reply on the same aspects (``judge_finished``): ``completed``, no
``incomplete_details``, every item ``completed``, and in a stream one ``response.completed`` and
an arguments.done for every call. A server that says ``incomplete`` to every reply, or that says
``completed`` beside a reason to be cut, is dishonest the other way.

Verdicts: ``dishonest`` (exit 1) when any aspect of any probe is, in either direction; ``wrong``
(exit 1 too: the server reports a cut, but not as the API does, and a client that reads that
field misses it) when an aspect is wrong and none dishonest; ``honest`` (exit 0) when every
aspect that applies is; otherwise ``unknown`` (exit 2: can't tell), with the reason. Each endpoint
probed has its verdict (``Report.endpoints``), and the report's is the worse of them. Where the
signals of a probe's cut reply are those another server writes (``VARIANTS``, ``CHAT_VARIANTS``),
the verdict names that server. Where the usage of a cut reply stays below the limit, the report
says that the one fallback signal a client has when the status or finish_reason lies is gone.

The ``reasoning`` probe asks the forced-thinking question (``thinking-cut-12``, from the
forced-thinking catalogue): a reply cut while the model is still thinking. It can only judge a
server that answers with a reasoning item; a reply without one is ``unknown``, never ``honest``.

A reply is read as ``wire.untrusted_http`` reads any server it does not trust (``explain
--journal`` reads its journal so too): one deadline for the whole exchange, a cap on its size,
the URL's credentials sent and never printed; ``strict_json`` parses only what RFC 8259 accepts.
"""

from collections.abc import Sequence

from mockllama.check.probes import ALL_PROBES, GROUPS, PROBES, run_probe
from mockllama.check.report import Observation, ProbeResult, Report
from mockllama.check.verdicts import Aspect
from mockllama.wire.scrub import scrub_text
from mockllama.wire.untrusted_http import Target

__all__ = ["run", "Report", "ProbeResult", "Aspect", "Observation"]


def run(url: str, probes: Sequence[str] = ("all",), model: str | None = None, timeout: float = 60.0) -> Report:
    """Tell whether the server at `url` reports a reply cut off by its output limit as cut off,
    and a reply that finished as finished, on `/v1/responses` and `/v1/chat/completions`, as
    `mockllama check` does.

    Each Responses probe sends a recorded request that cannot finish within its limit to
    `/v1/responses`, and its twin to `/v1/chat/completions`; when the twin shows the cut
    (`finish_reason: "length"`, `usage.completion_tokens` at `max_tokens`, or a call whose
    arguments do not parse), each aspect of the Responses reply is judged on its own. Each chat
    probe sends the chat request alone and judges its `finish_reason` by what the reply shows. The
    same probe's request with room to finish is then judged the other way. Whatever the server
    does, `run` returns a report: an unreachable server, an HTTP error or a reply it cannot read
    gives the verdict `unknown`, with the reason.

    Args:
        url: The server's base URL, with or without `/v1`, e.g. `http://127.0.0.1:8080` or
            `http://127.0.0.1:18090/fixed`. A `user:password` in it is sent as Basic auth and a
            `?query` with every request; neither is ever printed.
        probes: Which probes to send: on `/v1/responses` `text` (`text-cut-8`), `tool`
            (`tool-cut-20`), `stream` (both, streamed), `reasoning` (`thinking-cut-12`, for a
            server that thinks); on `/v1/chat/completions` `chat-text`, `chat-tool`,
            `chat-stream`; `responses` or `chat` (that endpoint's part of `all`), or `all` (text,
            tool, stream and the three chat probes; the default, what a CI gate should run: a
            server may lie only in its streams, or only on one endpoint).
        model: The `model` to send, for a server that checks it; by default the recorded one.
        timeout: Seconds each request may take, from connecting to the reply's last byte.

    Returns:
        The report, with its `verdict` (`honest`, `dishonest`, `wrong` or `unknown`: the worse
            endpoint's), `exit_code` (0; 1 for dishonest or wrong; 2), `endpoints` (each endpoint's
            own report), `summary`, `lines()` as the command prints them and `to_dict()` as
            `--json` does.

    Raises:
        ValueError: A probe that does not exist.

    Example:
        Against a running `mockllama serve`: llama-server's bug on `/buggy`, the correction on
        `/fixed`.

        ```python
        import mockllama.check

        buggy = mockllama.check.run("http://127.0.0.1:18090/buggy", probes=["text", "stream"])
        print(buggy.verdict, buggy.exit_code)
        print([aspect.name for aspect in buggy.probes[0].failing("dishonest")])
        fixed = mockllama.check.run("http://127.0.0.1:18090/fixed", probes=["all"])
        print(fixed.verdict, fixed.exit_code)
        # dishonest 1
        # ['status', 'cut_item.status', 'completed_at']
        # honest 0
        ```
    """
    groups = {"all": ALL_PROBES, **GROUPS}
    unknown = set(probes) - set(PROBES) - set(groups)
    if unknown:
        choices = ", ".join([*PROBES, *GROUPS])
        raise ValueError(f"unknown probe {', '.join(sorted(unknown))}; use {choices} or all")
    wanted = {name for asked in probes for name in groups.get(asked, (asked,))}
    chosen = tuple(name for name in PROBES if name in wanted)  # in the order `all` sends them
    try:
        target = Target.parse(url)
    except ValueError as problem:
        return Report(
            scrub_text(url),
            [
                ProbeResult(probe, scenario, "unknown", str(problem))
                for probe in chosen
                for scenario in PROBES[probe].scenarios
            ],
        )
    results = [
        run_probe(target, probe, scenario, model, timeout) for probe in chosen for scenario in PROBES[probe].scenarios
    ]
    return Report(target.shown, results)
