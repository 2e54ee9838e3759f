"""#45: a row that starts to ask whether the data exclude its expected effect is a new question. Verdicts
stored before it was declared are judged again as they were made, and the report shows only the verdicts
that asked it."""

from __future__ import annotations

from typing import Any

from harness.analysis.claims_report import of_current_design
from harness.claims.model import find
from harness.claims.store import as_asked, asked_effects


def _record(claim_id: str, asked: bool) -> dict[str, Any]:
    claim = find(claim_id)
    comparison: dict[str, Any] = {"impl": "php", "outcome": "inconclusive"}
    if asked:
        comparison["tests_expected_effect"] = True
    return {"claim_id": claim_id, "design": claim.design, "size": "full", "comparisons": [comparison]}


def test_the_claim_that_asks_it_declares_it() -> None:
    assert any(c.tests_expected_effect for c in find("rubis-3-unsorted").expect)


def test_a_verdict_made_before_the_question_is_judged_as_it_was_made() -> None:
    claim = find("rubis-3-unsorted")
    before = as_asked(claim, _record(claim.id, asked=False))
    assert not any(c.tests_expected_effect for c in before.expect)
    assert [c.expected_text() for c in before.expect] == ["unsorted < indexed-sorted"]
    assert as_asked(claim, _record(claim.id, asked=True)) is claim


def test_a_claim_that_never_asked_it_is_judged_unchanged() -> None:
    claim = find("rubis-3-unsorted-sort-work")
    assert as_asked(claim, _record(claim.id, asked=False)) is claim


def test_the_report_shows_only_the_verdicts_that_asked_the_question_the_claim_asks_now() -> None:
    old, new = _record("rubis-3-unsorted", asked=False), _record("rubis-3-unsorted", asked=True)
    other = _record("rubis-3-unsorted-sort-work", asked=False)
    assert of_current_design(
        [find("rubis-3-unsorted"), find("rubis-3-unsorted-sort-work")], [old, new, other]
    ) == [
        new,
        other,
    ]
    assert asked_effects(new) and not asked_effects(old)
