"""Does a server's /v1/responses report a reply cut off by max_output_tokens as cut off?

Each probe sends a request that cannot finish within its limit to ``/v1/responses``, and its twin
to ``/v1/chat/completions``, then compares. The requests are the bundled scenarios' own recorded
requests (``text-cut-8``, ``tool-cut-20``, from the recorder's catalogue), so mockllama answers
them and a real server gets exactly what was recorded. Use it from Python::

    report = mockllama.check.run("http://127.0.0.1:8080", probes=["text", "stream"])
    assert report.exit_code == 0, report.summary

When the twin says ``length``, each aspect of the cut reply is judged on its own (``ASPECTS``):
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
(exit 1 too: the server reports a cut, but not as the Responses API does, and a client that
reads that field misses it) when an aspect is wrong and none dishonest; ``honest`` (exit 0) when
every aspect that applies is; otherwise ``unknown`` (exit 2: can't tell), with the reason. Where
the signals of a probe's cut reply are those another server writes (``VARIANTS``), the verdict
names that server. Where ``usage.output_tokens`` of a cut reply stays below the limit, the report
says that the one fallback signal a client has when the status lies is gone.

The ``reasoning`` probe asks the forced-thinking question (``thinking-cut-12``, from the
forced-thinking catalogue): a reply cut while the model is still thinking. It can only judge a
server that answers with a reasoning item; a reply without one is ``unknown``, never ``honest``.

A reply is read as ``wire.untrusted_http`` reads any server it does not trust (``explain
--journal`` reads its journal so too): one deadline for the whole exchange, a cap on its size,
the URL's credentials sent and never printed; ``strict_json`` parses only what RFC 8259 accepts.
"""

from collections.abc import Sequence

from mockllama.check.probes import ALL_PROBES, PROBES, run_probe
from mockllama.check.report import Observation, ProbeResult, Report
from mockllama.check.verdicts import Aspect
from mockllama.wire.scrub import scrub_text
from mockllama.wire.untrusted_http import Target

__all__ = ["run", "Report", "ProbeResult", "Aspect", "Observation"]


def run(url: str, probes: Sequence[str] = ("all",), model: str | None = None, timeout: float = 60.0) -> Report:
    """Tell whether the server at `url` reports a reply cut off by `max_output_tokens` as cut off,
    and a reply that finished as finished, as `mockllama check` does.

    Each probe sends a recorded request that cannot finish within its limit to `/v1/responses`,
    and its twin to `/v1/chat/completions`; when the twin says `finish_reason: "length"`, each
    aspect of the Responses reply is judged on its own. The same probe's request with room to
    finish is then judged the other way. Whatever the server does, `run` returns a report: an
    unreachable server, an HTTP error or a reply it cannot read gives the verdict `unknown`, with
    the reason.

    Args:
        url: The server's base URL, with or without `/v1`, e.g. `http://127.0.0.1:8080` or
            `http://127.0.0.1:18090/fixed`. A `user:password` in it is sent as Basic auth and a
            `?query` with every request; neither is ever printed.
        probes: Which probes to send: `text` (`text-cut-8`), `tool` (`tool-cut-20`), `stream`
            (both, streamed), `reasoning` (`thinking-cut-12`, for a server that thinks), or
            `all` (text, tool and stream; the default, what a CI gate should run: a server
            may lie only in its streams, and only `stream` sends one).
        model: The `model` to send, for a server that checks it; by default the recorded one.
        timeout: Seconds each request may take, from connecting to the reply's last byte.

    Returns:
        The report, with its `verdict` (`honest`, `dishonest`, `wrong` or `unknown`), `exit_code`
            (0; 1 for dishonest or wrong; 2), `summary`, `lines()` as the command prints them
            and `to_dict()` as `--json` does.

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
    chosen = ALL_PROBES if "all" in probes else tuple(probes)
    unknown = set(chosen) - set(PROBES)
    if unknown:
        raise ValueError(f"unknown probe {', '.join(sorted(unknown))}; use {', '.join(PROBES)} or all")
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
