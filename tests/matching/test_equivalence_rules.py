"""Every equivalence is a rule with its own proof: a live case that llama-server generates the same
from (tests/live/test_live_equivalences.py runs them), which this rule is what makes one request.

The pairs themselves get one key, or two for the ``unlike`` ones, in tests/matching/test_semantic_matching.py."""

from __future__ import annotations

import pytest

from mockllama.matching.canonical import canonical_request, forms_of
from mockllama.matching.equivalences import RULES
from mockllama.matching.keys import exact_key
from mockllama.matching.rules import EVERY, ROUTES, Converted

NAMED = [pytest.param(rule, id=rule.matches[:60]) for rule in RULES]
CODED = [pytest.param(rule, id=rule.matches[:60]) for rule in RULES if not isinstance(rule, Converted)]


@pytest.mark.parametrize("rule", NAMED)
def test_every_rule_has_a_live_case(rule):
    assert rule.cases(), "a rule needs a live case: a pair llama-server is proven to generate the same from"


@pytest.mark.parametrize("rule", NAMED)
def test_a_rules_cases_are_sent_where_it_holds(rule):
    for case in [*rule.cases(), *rule.unlike()]:
        assert EVERY in rule.on or any(case.path in ROUTES[on] for on in rule.on), case.name


def test_case_names_are_one_each():
    names = [case.name for rule in RULES for case in [*rule.cases(), *rule.unlike()]]
    assert len(names) == len(set(names))


def _key(case, forms, second: bool) -> str:
    return exact_key(canonical_request(case.path, case.second if second else case.first, forms))


@pytest.mark.parametrize("rule", CODED)
def test_a_rules_own_code_is_what_its_cases_need(rule):
    """Without the rule, some case of its own gets two keys: its cases prove it, not another rule."""
    others = forms_of(other for other in RULES if other is not rule)
    assert any(_key(case, others, False) != _key(case, others, True) for case in rule.cases())


def _example_rule():
    """The rule docs/development.md shows ("An equivalence"), made in the namespace of the module
    a contributor adds it to."""
    from pathlib import Path

    import mockllama.matching.equivalences as equivalences
    from support.docs_pages import DOCS, blocks

    (shown,) = [
        block for block in blocks(DOCS / "development.md") if block.not_run and Path(__file__).name in block.not_run
    ]
    return eval(shown.source.strip().removesuffix(","), vars(equivalences))  # one expression: an item of RULES


def test_the_worked_example_of_the_docs_is_one_rule_that_is_all_its_case_needs():
    from mockllama.matching.rules import rules_table

    rule = _example_rule()
    with_it, without_it = forms_of([*RULES, rule]), forms_of(RULES)
    (case,) = rule.cases()
    assert _key(case, with_it, False) == _key(case, with_it, True)
    assert _key(case, without_it, False) != _key(case, without_it, True)
    added = set(rules_table([*RULES, rule]).splitlines()) - set(rules_table(RULES).splitlines())
    assert len(added) == 1 and "`system` null" in added.pop()
