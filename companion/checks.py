"""Which actions a car can take now, and with which choices: the rules' own answer.

For the selected car, every action its spec offers is tried the way `TableGame.preview`
tries one (issue 23, "one judgement"): the action filled from its spec (the camera
filling where cars stand and the ways they drove), played on a copy of the game with the
poses a resolution would judge from, up to its first request (dice, a choice, a
placement). Not one guessed body per action: every option of its required choice fields
(every gunner with every target, every warrior...), so an action is offered when any of
them would go ahead, and each option says whether it would and, if not, the rules' own
words. The page asks this once per car and game change instead of a preview per action.

Options are put in order with the other side's pieces first (the owner of a piece is
read only from what the contract says: `turn_info`'s play order and `round_orders`, else
a card's `owner` where it names a player of the game); the rules' own order otherwise.
The first option that would go ahead in that order is the form's default.

Pure of Flask; it uses the TableGame it is given (its lock held by the caller).
"""

from __future__ import annotations

import copy
import pickle
import weakref
from typing import Any

from .dice import DiceError
from .rules.actions import CAMERA_KINDS, ActionError, ActionSpec
from .rules.base import RulesError

#: At most this many dry runs for one action (gunners x targets, warriors x victims): a
#: larger product is cut, its untried options said to be "not tried" (never seen so far).
MAX_TRIES_PER_ACTION = 160

#: Answers kept per table game (the newest few game versions and camera poses).
CACHE_SIZE = 32
_CACHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: Options of each optional choice probed when an action is refused with its required choices alone.
PROBES_PER_OPTIONAL = 8

NOT_TRIED = "not tried: too many combinations of choices to try them all"
POINT_FIRST = "asked once the point is picked on the table"


def dry_run(rules, state, action: dict) -> dict:
    """The rules' verdict on `action` (filled by its spec) played on `state` up to its first
    request: `{"ok": True, "needs": words or None}` (it asks for dice, a choice or a piece
    put in place, or it finishes without), or `{"ok": False, "why": the refusal}`. `state`
    is played on: pass a copy. The same code that resolves it: `rules.resolve`."""
    return play_to_first_request(lambda: rules.resolve(state, action))


def play_to_first_request(make) -> dict:
    """A resolution `make()` played up to its first request: `dry_run`'s answer for it (the
    table's round and end of turn are judged so too)."""
    try:
        gen = make()
        request = next(gen)
    except StopIteration:
        return {"ok": True, "needs": None}
    except (RulesError, DiceError, KeyError, ValueError) as exc:
        return {"ok": False, "why": _say(exc)}
    try:
        gen.close()
    except Exception:        # noqa: BLE001 - a generator that fails on being closed: its verdict stands
        pass
    return {"ok": True, "needs": request.describe()}


def owners(rules, state) -> dict[int, str]:
    """Each piece's player, as far as the contract says it: the round's play order
    (`turn_info`), the cars each player orders (`round_orders`), else a card's `owner`
    where it names one of the game's players. Pieces none of them names are left out."""
    info = rules.turn_info(state) or {}
    players = [p for p in info.get("players") or [] if isinstance(p, str)]
    out: dict[int, str] = {}
    for row in info.get("order") or []:
        m, p = (row.get("vehicle"), row.get("player")) if isinstance(row, dict) else (None, None)
        if _marker(m) and isinstance(p, str):
            out.setdefault(m, p)
    for p, cars in (rules.round_orders(state) or {}).items():
        for c in cars or []:
            m = c.get("value") if isinstance(c, dict) else None
            if _marker(m) and isinstance(p, str):
                out.setdefault(m, p)
    for m in rules.pieces(state):
        if m in out:
            continue
        try:
            card = rules.card(state, m)
        except (NotImplementedError, RulesError, KeyError, ValueError):
            continue
        p = card.get("owner") if isinstance(card, dict) else None
        if isinstance(p, str) and p in players:
            out[m] = p
    return out


def option_order(rules, state, marker: int):
    """The order a car's options are tried and offered in, as a sort key (a stable sort: the
    rules' own order otherwise): another side's pieces first, then pieces of no known side
    and what is not a piece (a warrior, a gear box), its own side's last. The car's side is
    its owner's (`owners`), else the side whose turn it is (`turn_info`'s `up`)."""
    sides = owners(rules, state)
    me = sides.get(marker)
    if me is None:
        up = (rules.turn_info(state) or {}).get("up")
        me = up if isinstance(up, str) else None
    pieces = rules.pieces(state)

    def rank(value) -> int:
        if not _marker(value) or value not in pieces:
            return 1
        side = sides.get(value)
        if value == marker or (side is not None and side == me):
            return 2
        return 1 if side is None or me is None else 0
    return rank


def car_checks(game, marker) -> dict:
    """Every action the car's spec offers now, each with the rules' verdict for each option
    of its required choice fields (see the module's doc). The caller holds the game's lock.
    Asked again for the same game and the same camera poses (to the millimetre and degree),
    the answer already made is given: a page that reloads, or a second page, costs nothing."""
    session = game._need_game()
    v = game._vehicle(marker)
    key = (game.version, v.marker, _camera_key(game))
    cache = _CACHES.setdefault(game, {})
    if key in cache:
        return cache[key]
    out = _car_checks(game, session, v)
    if len(cache) >= CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = out
    return out


def _camera_key(game) -> tuple:
    """The camera's cars as the checks read them, to the millimetre and degree: a new key
    whenever a car moved, not for the camera's noise on a car standing still."""
    return tuple(sorted((m, round(c["x_mm"]), round(c["y_mm"]), round(c["heading_deg"]) % 360, bool(c["stale"]))
                        for m, c in game.live_poses().items()))


def _car_checks(game, session, v) -> dict:
    rules, state = session.rules, session.state
    try:
        specs = rules.action_specs(state, v.marker)
    except RulesError as exc:
        from .game import GameError
        raise GameError(str(exc)) from None
    rank = option_order(rules, state, v.marker)
    premeasure = rules.may_premeasure()
    now = _Copies(state)
    judged: dict[tuple, _Copies] = {}     # the cars it moves -> copies of the game set as a resolution judges

    def judging(moving: list[int]) -> "_Copies":
        key = tuple(moving)
        if key not in judged:
            base = now.fresh()
            game._judging_poses(rules, base, list(moving))   # as the resolution would be
            judged[key] = _Copies(base)
        return judged[key]

    def verdict(spec: ActionSpec, body: dict) -> dict:
        try:
            filled = spec.fill(body, game)
        except ActionError as exc:
            return {"ok": False, "why": str(exc)}
        if not premeasure:
            # Playing it up to its dice would tell what is in range: only the checks the rules
            # make before any dice, measuring nothing the book keeps unmeasured (as `preview`).
            said = rules.judge_action(judging(spec.camera_cars(filled)).fresh(), filled)
            if said is not None and not said.get("legal", True):
                return {"ok": False, "why": "; ".join(said.get("reasons") or ["the rules refuse it"])}
            return {"ok": True, "needs": None}
        return dry_run(rules, judging(spec.camera_cars(filled)).fresh(), filled)

    return {"marker": v.marker, "version": game.version, "premeasure": premeasure,
            "checks": [check_action(spec, rank, verdict) for spec in specs]}


def check_action(spec: ActionSpec, rank, verdict) -> dict:
    """One action's answer: `verdict(spec, body)` (a dry run) for every combination of the
    options of its required choice fields, in `rank` order (least first), stopping at
    MAX_TRIES_PER_ACTION; an option goes ahead when any combination with it does.

    An action refused with its required choices alone may need one of its optional choices
    made (a ram names its target or its terrain, neither required alone): each optional choice's
    first few options are probed, and the first choice that lets it go ahead is varied in full
    with the required ones for the answer (its options, its form's default); if none does, the
    first probe's reason is the action's (for a real target, not "ram what?")."""
    if any(f.kind == "table_point" and not f.optional for f in spec.fields):
        # Its verdict depends on the point the player picks: asked then, in the form.
        return {"act": spec.act, "ok": True, "why": None, "options": {}, "first_ok": None, "unchecked": POINT_FIRST}
    required = [f for f in spec.fields if f.kind == "choice" and not f.optional]
    out = _check_with(spec, rank, verdict, required)
    if out["ok"]:
        return out
    # A quick probe first (each optional choice's first few options, with the required choices'
    # first options): the full product is tried only for an optional choice that lets it go.
    body = _base(spec)
    for f in required:
        first = sorted(f.allowed(body), key=lambda c: rank(c["value"]))
        if not first:
            return out
        body[f.name] = first[0]["value"]
    why = None
    for f in (f for f in spec.fields if f.kind == "choice" and f.optional):
        for c in sorted(f.allowed(body), key=lambda c: rank(c["value"]))[:PROBES_PER_OPTIONAL]:
            got = verdict(spec, {"act": spec.act, **body, f.name: c["value"]})
            if got["ok"]:
                return _check_with(spec, rank, verdict, [*required, f])
            why = why or got["why"]
    if why:
        out["why"] = why          # the reason for a real target, not "ram what?"
    return out


def _base(spec: ActionSpec) -> dict:
    """The fields every try shares: required numbers at their least, required flags off."""
    base: dict[str, Any] = {}
    for f in spec.fields:
        if f.kind == "number" and not f.optional:
            base[f.name] = f.minimum if f.minimum is not None else (f.maximum if f.maximum is not None and f.maximum < 0
                                                                    else 0)
        elif f.kind == "flag" and not f.optional:
            base[f.name] = False
    return base


def _check_with(spec: ActionSpec, rank, verdict, varied: list) -> dict:
    """`check_action` over the options of the `varied` choice fields (the others left out)."""
    out: dict[str, Any] = {"act": spec.act, "ok": False, "why": None, "options": {}, "first_ok": None}
    base = _base(spec)
    # Each field's options, other side first, then the rules' own order (a stable sort).
    options: dict[str, dict] = {f.name: {} for f in varied}     # name -> {key: {"value", "ok", "why"}}
    tries = 0
    first: dict | None = None
    cut = False

    def combos(i: int, body: dict):
        if i == len(varied):
            yield dict(body)
            return
        f = varied[i]
        for c in sorted(f.allowed(body), key=lambda c: rank(c["value"])):
            yield from combos(i + 1, {**body, f.name: c["value"]})

    for body in combos(0, dict(base)):
        picked = [(f.name, body.get(f.name)) for f in varied]
        rows = []
        for name, value in picked:
            rows.append(options[name].setdefault(_key(value), {"value": value, "ok": False, "why": None}))
        if rows and all(r["ok"] for r in rows) and out["ok"]:
            continue                       # every option of it already known to go ahead
        if tries >= MAX_TRIES_PER_ACTION:
            cut = True
            continue
        tries += 1
        got = verdict(spec, {"act": spec.act, **body})
        if first is None:
            first = got
        if got["ok"]:
            if not out["ok"]:
                out["ok"], out["first_ok"] = True, {name: value for name, value in picked}
                if "needs" in got:
                    out["needs"] = got["needs"]
            for r in rows:
                r.update(ok=True, why=None)
        else:
            for r in rows:
                if not r["ok"] and r["why"] is None:
                    r["why"] = got["why"]
    for name, rows in options.items():
        for r in rows.values():
            if not r["ok"] and r["why"] is None:
                r["why"] = NOT_TRIED if cut else None
        out["options"][name] = list(rows.values())
    if first is None:
        # A required choice with no option open: the form itself cannot be filled.
        empty = next((f for f in varied if not options[f.name]), None)
        out["why"] = (f"{spec.act}: no choice open now for {empty.label or empty.name}" if empty is not None
                      else NOT_TRIED)
    elif not out["ok"]:
        out["why"] = first["why"]
    if cut:
        out["tries_cut"] = True
    return out


class _Copies:
    """Fresh copies of one game state, one per dry run: what deepcopy makes, made from the
    state's pickle (several times faster for a game's many small records); deepcopy itself
    for a state that cannot be pickled."""

    def __init__(self, state) -> None:
        self.state = state
        try:
            self.data: bytes | None = pickle.dumps(state, pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            self.data = None

    def fresh(self):
        return copy.deepcopy(self.state) if self.data is None else pickle.loads(self.data)


def _key(value) -> str:
    return f"{type(value).__name__}:{value!r}"


def _marker(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _say(exc: Exception) -> str:
    text = str(exc)
    return text[1:-1] if isinstance(exc, KeyError) and text.startswith("'") else text
