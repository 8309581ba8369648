"""Every outgoing step, found: each step's module registers it (``register``), ``STEPS`` holds them
in their declared order, the options they declare are assembled into one class that
``server.options.ReplayOptions`` is made of, and ``made_steps`` makes them for an app.

A new step is one module in this package that calls ``register``: the package imports every
module in it (``mockllama/server/steps/__init__.py``), so nothing else needs to name it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from mockllama.server.steps.step import Step

if TYPE_CHECKING:
    from mockllama.server.faults import FaultPlan

# Every registered step, in the order they run (by ``place``); changed in place only, so every
# importer sees each one.
STEPS: list[type[Step]] = []
# Whether the steps' options have been assembled (``assembled_options``): a step registered later
# could not add its own.
_assembled = False


def _declared_names(options: type) -> list[str]:
    if not (dataclasses.is_dataclass(options) and options.__dataclass_params__.frozen):  # type: ignore[attr-defined]
        raise ValueError(f"{options.__name__}: a step's options are a frozen dataclass of option(...) fields")
    names = [f.name for f in dataclasses.fields(options)]
    if missing := [f.name for f in dataclasses.fields(options) if "option" not in f.metadata]:
        raise ValueError(f"{options.__name__}: every field is an option(...), not {', '.join(missing)}")
    return names


def register(step: type[Step]) -> type[Step]:
    """Add ``step`` to the steps, at its ``place``; a class decorator. Two steps at one place, or
    declaring one option, are an error, and so is a step with options registered after the
    options were assembled (it belongs in a module of this package)."""
    if not isinstance(getattr(step, "place", None), int):
        raise ValueError(f"{step.__name__} says no place among the steps: give it `place = N` (a whole number)")
    if clash := next((other for other in STEPS if other.place == step.place), None):
        raise ValueError(f"{step.__name__} and {clash.__name__} both take place {step.place}: choose another")
    if step.options is not None:
        if _assembled:
            raise ValueError(
                f"{step.__name__} declares options after they were assembled: a step with options is a module "
                "of mockllama.server.steps, found when the package is imported"
            )
        taken = {name for other in STEPS if other.options is not None for name in _declared_names(other.options)}
        if twice := taken.intersection(_declared_names(step.options)):
            raise ValueError(f"{step.__name__} declares options another step declares: {', '.join(sorted(twice))}")
    STEPS.append(step)
    STEPS.sort(key=lambda each: each.place)
    return step


def unregister(step: type[Step]) -> None:
    """Remove a step (for tests that register one for a while)."""
    STEPS.remove(step)


def assembled_options(beside: type) -> Any:
    """One frozen dataclass whose fields are every step's options, in the steps' order, to go
    ``beside`` the options class of the server's own, none of whose names they may take. Typed
    Any: what fields it has is known only once the steps are found."""
    global _assembled
    _assembled = True
    declared = [step.options for step in STEPS if step.options is not None]
    own = {f.name for f in dataclasses.fields(beside)}
    if taken := [(options.__name__, name) for options in declared for name in _declared_names(options) if name in own]:
        raise ValueError(f"{taken[0][0]} declares {taken[0][1]!r}, an option of the server's own: name it otherwise")
    # a dataclass takes its bases' fields from the last base to the first
    return dataclasses.make_dataclass("StepOptions", [], bases=tuple(reversed(declared)), frozen=True)


def check_options(options: Any) -> None:
    """Each step's own check of its options (its options class's ``__post_init__``), on ``options``,
    which holds them all."""
    for step in STEPS:
        own_check = vars(step.options).get("__post_init__") if step.options is not None else None
        if own_check is not None:
            own_check(options)


def made_steps(settings: Any, faults: FaultPlan) -> tuple[Step, ...]:
    """Every step, as the server with ``settings`` runs it, in order: made once per app."""
    return tuple(step.of(settings, faults) for step in STEPS)
