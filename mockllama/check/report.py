"""The report: each probe's result and the lines ``mockllama check`` prints for it, each endpoint's
verdict, the verdict over them all and its exit code, and the summary and JSON of ``--json``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from mockllama.check.verdicts import ASPECTS, NOT_APPLICABLE, WORDS, Aspect, _explained, below_the_limit
from mockllama.wire.routes import RESPONSES_PATH
from mockllama.wire.terminal import printable

# A report's verdict is its worst probe's, in this order: so with two endpoints, the worse of theirs.
VERDICTS = ("dishonest", "wrong", "unknown", "honest")
# A wrong field is a fault found, as a lie is, not a doubt: a CI gate that lets "can't tell" pass must still fail it.
EXIT_CODES = {"honest": 0, "dishonest": 1, "wrong": 1, "unknown": 2}


@dataclass
class Observation:
    """What one request of a probe got back: one line of the report.

    Attributes:
        endpoint: The path the request went to, `/v1/responses` or `/v1/chat/completions`.
        stream: Whether the request asked for a stream.
        limit: The request's output token limit.
        line: The line `mockllama check` prints for it.
        fields: What the reply said, by field: `status`, `finish_reason`, ...
    """

    endpoint: str
    stream: bool
    limit: int
    line: str
    fields: dict = field(default_factory=dict)


@dataclass
class ProbeResult:
    """One probe's request and its verdict, for one scenario.

    Attributes:
        probe: The probe: `text`, `tool`, `stream`, `reasoning`, `chat-text`, `chat-tool` or
            `chat-stream`.
        scenario: The recorded scenario whose requests it sent, e.g. `text-cut-8`.
        verdict: `honest`, `dishonest`, `wrong` or `unknown`.
        reason: Why, in a sentence.
        observations: What each request got back.
        aspects: Each aspect of the reply, judged (empty when the reply could not be read).
        variants: The known servers whose truncation signals the cut reply carries.
        usage_fallback: For a cut request, whether the usage (`usage.output_tokens`,
            `usage.completion_tokens`) reaches the limit: the one signal a client has left where
            the status or the finish_reason lies. None where there is none to judge.
        finished: For a cut request, the same probe's request with room to finish, judged the
            other way; None when the cut request got no answer to judge.
        endpoint: The endpoint whose reply is judged: `/v1/responses` or `/v1/chat/completions`.
    """

    probe: str
    scenario: str
    verdict: str
    reason: str
    observations: list[Observation] = field(default_factory=list)
    aspects: list[Aspect] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    usage_fallback: Aspect | None = None
    finished: ProbeResult | None = None
    endpoint: str = RESPONSES_PATH

    def failing(self, verdict: str) -> list[Aspect]:
        """The aspects with this verdict, e.g. `failing("dishonest")`."""
        return [aspect for aspect in self.aspects if aspect.verdict == verdict]

    def lines(self) -> list[str]:
        """The lines `mockllama check` prints for this probe."""
        fallback = self.usage_fallback
        return [
            *(obs.line for obs in self.observations),
            *(aspect.line for aspect in self.aspects if aspect.verdict != NOT_APPLICABLE),
            *([fallback.line] if fallback is not None and fallback.verdict == "gone" else []),
            *(f"  known variant: {variant}" for variant in self.variants),
            *(self.finished.lines() if self.finished is not None else []),
        ]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class Report:
    """What `run` found: one result for each probe and scenario, each endpoint's verdict, and the
    verdict over them all.

    Attributes:
        url: The server's URL as it may be printed: without its credentials or query.
        probes: Each probe's result, in the order they were sent.
    """

    url: str
    probes: list[ProbeResult]

    @property
    def finished(self) -> list[ProbeResult]:
        """The results of the requests with room to finish."""
        return [probe.finished for probe in self.probes if probe.finished is not None]

    @property
    def endpoints(self) -> dict[str, Report]:
        """Each endpoint probed, with its own report (its probes only): `/v1/responses`,
        `/v1/chat/completions`, in the order they were probed."""
        paths = dict.fromkeys(probe.endpoint for probe in self.probes)
        return {path: Report(self.url, [p for p in self.probes if p.endpoint == path]) for path in paths}

    @property
    def verdict(self) -> str:
        """The worst of the probes' verdicts, so the worse endpoint's: `dishonest`, then `wrong`,
        then `unknown`, else `honest`."""
        verdicts = {result.verdict for result in [*self.probes, *self.finished]}
        return next((verdict for verdict in VERDICTS if verdict in verdicts), "honest")

    @property
    def exit_code(self) -> int:
        """The exit code `mockllama check` gives the verdict: 0 honest, 1 dishonest or wrong, 2 unknown."""
        return EXIT_CODES[self.verdict]

    @property
    def variants(self) -> list[str]:
        """The known servers whose signals every judged cut reply of an endpoint carries (of those
        that carry any); failing that, those of any one of them (a server may fit its non-streamed
        replies and not its stream). Each endpoint's, the Responses one first."""
        if len(self.endpoints) > 1:
            return list(dict.fromkeys(v for report in self.endpoints.values() for v in report.variants))
        judged = [probe.variants for probe in self.probes if probe.aspects and probe.variants]
        every = [
            variant
            for variant in dict.fromkeys(v for found in judged for v in found)
            if all(variant in found for found in judged)
        ]
        return every or list(dict.fromkeys(variant for found in judged for variant in found))

    @property
    def _words(self):
        return WORDS[self.probes[0].endpoint if self.probes else RESPONSES_PATH]

    @staticmethod
    def _named(verdict: str, results: list[ProbeResult]) -> str:
        """The aspects with this verdict in any of ``results``, each named once, in the order they are judged."""
        names = {aspect.name for result in results for aspect in result.failing(verdict)}
        return ", ".join(label for name, label in ASPECTS.items() if name in names)

    @classmethod
    def _direction(cls, results: list[ProbeResult], said: str, says: str) -> str | None:
        """What is wrong with one direction's replies (cut, or finished), or None."""
        dishonest, wrong = cls._named("dishonest", results), cls._named("wrong", results)
        if dishonest:
            return f"{said} is reported as {says} by: {dishonest}" + (f"; also wrong: {wrong}" if wrong else "")
        if wrong:
            return f"{said} is reported wrongly: {_explained([a for r in results for a in r.failing('wrong')])}"
        return None

    def _fallback(self) -> str:
        words = self._words
        gone = [p for p in self.probes if p.usage_fallback is not None and p.usage_fallback.verdict == "gone"]
        below = [
            p.probe for p in gone if p.usage_fallback is not None and p.usage_fallback.why == below_the_limit(words)
        ]
        other = [
            p.probe for p in gone if p.usage_fallback is not None and p.usage_fallback.why != below_the_limit(words)
        ]
        said = [
            f"{what} ({', '.join(dict.fromkeys(probes))})"
            for what, probes in ((f"stays below {words.limit}", below), ("is missing or not a number", other))
            if probes
        ]
        if not said:
            return ""
        return (
            f" usage.{words.tokens} of a cut reply {', or '.join(said)}: "
            f"the one fallback signal a client has where the {words.signal} lies is gone."
        )

    @property
    def summary(self) -> str:
        """The verdict in a sentence (the failing aspects, or why it cannot tell), safe to print:
        what the server sent is shown with its escapes written out. With both endpoints probed, the
        verdict over both (the worse one's), then each endpoint's sentence."""
        endpoints = self.endpoints
        if len(endpoints) < 2:
            return printable(f"{self.url}: {self._said()}")
        return printable(" ".join([self._overall(), *self._each_endpoint()]))

    def _each_endpoint(self) -> list[str]:
        return [f"{path} {report.verdict}: {report._said()}" for path, report in self.endpoints.items()]

    def _overall(self) -> str:
        each = " and ".join(f"{path} {report.verdict}" for path, report in self.endpoints.items())
        return f"{self.url}: {self.verdict} (exit {self.exit_code}), the worse of {each}."

    def _said(self) -> str:
        """One endpoint's verdict in a sentence, without the URL."""
        verdict, words = self.verdict, self._words
        cut = f"a reply cut off at {words.limit}"
        if verdict == "honest":
            variants = self.variants  # a chat side may fit a server's with an honest finish_reason (LM Studio)
            return (
                f"{cut} is {words.honest}."
                + self._fallback()
                + (f" Known variant: {'; '.join(variants)}." if variants else "")
            )
        if verdict == "unknown":
            reasons = "; ".join(
                f"{result.probe}{'' if result is probe else ', with room to finish'}: {result.reason}"
                for probe in self.probes
                for result in (probe, probe.finished)
                if result is not None and result.verdict == "unknown"
            )
            return f"can't tell whether a cut-off reply is reported honestly: {reasons}." + self._fallback()
        parts = [
            part
            for part in (
                self._direction(self.probes, cut, "finished"),
                self._direction(self.finished, "a reply that finished inside its limit", "cut"),
            )
            if part is not None
        ]
        if not parts:  # a verdict no aspect explains: say the probes' own reasons
            parts = [f"{r.probe}: {r.reason}" for r in [*self.probes, *self.finished] if r.verdict == verdict]
        summary = ". ".join([parts[0], *map(_sentence, parts[1:])])
        variants = self.variants
        return summary + (f". Known variant: {'; '.join(variants)}." if variants else ".") + self._fallback()

    def lines(self) -> list[str]:
        """What `mockllama check` prints: each probe's lines, then the summary; with both endpoints
        probed, each endpoint's verdict on a line of its own, then the verdict over both. A reason
        quotes what a hostile server sent (a bad status line), so every line goes through
        ``printable``: no escape sequence reaches the terminal."""
        ending = [self.summary] if len(self.endpoints) < 2 else [*self._each_endpoint(), self._overall()]
        return [*(printable(line) for probe in self.probes for line in probe.lines()), *map(printable, ending)]

    def to_dict(self) -> dict:
        """What `mockllama check --json` prints: the verdict over both endpoints, and each one's."""
        return {
            "url": self.url,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "endpoints": {
                path: {
                    "verdict": report.verdict,
                    "exit_code": report.exit_code,
                    "summary": report.summary,
                    "variants": report.variants,
                }
                for path, report in self.endpoints.items()
            },
            "probes": [asdict(probe) for probe in self.probes],
        }
