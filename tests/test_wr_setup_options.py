"""Issue 23, point 3: the Setup page refused Wasteland Rally's own defaults ("Finishing points:
3,2,1 is not a number": every option without choices was read as a number) and could not name
exploding terrain (the `exploding_terrain` option, a list of names, took only a number). The
options' box is read by setup.js's pure `companionOptionForm` (run here under node, as the page
runs it): every system's every option default is written in its box and read back to itself,
and the rules take it; a list's bad item is refused in players' words, by the page and again
by the rules (`RuleOption.check`)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from companion.geometry import Terrain
from companion.rules.base import RulesError, rule_system, rule_systems

SETUP_JS = Path(__file__).resolve().parents[1] / "companion" / "web" / "static" / "setup.js"
NODE = shutil.which("node") or shutil.which("nodejs")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: setup.js's option form is run by node")

#: For each case [option, text or null]: null writes the option's default in its box first.
SCRIPT = """
const form = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([o, typed]) => {
  const text = typed === null ? form.optionText(o, o.default) : typed;
  return { text, kind: form.optionKind(o), read: form.readOption(o, text) };
});
process.stdout.write(JSON.stringify(out));
"""


def run_form(cases: list[tuple[dict, str | None]]) -> list[dict]:
    done = subprocess.run([NODE, "-e", SCRIPT, str(SETUP_JS)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def page_options() -> list[tuple[str, dict]]:
    """Every option the Setup page draws as a box (those without choices), as the page gets it."""
    return [(cls.name, o) for cls in rule_systems() for o in json.loads(json.dumps(cls().describe()))["options"]
            if o["choices"] is None]


def test_every_systems_every_option_default_round_trips_through_the_setup_form():
    options = page_options()
    assert any(o["name"] == "finishing_points" for _, o in options)
    results = run_form([(o, None) for _, o in options])
    for (system, o), r in zip(options, results):
        assert "error" not in r["read"], (system, o["name"], r)
        # An empty number box leaves the default; anything else is sent, and is the default again.
        sent = r["read"].get("value", o["default"])
        assert sent == o["default"], (system, o["name"], r)
        rules = rule_system(system, {o["name"]: sent})
        assert json.loads(json.dumps(rules.option(o["name"]))) == o["default"]


def test_finishing_points_read_as_numbers_and_a_bad_one_is_refused_in_words():
    o = next(o for s, o in page_options() if s == "wasteland_rally" and o["name"] == "finishing_points")
    typed, bad = run_form([(o, "5, 3, 1, 1"), (o, "5, three")])
    assert typed["kind"] == "numbers" and typed["read"] == {"value": [5, 3, 1, 1]}
    assert bad["read"] == {"error": "three is not a number (give numbers separated by commas)"}
    assert rule_system("wasteland_rally", {"finishing_points": [5, 3, 1, 1]}).option("finishing_points") == [5, 3, 1, 1]


def test_setup_names_exploding_terrain():
    o = next(o for s, o in page_options() if s == "wasteland_rally" and o["name"] == "exploding_terrain")
    named, empty = run_form([(o, "Fuel dump, Scrap heap"), (o, "")])
    assert named["kind"] == "names" and named["read"] == {"value": ["Fuel dump", "Scrap heap"]}
    assert empty["read"] == {"value": []}
    rules = rule_system("wasteland_rally", {"exploding_terrain": named["read"]["value"]})
    dump = Terrain.from_points([(0, 0), (40, 0), (40, 40)], "blocking", "Fuel dump")
    assert rules.terrain_kind(dump) == "exploding"


@pytest.mark.parametrize("value, words", [
    ("3,2,1", "option finishing_points: '3,2,1' is not a list"),
    ([3, "2"], "option finishing_points: '2' is not a number"),
    ([3, True], "option finishing_points: True is not a number"),
])
def test_the_rules_refuse_a_list_option_that_is_not_one(value, words):
    with pytest.raises(RulesError, match=words):
        rule_system("wasteland_rally", {"finishing_points": value})
    with pytest.raises(RulesError, match="option exploding_terrain: 'Fuel dump' is not a list"):
        rule_system("wasteland_rally", {"exploding_terrain": "Fuel dump"})
