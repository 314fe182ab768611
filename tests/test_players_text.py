"""Players' words: every sentence the five rule systems put in front of players (outcomes,
refusals, cards, targets, action forms, move judgements, options) as the worked games of
examples/scenarios play them, the whole games included, scanned for what issue 19 found
on the page: internal ids ("Furiosa:11:W1"), a signed margin said with a side ("-293.8 mm
outside"), inches and millimetres in one line, "+/-" beside "±", and "DESIGN.md", which
players do not have."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.dice import DiceError, FixedChoices, FixedDice
from companion.geometry import Pose
from companion.geometry.verdict import judge
from companion.rules.base import RulesError, rule_system
from companion.scene import parse_scene
from companion.scenario import play_step, run_scenario, start_game
from companion.session import GameSession

SCENARIOS = sorted((Path(__file__).resolve().parent.parent / "examples" / "scenarios").glob("*.json"))
SYSTEMS = ("shattered_highways", "car_cult", "stop_the_truck", "wasteland_rally", "alpha_destructicus")

#: An internal id: player:marker:seat (Shattered Highways' warriors), or any word:number:word.
INTERNAL_ID = re.compile(r"\b[A-Za-z]\w*:\d+:\w+\b")
#: A signed margin said with a side or a direction: the sign and the word say it twice.
SIGNED_MARGIN = re.compile(r"[-−]\s?\d+(?:\.\d+)?\s*(?:mm|in|\")\s+(?:\w+\s+){0,2}?"
                           r"(?:outside|inside|short|over|beyond|clear|back|closer)\b")
#: A length in inches, and one in millimetres ("bomber 1 in the arc" is not an inch).
INCHES = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:in|inch|inches)\b"
                    r"(?!\s+(?:sector|the|a|an|its|his|her|their|play|front|rear|arc|reach)\b)")
MILLIMETRES = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?mm\b")


#: A part's id glued to its number ("bomber1": players read "petrol bomber 1").
GLUED_ID = re.compile(r"\b[a-z]{3,}\d+\b")
#: A snake_case word ("tyre_right", "turn_over"): an id, unless it names an option (a sentence
#: may cite the option it reads, as the rules list shows them) or one of its values, or a pose's
#: field with its unit ("sigma_mm", in an option's note on the pose format).
SNAKE_WORD = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
OPTION_WORDS = {w for name in SYSTEMS for o in rule_system(name).options
                for w in (o.name, *(c for c in (o.choices or ()) if isinstance(c, str)))}


def faults(text: str) -> list[str]:
    """What is wrong with one line of players' text (empty: nothing)."""
    found = []
    if INTERNAL_ID.search(text):
        found.append("an internal id")
    if GLUED_ID.search(text) or any(w not in OPTION_WORDS and not w.endswith(("_mm", "_deg"))
                                    for w in SNAKE_WORD.findall(text)):
        found.append("an internal word (a part's or a phase's id)")
    if "in sector (" in text:
        found.append('the geometry\'s "in sector (any)"')
    if re.search(r"\btakes 99\b", text):
        found.append('"takes 99" for a crew table\'s Dead')
    if "+/-" in text:
        found.append('"+/-" (the page says "±")')
    if SIGNED_MARGIN.search(text):
        found.append("a signed margin said with a side")
    if INCHES.search(text) and MILLIMETRES.search(text):
        found.append("inches and millimetres in one line")
    if "DESIGN.md" in text:
        found.append("DESIGN.md, which players do not have")
    return found


def sentences(value, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string with a space in it (words, not ids or option values), with where it is."""
    if isinstance(value, str):
        if " " in value:
            yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from sentences(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from sentences(v, f"{path}.{i}")


def views(rules, state, focus: set | None = None) -> dict:
    """What the page reads of a game: each car's card; the overlays, targets and action forms
    of the cars in `focus` (all when None: the page reads them for the car selected, usually
    the one whose turn it is); the turn's sentence and the board."""
    out: dict = {"turn_text": rules.turn_text(state), "board": rules.board(state)}
    for m in rules.pieces(state):
        hooks = ("card", "overlays", "targets", "actions") if focus is None or m in focus else ("card",)
        for hook in hooks:
            try:
                got = getattr(rules, hook)(state, m)
            except (RulesError, NotImplementedError):
                continue
            out[f"{hook}[{m}]"] = [a if isinstance(a, dict) else a.to_json() for a in got] if hook == "actions" else got
    return out


def move_judgements(rules, state) -> dict:
    """The Move preview's judgement of each car put 1, 3 and 12 inches ahead and turned (most
    of them not legal, so the reasons are said)."""
    out = {}
    for m, piece in rules.pieces(state).items():
        pose = getattr(piece, "pose", None)
        if pose is None:
            continue
        for ahead_in, turn_deg in ((1, 0), (3, 30), (12, -60)):
            to = Pose(*pose.to_table(ahead_in * 25.4, 0.0), pose.heading_deg + turn_deg)
            try:
                out[f"{m}:{ahead_in}"] = rules.judge_move(copy.deepcopy(state), m, to)
            except RulesError as exc:
                out[f"{m}:{ahead_in}"] = {"error": str(exc)}
    return out


def play(path: Path) -> Iterator[tuple[str, object]]:
    """A worked scenario played step by step, as `scenario run` plays it; after each step,
    its outcome (or the rules' refusal) and everything the page would read."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rules = rule_system(data["rules"], data.get("options"))
    if data.get("expect_error"):
        yield "the refused setup", run_scenario(data, str(path))["error"]
        return
    state = start_game(rules, data, parse_scene(data, str(path)))      # its `state` block too
    session = GameSession(rules, state, FixedDice(data.get("dice", []), "scenario"),
                          FixedChoices(data.get("choices", []), "scenario"))
    yield "the rule system", rules.describe()
    yield "before the first step", views(rules, session.state)
    yield "moves before the first step", move_judgements(rules, session.state)
    for n, step in enumerate(data.get("steps", [])):
        try:
            out = play_step(session, step)
        except (RulesError, DiceError) as exc:
            out = {"error": str(exc)}
        yield f"step {n}", out
        named = {step.get(k) for k in ("vehicle", "target", "car") if isinstance(step.get(k), int)}
        yield f"after step {n}", views(rules, session.state, named | {rules.active_marker(session.state)})
    yield "log", [e.to_json() for e in session.log]


def system_of(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8"))["rules"]


def test_the_scan_finds_what_the_issue_found():
    """The patterns catch the issue's own examples (a scan that cannot fail checks nothing)
    and pass their fixed wording."""
    bad = ["Furiosa's cannon fodder Furiosa:11:W1", "-293.8 mm outside", "no, -195.1 mm inside its edge",
           "8.14 in ± 0.28 mm", "range 3.60 in +/- 0.01 against 6 in", "the arcs split (DESIGN.md)",
           # a hand-worked review of Stop The Truck found these
           "1d10 effect on bomber1 (At petrol bombers)", "1d10 effect on tyre_right (At tyres)",
           "turn 1, turn_over: the truck has gone 3 of 100 squares", "in: the truck's max in sector (any)",
           "petrol bomber 1 takes 99 (shot by the Harpoon Van)"]
    for text in bad:
        assert faults(text), text
    good = ["Furiosa's cannon fodder (the Buzzard's gunner 1)", "293.8 mm outside", "52 mm inside",
            "12 mm short", "8.14 in ± 0.01", "in: the truck's bomber 1 in the arc (any part), 30.0 mm inside ± 3.2 mm",
            "the Buggy is 2 in the lead", "1d10 effect on petrol bomber 1 (At petrol bombers)",
            "Joe wins: the others have no vehicle left in the fight (option game_end)",
            "petrol bomber 1 is killed (shot by the Harpoon Van)", "a 1d10 and a d20"]
    for text in good:
        assert not faults(text), text


def test_a_verdict_says_its_side_in_words_and_its_doubt_with_plus_minus():
    depth = judge("the Bike in the arc (any part)", -70.0, 0.0, 0.5, at_most=False)
    assert depth.describe("mm") == "out: the Bike in the arc (any part), 70.0 mm outside ± 0.5 mm"
    rng = judge("range of the Spiked Ram", 22.6, 2.0, 0.0)
    assert rng.describe() == "out: range of the Spiked Ram 0.89 in ± 0.00 against 0.08 in"
    assert judge("range", 152.0, 152.4, 0.01).describe() == "in: range 5.98 in ± 0.00 against 6 in"


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_sentence_the_worked_games_show_players_is_in_their_words(system):
    files = [p for p in SCENARIOS if system_of(p) == system]
    assert files, f"no worked scenarios of {system}"
    wrong: dict[tuple[str, ...], str] = {}
    seen = 0
    for path in files:
        for when, shown in play(path):
            for where, text in sentences(shown):
                seen += 1
                found = faults(text)
                if found:
                    # One example of each kind of wording is enough to say what to fix.
                    wrong.setdefault((*found, re.sub(r"\d+(\.\d+)?", "N", text)),
                                     f"{path.name}, {when}{where}: {', '.join(found)}: {text!r}")
    assert seen > 500, f"only {seen} sentences: the scan is not reading the games"
    assert not wrong, "\n".join(sorted(wrong.values()))


def test_a_warrior_is_named_in_words_and_still_chosen_by_id():
    """The labels players read name the fleet and where a cannon fodder started; the id
    stays the value a choice and an action carry (the game file and the API keep it)."""
    data = json.loads(next(p for p in SCENARIOS if p.name.startswith("30-")).read_text(encoding="utf-8"))
    rules = rule_system(data["rules"], data.get("options"))
    state = rules.new_game(data["rosters"], parse_scene(data, "30"))
    w = state.warriors["Max:10:P1"]
    assert w.label() == "Max's cannon fodder (the Interceptor's passenger 1)"
    assert state.warriors["Max:10:D"].label() == "Max's hero"
    labels = [w.label() for w in state.warriors.values()]
    assert len(set(labels)) == len(labels), "two warriors players cannot tell apart"
    card = rules.card(state, 10)
    assert [s["seat"] for s in card["seats"]] == ["D", "W1", "P1"]
    assert all(not INTERNAL_ID.search(s["label"]) for s in card["seats"])
