"""The outgoing step that applies a request's fault (``server.faults``) to what goes out."""

from __future__ import annotations

from mockllama.server.faults import FaultPlan, apply_fault
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps import Answer, Step


class FaultStep(Step):
    """The outgoing step that applies an answer's fault, if it has one."""

    def __init__(self, plan: FaultPlan):
        self.plan = plan

    def applies(self, answer: Answer) -> bool:
        return answer.fault is not None

    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        assert answer.fault is not None  # applies() said so
        apply_fault(answer.fault, outgoing, self.plan)
