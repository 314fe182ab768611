"""Actions as typed specs: who may take one, the fields it needs, each of a declared kind.

A rule system says which actions a car's side can take now as `ActionSpec`s. The page
draws a form for any spec from these alone, the table fills the fields the camera
answers (where a car stands, the way it drove), and `ActionSpec.fill` checks what a
player sent against the spec in one place: nothing outside a rule system knows which
system declared it.

Field kinds (`FIELD_KINDS`):

- `fixed`: the spec carries the value itself (the car the action is taken with).
- `choice`: one of `choices` (each `{"value", "label"}`), or, with `depends_on`, one of
  `choices_by[str(the value of that other field)]`.
- `number`: a number, whole unless `step` allows fractions, from `minimum` to `maximum`.
- `flag`: yes or no.
- `table_point`: a point [x_mm, y_mm] the player picks on the table.
- `table_pose`: filled by the table: where car `of` stands now, from the camera
  ([x_mm, y_mm, heading_deg, sigma_mm, sigma_deg]); `of` is a marker, or the name of
  an earlier field whose value is a marker (`"target"`).
- `table_path`: filled by the table: the way car `of` went since its activation began (or
  since its last move this activation), each pose with its doubt, ending where it stands.

Actor kinds (`ActionSpec.actor`) are whatever the book has: `vehicle`, `warrior`,
`freak`, `crew`, `player`...; the field named after the actor kind holds who acts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

FIELD_KINDS = {
    "fixed": "a value the action carries itself",
    "choice": "one of the listed choices",
    "number": "a number in a range",
    "flag": "yes or no",
    "table_point": "a point the player picks on the table",
    "table_pose": "where a car stands now, read by the camera",
    "table_path": "the way a car drove since its activation began, read by the camera",
}

#: Kinds the table fills from the camera; a player never sends them.
CAMERA_KINDS = ("table_pose", "table_path")


class ActionError(ValueError):
    """An action that does not fit its spec; the message says which field and why."""


class NotOffered(ActionError):
    """A choice or a field the spec does not offer now (a target or gear box the book rules
    out, a bonus already spent): the rules can say why."""


class TableReader(Protocol):
    """What the table answers when an action's fields are filled (the table game, or a
    scenario's table)."""

    def pose_of(self, marker: int) -> list[float]:
        """Where car `marker` stands now: [x_mm, y_mm, heading_deg, sigma_mm, sigma_deg]."""

    def path_of(self, marker: int) -> list[list[float]]:
        """The way car `marker` went since its activation began (or since its last move in
        this activation), ending where it stands now."""

    def point(self, value: Any, what: str) -> tuple[float, float]:
        """A point on this table, or an ActionError naming `what` is wrong with it."""


@dataclass(frozen=True)
class Field:
    """One field of an action: its name, kind and what the page shows for it."""

    name: str
    kind: str
    label: str = ""
    value: Any = None                               # fixed
    choices: tuple[dict, ...] | None = None         # choice
    depends_on: str | None = None                   # choice: choices_by[str(that field's value)]
    choices_by: dict[str, tuple[dict, ...]] | None = None
    of: int | str | None = None                     # table_pose, table_path
    minimum: float | None = None                    # number
    maximum: float | None = None
    step: float = 1.0
    optional: bool = False
    about: str = ""

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ActionError(f"field '{self.name}': '{self.kind}' is not a field kind "
                              f"({', '.join(FIELD_KINDS)})")
        if self.kind == "choice" and self.choices is None and self.choices_by is None:
            raise ActionError(f"field '{self.name}': a choice needs choices or choices_by")
        if self.kind in CAMERA_KINDS and self.of is None:
            raise ActionError(f"field '{self.name}': a {self.kind} needs 'of' (whose pose or path)")
        if self.choices_by is not None and self.depends_on is None:
            raise ActionError(f"field '{self.name}': choices_by needs depends_on")

    @classmethod
    def from_json(cls, data: dict) -> "Field":
        if not isinstance(data, dict) or "name" not in data or "kind" not in data:
            raise ActionError(f"a field is an object with a name and a kind, not {data!r}")
        known = {f for f in cls.__dataclass_fields__}
        extra = set(data) - known
        if extra:
            raise ActionError(f"field '{data['name']}': unknown keys {', '.join(sorted(extra))}")
        d = dict(data)
        if d.get("choices") is not None:
            d["choices"] = tuple(d["choices"])
        if d.get("choices_by") is not None:
            d["choices_by"] = {str(k): tuple(v) for k, v in d["choices_by"].items()}
        return cls(**d)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "label": self.label}
        if self.kind == "fixed":
            out["value"] = self.value
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.choices_by is not None:
            out["choices_by"] = {k: list(v) for k, v in self.choices_by.items()}
        if self.depends_on is not None:
            out["depends_on"] = self.depends_on
        if self.of is not None:
            out["of"] = self.of
        if self.kind == "number":
            out.update(minimum=self.minimum, maximum=self.maximum, step=self.step)
        if self.optional:
            out["optional"] = True
        if self.about:
            out["about"] = self.about
        return out

    def allowed(self, filled: dict) -> tuple[dict, ...]:
        """The choices open for this field, given the fields filled before it."""
        if self.choices_by is not None:
            return tuple(self.choices_by.get(str(filled.get(self.depends_on)), ()))
        return tuple(self.choices or ())


@dataclass(frozen=True)
class ActionSpec:
    """An action a side can take now: its name (`act`), who takes it (`actor`, the kind of
    actor the book has), its fields, the rule it comes from and a line on how it is taken
    at the table. `extra` holds anything more a system wants the page to show."""

    act: str
    label: str
    fields: tuple[Field, ...] = ()
    actor: str = "vehicle"
    rule: str = ""
    about: str = ""
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict) -> "ActionSpec":
        if not isinstance(data, dict) or not isinstance(data.get("act"), str):
            raise ActionError(f"an action spec is an object with 'act', not {data!r}")
        fields = tuple(Field.from_json(f) for f in data.get("fields", ()))
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ActionError(f"{data['act']}: two fields share a name ({', '.join(names)})")
        known = {"act", "label", "fields", "actor", "rule", "about"}
        return cls(data["act"], data.get("label", data["act"]), fields, data.get("actor", "vehicle"),
                   data.get("rule", ""), data.get("about", ""),
                   {k: v for k, v in data.items() if k not in known})

    def to_json(self) -> dict:
        return {**self.extra, "act": self.act, "label": self.label, "actor": self.actor, "rule": self.rule,
                "about": self.about, "fields": [f.to_json() for f in self.fields]}

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def fill(self, sent: dict, table: TableReader) -> dict:
        """The action as the rules take it: the player's fields checked against the spec,
        the camera's filled in. Raises ActionError naming the field and why."""
        if not isinstance(sent, dict):
            raise ActionError("an action is an object with 'act' and its fields")
        unknown = sorted(k for k in sent if k != "act" and self.field(k) is None)
        if unknown:
            raise NotOffered(f"{self.act}: no field {', '.join(repr(k) for k in unknown)} "
                              f"(its fields: {', '.join(f.name for f in self.fields) or 'none'})")
        filled: dict[str, Any] = {"act": self.act}
        for f in self.fields:
            value = sent.get(f.name)
            if f.kind == "fixed":
                if value is not None and value != f.value and str(value) != str(f.value):
                    raise ActionError(f"{self.act}: {f.name} is {f.value!r} here, not {value!r}")
                filled[f.name] = f.value
                continue
            if f.kind in CAMERA_KINDS:
                if value is not None:
                    raise ActionError(f"{self.act}: {f.label or f.name} is read from the table by the camera, "
                                      f"not sent")
                marker = self.marker_of(f, filled)
                if marker is None:
                    if f.optional:
                        continue
                    raise ActionError(f"{self.act}: choose {f.of} first")
                filled[f.name] = table.pose_of(marker) if f.kind == "table_pose" else table.path_of(marker)
                continue
            if value is None:
                if f.optional:
                    continue
                verb = {"choice": "choose", "table_point": "pick on the table", "number": "give",
                        "flag": "say yes or no to"}[f.kind]
                raise ActionError(f"{self.act}: {verb} {f.label or f.name} ('{f.name}')")
            filled[f.name] = self._check(f, value, filled, table)
        return filled

    def camera_values(self, sent: dict, table: TableReader) -> dict:
        """What the camera would fill for this action as sent (its poses and paths), where it
        can: for trying an action the spec does not take as it stands, to hear why not."""
        out = {}
        for f in self.fields:
            if f.kind in CAMERA_KINDS and f.name not in sent:
                marker = self.marker_of(f, sent)
                if marker is None:
                    continue
                try:
                    out[f.name] = table.pose_of(marker) if f.kind == "table_pose" else table.path_of(marker)
                except ActionError:
                    continue
        return out

    def camera_cars(self, filled: dict) -> list[int]:
        """The cars whose pose or path the camera gave this action (they moved for it)."""
        out = []
        for f in self.fields:
            if f.kind in CAMERA_KINDS and f.name in filled:
                m = self.marker_of(f, filled)
                if m is not None and m not in out:
                    out.append(m)
        return out

    def marker_of(self, f: Field, filled: dict) -> int | None:
        """The car a pose or path field is of: its marker, or the value of the field it names."""
        if isinstance(f.of, int) and not isinstance(f.of, bool):
            return f.of
        v = filled.get(f.of) if isinstance(f.of, str) else None
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def _check(self, f: Field, value: Any, filled: dict, table: TableReader) -> Any:
        what = f"{self.act}: {f.label or f.name}"
        if f.kind == "table_point":
            return list(table.point(value, what))
        if f.kind == "flag":
            if not isinstance(value, bool):
                raise ActionError(f"{what} is yes or no (true or false), not {value!r}")
            return value
        if f.kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ActionError(f"{what} must be a number, not {value!r}")
            if f.step >= 1 and value != int(value):
                raise ActionError(f"{what} must be a whole number, not {value!r}")
            if f.minimum is not None and value < f.minimum or f.maximum is not None and value > f.maximum:
                raise ActionError(f"{what} must be from {f.minimum:g} to {f.maximum:g}, not {value!r}")
            return int(value) if f.step >= 1 else float(value)
        allowed = [c["value"] for c in f.allowed(filled)]
        for a in allowed:            # exact first: 1 and True, "1" and 1 are not the same choice
            if type(a) is type(value) and a == value:
                return a
        for a in allowed:            # a form sends every value as text
            if isinstance(value, str) and not isinstance(a, (bool, dict, list)) and str(a) == value:
                return a
        raise NotOffered(f"{self.act}: {value!r} is not a choice for {f.label or f.name} (choices: "
                          f"{', '.join(str(a) for a in allowed) or 'none now'})")


def as_spec(spec: ActionSpec | dict) -> ActionSpec:
    """A system's spec, typed (systems may still build theirs as JSON; it is checked here)."""
    return spec if isinstance(spec, ActionSpec) else ActionSpec.from_json(spec)


# --- what an action may carry, whoever sends it ------------------------------------------------
#
# Every action a system resolves declares its fields and their shapes (`@action(name,
# fields=...)` in `base.py`). Whatever sends an action (the page, through its spec's `fill`; a
# scenario step; a record replayed) is checked here before the rules see it: a field the action
# does not have is refused by name (a misspelt `at_2` would otherwise be ignored and the action
# resolved as if it were not there), and a field of the wrong shape is refused saying what it
# should be, never a TypeError deep in the rules.

#: Shapes a field may take. A field's shape is one of these names, several joined by "|"
#: (`"marker|text"`: a car or a warrior's name), `OneOf(...)` values, or `ListOf(shape)`.
SHAPES = {
    "marker": "a car's marker (a whole number)",
    "whole": "a whole number",
    "number": "a number",
    "flag": "true or false",
    "text": "a text",
    "point": "a point [x_mm, y_mm]",
    "pose": "a pose [x_mm, y_mm, heading_deg] (with sigma_mm, sigma_deg after them, if known)",
    "path": "a path: a list of poses [x_mm, y_mm, heading_deg]",
    "object": "an object",
    "any": "anything",
}


@dataclass(frozen=True)
class OneOf:
    """A field that takes one of these values (texts, numbers)."""

    values: tuple

    def __init__(self, *values) -> None:
        object.__setattr__(self, "values", tuple(values))

    def describe(self) -> str:
        return "one of " + ", ".join(str(v) for v in self.values)


@dataclass(frozen=True)
class ListOf:
    """A field that takes a list, each item of `shape`."""

    shape: Any

    def describe(self) -> str:
        return f"a list, each {describe_shape(self.shape)}"


def describe_shape(shape) -> str:
    if isinstance(shape, (OneOf, ListOf)):
        return shape.describe()
    return " or ".join(SHAPES[s] for s in shape.split("|"))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_pose(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and 3 <= len(v) <= 5 and all(_is_number(x) for x in v)


def fits(shape, value: Any) -> bool:
    """Whether `value` has `shape`."""
    if isinstance(shape, OneOf):
        return any(type(v) is type(value) and v == value for v in shape.values) or (
            _is_number(value) and any(_is_number(v) and v == value for v in shape.values))
    if isinstance(shape, ListOf):
        return isinstance(value, (list, tuple)) and all(fits(shape.shape, v) for v in value)
    for s in shape.split("|"):
        if (s == "any"
                or s == "marker" and isinstance(value, int) and not isinstance(value, bool)
                or s == "whole" and _is_number(value) and value == int(value)
                or s == "number" and _is_number(value)
                or s == "flag" and isinstance(value, bool)
                or s == "text" and isinstance(value, str)
                or s == "point" and isinstance(value, (list, tuple)) and len(value) == 2
                and all(_is_number(x) for x in value)
                or s == "pose" and _is_pose(value)
                or s == "path" and isinstance(value, (list, tuple)) and all(_is_pose(p) for p in value)
                or s == "object" and isinstance(value, dict)):
            return True
    return False


def check_shape(shape) -> None:
    """A declared shape that is not one (a typo in a system's declaration) is the system's bug."""
    if isinstance(shape, OneOf):
        return
    if isinstance(shape, ListOf):
        check_shape(shape.shape)
        return
    if not isinstance(shape, str) or any(s not in SHAPES for s in shape.split("|")):
        raise ActionError(f"{shape!r} is not a field shape ({', '.join(SHAPES)}, OneOf, ListOf)")


def check_fields(act: str, declared: dict[str, Any], action: dict, *, ignore: tuple[str, ...] = ()) -> None:
    """`action` as its declaration has it: every field known, each of its shape (None is a
    field not given). Raises ActionError naming every unknown field, or the first of the wrong
    shape and what it should be."""
    unknown = sorted(k for k in action if k != "act" and k not in declared and k not in ignore)
    if unknown:
        raise ActionError(f"{act}: no field {', '.join(repr(k) for k in unknown)} "
                          f"(its fields: {', '.join(declared) or 'none'})")
    for name, shape in declared.items():
        value = action.get(name)
        if value is not None and not fits(shape, value):
            raise ActionError(f"{act}: {name} must be {describe_shape(shape)}, not {json_text(value)}")


def json_text(value: Any) -> str:
    import json
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
