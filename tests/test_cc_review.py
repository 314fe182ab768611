"""The second hand-worked review of Car Cult: 22 situations worked from the draft
(car-cult-2016-draft.txt) by a reviewer who had not seen the code, each file's `about` giving
the reasoning. Every one is played plainly and every expectation must hold. r02 was reworked by
the book when `downshift_rolls` took the plain reading ("roll one D20 for each ST being removed
that turn": every ST, the first too, when more than one comes off); r12 (a Dangerous Driver's -2
is against enemy attacks, not its own side's mine) is the failure the review found."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.scenario import check_expectations, load_scenario, run_scenario

REVIEW = sorted((Path(__file__).resolve().parent / "data" / "review" / "car_cult").glob("*.json"))


def test_the_review_is_all_there():
    assert len(REVIEW) == 22, [p.name for p in REVIEW]


@pytest.mark.parametrize("path", REVIEW, ids=[p.stem for p in REVIEW])
def test_review_situation_holds(path):
    data = load_scenario(path)
    assert data["rules"] == "car_cult" and data.get("expect"), path.name
    outcome = run_scenario(data, str(path))
    wrong = check_expectations(data, outcome)
    assert wrong == [], f"{path.name}: {wrong}"
