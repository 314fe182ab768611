"""Dice: what a resolution asks for, what comes back, and where it comes from.

A resolution asks for dice with a `DiceRequest` ("1d6 skill for the driver of
the Interceptor") and waits; any `DiceSource` answers it with a `DiceThrow`:
a virtual roll (seeded, recorded), dice typed in on the page, a scenario's
fixed dice, or (later) the electronic tray.  A throw that does not fit the
request (a d6 showing 7, two dice for one) is refused, never used.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

_DIE = re.compile(r"^d(\d+)$")


class DiceError(ValueError):
    """Dice that do not answer the request."""


class ChoiceRefused(DiceError):
    """A choice refused: not the asking player's to make, or not one of its options. The
    resolution still waits for it (a player chooses again)."""


def sides(die: str) -> int:
    m = _DIE.match(die)
    if not m or int(m.group(1)) < 2:
        raise DiceError(f"'{die}' is not a die (d6, d10, ...)")
    return int(m.group(1))


@dataclass(frozen=True)
class Modifier:
    value: int
    reason: str

    def __str__(self) -> str:
        return f"{self.value:+d} ({self.reason})"


@dataclass(frozen=True)
class DiceRequest:
    """Dice a resolution waits for: which dice, for what, for whom."""

    dice: tuple[str, ...]
    purpose: str
    who: str = ""

    def describe(self) -> str:
        counts: dict[str, int] = {}
        for d in self.dice:
            counts[d] = counts.get(d, 0) + 1
        dice = " + ".join(f"{n}{d}" for d, n in counts.items())
        return f"{dice} {self.purpose}" + (f" for {self.who}" if self.who else "")


@dataclass(frozen=True)
class DiceThrow:
    """Faces that fell, in the request's order, and where they came from."""

    faces: tuple[int, ...]
    dice: tuple[str, ...]
    source: str = "virtual"
    detail: dict = field(default_factory=dict)

    def check(self, request: DiceRequest) -> "DiceThrow":
        if tuple(self.dice) != tuple(request.dice):
            raise DiceError(f"the throw is {', '.join(self.dice)} but {request.describe()} was asked for")
        for die, face in zip(self.dice, self.faces):
            if not 1 <= face <= sides(die):
                raise DiceError(f"a {die} cannot show {face}")
        if len(self.faces) != len(self.dice):
            raise DiceError(f"{len(self.faces)} faces for {len(self.dice)} dice")
        return self

    def to_json(self) -> dict:
        return {"dice": list(self.dice), "faces": list(self.faces), "source": self.source, **self.detail}


@dataclass(frozen=True)
class Roll:
    """A die roll for a check: its natural face, the modifiers with their reasons, the total."""

    request: DiceRequest
    face: int
    modifiers: tuple[Modifier, ...] = ()

    @property
    def total(self) -> int:
        return self.face + sum(m.value for m in self.modifiers)

    @property
    def natural_max(self) -> bool:
        return self.face == sides(self.request.dice[0])

    def describe(self) -> str:
        mods = " ".join(str(m) for m in self.modifiers)
        return f"{self.request.describe()}: {self.face}" + (f" {mods} = {self.total}" if mods else "")

    def to_json(self) -> dict:
        return {"asked": self.request.describe(), "face": self.face, "total": self.total,
                "modifiers": [{"value": m.value, "reason": m.reason} for m in self.modifiers]}


@dataclass(frozen=True)
class ChoiceRequest:
    """A choice a resolution waits for that the book gives to one player (the defender
    picks who takes bonus damage, the owner where damage goes): who must choose, what
    about, and the options, each `{"value", "label"}`. The resolution receives the value."""

    player: str
    purpose: str
    options: tuple[dict, ...]
    who: str = ""               # the car or warrior it is about, in words

    def describe(self) -> str:
        return f"{self.player} to choose {self.purpose}" + (f" for {self.who}" if self.who else "")

    def check(self, player, value):
        """The option `player` chose; a DiceError (the session's refusal) when it is not
        theirs to make or not an option."""
        if player != self.player:
            raise ChoiceRefused(f"this choice is {self.player}'s to make ({self.purpose}), not {player!r}'s")
        for o in self.options:
            if type(o["value"]) is type(value) and o["value"] == value:
                return o["value"]
        for o in self.options:
            if isinstance(value, str) and not isinstance(o["value"], (bool, dict, list)) and str(o["value"]) == value:
                return o["value"]
            # A number is the same number whether written 13 or 13.0 (JSON does not keep the difference).
            if _number(value) and _number(o["value"]) and o["value"] == value:
                return o["value"]
        raise ChoiceRefused(f"{value!r} is not an option for {self.purpose} "
                        f"(options: {', '.join(str(o['value']) for o in self.options)})")

    def to_json(self) -> dict:
        return {"player": self.player, "purpose": self.purpose, "options": list(self.options), "who": self.who,
                "asked": self.describe()}


@dataclass(frozen=True)
class PlacementRequest:
    """A piece the rules moved (lost control, bumped, pushed, spun, rolled over, halted at
    contact, thrown), waiting to be put where they say: which piece, where it must stand
    (table mm and degrees), how close is close enough, and why, in players' words. The
    resolution receives the pose it was confirmed at (the camera's, on a table), and from
    then on the piece stands there in the game. `may_stay`: the book lets the players leave
    it where it stands instead (the resolution then receives where it stands).

    `chosen`: the book gives a player the choice of where (a Nudge's push "within N
    sections"): the piece goes anywhere the players put it, confirmed by them, not by the
    camera seeing it at one pose; `area` (polygon rings, table mm) is drawn as where it may
    go, the pose is where it stands now (leaving it there is a choice too), and the rules
    judge where it was put when they receive it (asking again, with the reason, if not
    there)."""

    marker: int
    name: str
    x_mm: float
    y_mm: float
    heading_deg: float
    why: str
    tolerance_mm: float = 10.0
    tolerance_deg: float = 6.0
    may_stay: bool = False
    chosen: bool = False
    area: tuple = ()

    @property
    def who(self) -> str:
        """The piece in a sentence: "the Buggy", and "The Truck" as it is named."""
        return self.name if self.name.lower().startswith("the ") else f"the {self.name}"

    def describe(self) -> str:
        if self.chosen:
            return f"put {self.who} where you choose: {self.why}" if self.why else f"put {self.who} where you choose"
        return f"put {self.who} here: {self.why}" if self.why else f"put {self.who} here"

    def off_by(self, x_mm: float, y_mm: float, heading_deg: float) -> tuple[float, float]:
        """How far a pose stands from where the piece must go: (mm, degrees)."""
        import math
        return (math.hypot(x_mm - self.x_mm, y_mm - self.y_mm),
                abs((heading_deg - self.heading_deg + 180.0) % 360.0 - 180.0))

    def fits(self, x_mm: float, y_mm: float, heading_deg: float) -> bool:
        """Is a piece standing at that pose close enough to where it must go?"""
        d_mm, d_deg = self.off_by(x_mm, y_mm, heading_deg)
        return d_mm <= self.tolerance_mm and d_deg <= self.tolerance_deg

    def to_json(self) -> dict:
        return {"marker": self.marker, "name": self.name,
                "to": [round(self.x_mm, 2), round(self.y_mm, 2), round(self.heading_deg, 2)],
                "why": self.why, "tolerance_mm": self.tolerance_mm, "tolerance_deg": self.tolerance_deg,
                "may_stay": self.may_stay, "asked": self.describe(),
                **({"chosen": True, "area": self.area} if self.chosen else {})}


@dataclass(frozen=True)
class Placed:
    """What a placement request receives: the pose the piece was put at ([x_mm, y_mm,
    heading_deg, sigma_mm, sigma_deg]) and how it was confirmed: "camera" (seen there),
    "stayed" (the players left it where it stands, as the book lets them), "chosen" (put where
    a player chose, as the book lets them choose), "as asked" (no
    camera: a scenario's hand puts it exactly there), "record" (played back)."""

    pose: tuple
    how: str


class FixedPlacements:
    """Placements made already, in order (a record's confirmed poses), or, with none given
    and `as_asked`, every placement taken exactly where the rules ask (a scenario played
    without a camera: the hand puts each piece where it is told)."""

    def __init__(self, placed: list | tuple = (), source: str = "fixed", as_asked: bool = False) -> None:
        self.placed = list(placed)
        self.used = 0
        self.source = source
        self.as_asked = as_asked

    def take(self, request: "PlacementRequest") -> tuple[list[float], str] | None:
        """(pose as [x_mm, y_mm, heading_deg, sigma_mm, sigma_deg], how) for the request, or
        None when none are left (the table must see the piece put there)."""
        if self.used < len(self.placed):
            p = self.placed[self.used]
            self.used += 1
            if isinstance(p, dict):
                if p.get("marker") not in (None, request.marker):
                    raise DiceError(f"the record placed marker {p.get('marker')} where the rules ask for "
                                    f"the {request.name} (marker {request.marker})")
                return list(p["placed"]), p.get("how", "placed")
            return list(p), "placed"
        if self.as_asked:
            return [request.x_mm, request.y_mm, request.heading_deg, 0.0, 0.0], "as asked"
        return None


class FixedChoices:
    """Choices made already, in order (a scenario file's `choices`, a record's): each is
    `{"player", "value"}`, or a bare value taken as the asked player's."""

    def __init__(self, choices: list | tuple = (), source: str = "fixed") -> None:
        self.choices = list(choices)
        self.used = 0
        self.source = source

    @property
    def remaining(self) -> int:
        return len(self.choices) - self.used

    def take(self, request: ChoiceRequest) -> tuple[str, object] | None:
        """(player, value) for the request, or None when none are left (the player is asked)."""
        if self.remaining <= 0:
            return None
        c = self.choices[self.used]
        self.used += 1
        if isinstance(c, dict) and "value" in c:
            return c.get("player", request.player), c["value"]
        return request.player, c


class DiceSource:
    """Answers dice requests."""

    name = "dice"

    def throw(self, request: DiceRequest) -> DiceThrow:  # pragma: no cover - interface
        raise NotImplementedError


class VirtualDice(DiceSource):
    """A seeded virtual roll; the seed and the count are recorded with each throw."""

    name = "virtual"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2 ** 31)
        self._rng = random.Random(self.seed)
        self.count = 0

    def throw(self, request: DiceRequest) -> DiceThrow:
        self.count += 1
        faces = tuple(self._rng.randint(1, sides(d)) for d in request.dice)
        return DiceThrow(faces, request.dice, "virtual", {"seed": self.seed, "n": self.count})


class FixedDice(DiceSource):
    """Dice that fell, given in order (a scenario file's, typed-in dice): each
    request takes as many faces as it has dice."""

    name = "fixed"

    def __init__(self, faces: list[int] | tuple[int, ...], source: str = "fixed") -> None:
        self.faces = list(faces)
        self.used = 0
        self.source = source

    @property
    def remaining(self) -> int:
        return len(self.faces) - self.used

    def throw(self, request: DiceRequest) -> DiceThrow:
        n = len(request.dice)
        if self.remaining < n:
            raise DiceError(f"no dice left for {request.describe()} (after {self.used} faces)")
        faces = tuple(self.faces[self.used:self.used + n])
        self.used += n
        return DiceThrow(faces, request.dice, self.source, {"index": self.used - n}).check(request)


class WaitingDiceSource(DiceSource):
    """A source that answers later (the tray, dice typed on the page): the session
    hands it the request and a `deliver` function, and carries on when it is called."""

    def throw(self, request: DiceRequest) -> DiceThrow | None:
        return None

    def request(self, request: DiceRequest, deliver) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def cancel(self) -> None:
        pass


class TypedDice(WaitingDiceSource):
    """Dice rolled by hand and typed in on the page."""

    name = "typed"

    def __init__(self) -> None:
        self.pending: tuple[DiceRequest, object] | None = None

    def request(self, request: DiceRequest, deliver) -> None:
        self.pending = (request, deliver)

    def submit(self, faces: list[int] | tuple[int, ...]):
        """The faces typed in, in the request's order; refused if they cannot answer it."""
        if self.pending is None:
            raise DiceError("no dice are awaited")
        request, deliver = self.pending
        throw = DiceThrow(tuple(int(f) for f in faces), request.dice, "typed").check(request)
        self.pending = None
        return deliver(throw)

    def cancel(self) -> None:
        self.pending = None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
