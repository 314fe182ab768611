"""Situations worked by hand from each book by a fresh reviewer who had not seen the code
(issue 25): every file's `about` gives the reasoning from the book, with its section, and every
one is played plainly with every expectation holding. They are kept here, not among the
examples, so the through-the-camera step (which plays every example) keeps to its time.

Where a review expectation was brought in line afterwards, it was by the book or by clearer
output the same review asked for:
- Stop The Truck r12: the bike's 1 off the shooting skill is now the roll's +1 modifier against
  the full skill (target 10, not 9); r15: the refused shot says the harpoonist is dead.
- Car Cult r02: `downshift_rolls` took the plain reading ("roll one D20 for each ST being removed
  that turn"); r12 (a Dangerous Driver's -2 is against enemy attacks, not its own side's mine)
  was the review's one failure, fixed.
- Shattered Highways r02, r08, r16, r18, r20: a Nudge's margin is now `sections_won` per target
  (`sections` names the faces that met, as for a Ram); r16 (a car touching the back edge is at
  it) and r19 (an unmanned drop slides past a car only touching alongside) were the review's two
  failures, fixed.
- Alpha Destructicus r02, r03, r04, r06, r08, r16, r17, r19, r26: a drive that runs into
  something now stops where it touches (it stopped up to 2 mm short, shaving up to 0.08 in off
  the distance the 6 in and 12 in ram modifiers read), so the distances and the jumps offered
  after them were re-derived from the geometry (r04's longest offer is 14.26 in, not 14.18).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.scenario import check_expectations, load_scenario, run_scenario

ROOT = Path(__file__).resolve().parent / "data" / "review"
REVIEW = sorted(ROOT.glob("*/*.json"))
#: How many situations each book's review worked (at least 12 each, as the issue asks).
WORKED = {"stop_the_truck": 22, "car_cult": 22, "wasteland_rally": 21, "alpha_destructicus": 26, "shattered_highways": 24}


def test_every_review_is_all_there():
    found = {d.name: len(list(d.glob("*.json"))) for d in ROOT.iterdir() if d.is_dir()}
    assert found == WORKED


@pytest.mark.parametrize("path", REVIEW, ids=[f"{p.parent.name}/{p.stem}" for p in REVIEW])
def test_review_situation_holds(path):
    data = load_scenario(path)
    assert data["rules"] == path.parent.name and data.get("expect") and data.get("about"), path.name
    wrong = check_expectations(data, run_scenario(data, str(path)))
    assert wrong == [], f"{path.name}: {wrong}"
