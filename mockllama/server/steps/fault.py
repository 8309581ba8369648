"""``--fault SCENARIO FAULT`` and the ``X-Mockllama-Fault`` header: the outgoing step that applies
a request's fault (``server.faults``) to what goes out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mockllama.server.faults import FaultPlan, apply_fault
from mockllama.server.option_fields import option
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps.registry import register
from mockllama.server.steps.step import Answer, Step


@dataclass(frozen=True)
class FaultOptions:
    faults: tuple[tuple[str, str], ...] = field(  # (scenario or "*", fault); a {scenario: fault} dict is taken too
        default=(),
        metadata=option(
            "--fault",
            "Apply FAULT to every reply of SCENARIO ('*': every scenario); repeatable. X-Mockllama-Fault "
            "overrides it per request. The faults: the list in `mockllama serve --help`, or docs/faults.md.",
            metavar="SCENARIO FAULT",
            repeatable=True,
            nargs=2,
        ),
    )

    def __post_init__(self) -> None:
        """As pairs, whatever sequence or mapping was given; what they name is checked against the
        recordings when the app is made (``FaultPlan.build``)."""
        faults = self.faults.items() if isinstance(self.faults, Mapping) else self.faults
        object.__setattr__(self, "faults", tuple((str(scenario), str(fault)) for scenario, fault in faults))


@register
class FaultStep(Step):
    """The outgoing step that applies an answer's fault, if it has one: after the delay, before the
    pacing, which a faulted reply does without (its fault says when it goes out)."""

    place = 20
    options = FaultOptions

    def __init__(self, plan: FaultPlan):
        self.plan = plan

    @classmethod
    def of(cls, settings, faults: FaultPlan) -> FaultStep:
        return cls(faults)

    def applies(self, answer: Answer) -> bool:
        return answer.fault is not None

    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        assert answer.fault is not None  # applies() said so
        apply_fault(answer.fault, outgoing, self.plan)
