"""The docs' parts that are made from the code's declarations (the options tables, the behaviours'
list) are what the declarations make now: see tests/support/generated_docs.py."""

from __future__ import annotations

import pytest

from support.generated_docs import GENERATED, ROOT


@pytest.mark.parametrize("part", GENERATED, ids=lambda part: f"{part.page.name}:{part.name}")
def test_the_page_holds_what_the_declarations_make(part):
    fresh = part.make()
    assert part.on_page() == fresh, (
        f"{part.page.relative_to(ROOT)} is out of date: run python tests/support/generated_docs.py "
        f"(or paste this between its {part.name} markers):\n{fresh}"
    )
