"""Settling a disputed measurement: a stored verdict, its frame with the measurement
drawn on it, its numbers with their doubt, measured again, and exported as one
self-contained HTML page to share.
"""

from __future__ import annotations

import base64
import html
import json
import math

from .geometry import Pose, closest_distance
from .geometry.pose import MM_PER_IN
from .geometry.verdict import IN, OUT, TOO_CLOSE
from .record import pose_json, poses_from_json, replay, verdicts_in
from .rules.base import RulesError
from .store import GENESIS, GameStore, StoreError, canonical, event_hash, evidence_hash

_CAR = (40, 170, 255)
_ACTOR = (255, 120, 60)
_TARGET = (60, 60, 255)
_LINE = (255, 80, 220)
_ARC = (40, 200, 240)
_TEMPLATE = (120, 230, 120)


def timeline(store: GameStore) -> list[dict]:
    """Every event in a line: what happened, and whether something was measured."""
    names = {}
    out = []
    for e in store.events():
        b = e.body
        if e.kind == "setup":
            names = {c["id"]: c["name"] for c in b["cars"]}
            text = f"{b['rules']}: {', '.join(r.get('player', '?') for r in b['rosters'])}"
        elif e.kind == "resolution":
            o = b["outcome"] or {}
            d = b["detail"]
            if b["kind"] == "action":
                who = names.get(d.get("vehicle")) or next((str(v) for k, v in d.items()
                                                            if k not in ("act", "target") and isinstance(v, str)), "")
                target = f" → {names.get(d['target'], d['target'])}" if isinstance(d.get("target"), int) else ""
                text = f"{d.get('act')} {who}{target}: {o.get('result', '')}"
            elif b["kind"] == "round":
                text = f"round {o.get('round')}: {o.get('first')} first"
            else:
                text = "end of turn"
        elif e.kind == "undo":
            text = f"undo of resolution {b['undid']}"
        elif e.kind == "hold":
            text = f"{names.get(b['vehicle'], b['vehicle'])} held where its turn began"
        elif e.kind == "table":
            text = f"table file loaded mid-game: {'; '.join(b.get('changes', [])) or 'the same table'}"
        else:
            text = e.kind
        verdicts = verdicts_in(b.get("outcome") or {}) if e.kind == "resolution" else []
        out.append({"seq": e.seq, "t": e.t, "kind": e.kind, "text": text, "hash": e.hash,
                    "verdicts": [{"what": k, "outcome": v.get("outcome", "legal" if v.get("legal") else "not legal"),
                                  "margin_mm": v["margin_mm"], "sigma_mm": v.get("sigma_mm")} for k, v in verdicts],
                    "evidence": bool(b.get("evidence"))})
    return out


def _event(store: GameStore, seq: int):
    e = next((x for x in store.events() if x.seq == seq), None)
    if e is None:
        raise StoreError(f"{store.path}: there is no event {seq}")
    if e.kind != "resolution":
        raise StoreError(f"event {seq} is a {e.kind}, not a resolution: nothing was measured")
    return e


def not_in_frame(events, e, store: GameStore) -> dict[int, tuple[str, str]]:
    """The cars a resolution was measured with that its own frame does not show where the
    rules had them: for each, where it is drawn (a few words, for its label) and why, in a
    sentence. Held where its turn began, or where the game had it since an earlier event
    (each from where `pose_sources` traces the pose the record used), or not among the cars
    this frame was measured for."""
    items = e.body.get("evidence") or []
    if not items:
        return {}
    since = "the rules measure it from there, so this frame may show the car elsewhere"
    out = {}
    for m, src in pose_sources(store, events, e, _Frames(store, events)).items():
        if src.get("event") == e.seq and src.get("evidence") is not None:
            continue
        if src["kind"] == "hold":
            out[m] = ("where its turn began", f"where its turn began (held at event {src['event']}): {since}")
        elif src["kind"] == "placed":
            out[m] = (f"where event {src['event']} put it", f"{src['from']}: {since}")
        elif src.get("event") is not None:
            out[m] = ("where the game had it", f"{src['from']}: {since}")
        else:
            out[m] = ("not in this frame", f"{src['from']}: this frame was not measured for it")
    return out


#: The colour each role of an evidence shape is drawn in.
_ROLE_COLOUR = {"measure": _LINE, "arc": _ARC, "template": _TEMPLATE, "actor": _ACTOR, "target": _TARGET}


def drawing(store: GameStore, seq: int, replayed=None) -> tuple[list[dict], dict]:
    """What to draw for a resolution, in table mm: every car's footprint (the actor's and
    the target's marked), and what the rule system says its verdicts were measured on
    (the closest-point line, an arc's edge, a move template...)."""
    events = store.events()
    e = _event(store, seq)
    if replayed is None:
        replayed = replay(events, upto=seq)
    rules, state = replayed.rules, replayed.session.state
    poses = poses_from_json(e.body["poses"])
    rules.set_poses(state, poses)
    d = e.body["detail"]
    try:
        actor = rules.actor_marker(state, d) if e.body["kind"] == "action" else None
    except RulesError:
        actor = None
    target = d.get("target") if isinstance(d.get("target"), int) else None
    shapes, info = [], {"actor": actor, "target": target, "not_in_frame": []}
    feet = {}
    away = not_in_frame(events, e, store)
    for m, v in rules.pieces(state).items():
        if v.pose is None:
            continue
        fp = v.footprint()
        feet[m] = fp
        colour = _ACTOR if m == actor else _TARGET if m == target else _CAR
        where, why = away.get(m, (None, None))
        if why is not None:
            info["not_in_frame"].append(f"{v.name} is drawn dashed {why}")
        shapes.append({"kind": "polygon", "points": fp.corners.tolist(), "colour": colour, "dashed": why is not None,
                       "width": 3 if m in (actor, target) else 1, "label": v.name if where is None else f"{v.name}, {where}"})
    if actor in feet and target in feet:
        info["distance_mm"] = closest_distance(feet[actor], feet[target]).distance_mm
    for shape in rules.evidence(state, d, actor, target):
        role = shape.get("role", "measure")
        shapes.append({"kind": shape["kind"], "points": [list(map(float, p)) for p in shape["points"]],
                       "colour": _ROLE_COLOUR.get(role, _LINE), "width": 3 if role == "measure" else 2,
                       "label": shape.get("label", "")})
    return shapes, info


def drawn_frame(store: GameStore, seq: int, zoom: bool = False, drawn=None) -> bytes:
    """The resolution's camera frame (JPEG) with its measurement drawn on it; `zoom`:
    only the part around the cars it is about, enlarged. Measured from several cameras'
    frames: each drawn, named, one above the other."""
    import cv2
    import numpy as np

    from vision.evidence import decode_jpeg
    from vision.overlay import draw_table_shapes
    e = _event(store, seq)
    refs = e.body.get("evidence") or []
    if not refs:
        raise StoreError(f"event {seq}: no camera frame was stored with it (a scenario's record, or no camera)")
    # One camera: its frame. Several (each item names its camera): each camera's frame drawn
    # on its own table pose, one above the other at the first's width, each named.
    several = len(refs) > 1 and all(r.get("camera") for r in refs)
    shapes, info = drawn if drawn is not None else drawing(store, seq)
    drawn_frames = []
    for item in refs if several else refs[:1]:
        ev = store.evidence(item["ref"]["id"])
        image = decode_jpeg(ev["jpeg"])
        if image is None:
            raise StoreError(f"event {seq}: its stored frame cannot be read")
        out = draw_table_shapes(image, ev["table_pose"], shapes, focus=zoom)
        if several:
            scale = drawn_frames[0].shape[1] / out.shape[1] if drawn_frames else 1.0
            if scale != 1.0:
                out = cv2.resize(out, (drawn_frames[0].shape[1], max(int(round(out.shape[0] * scale)), 1)))
            cv2.putText(out, item["camera"], (12, 34), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 5, cv2.LINE_AA)
            cv2.putText(out, item["camera"], (12, 34), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 2, cv2.LINE_AA)
        drawn_frames.append(out)
    out = drawn_frames[0] if len(drawn_frames) == 1 else np.vstack(drawn_frames)
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 88])
    return data.tobytes()


def verdict_view(store: GameStore, seq: int) -> dict:
    """A resolution's verdicts with their numbers, and what it was measured from."""
    events = store.events()
    e = _event(store, seq)
    b = e.body
    rows = []
    for what, v in verdicts_in(b["outcome"] or {}):
        rows.append({"what": what, **v})
    names = {}
    for x in events:
        if x.seq < seq and x.kind == "setup":
            names = {c["id"]: c["name"] for c in x.body["cars"]}
    away = [f"The {names.get(m, f'car {m}')} is drawn dashed {why}." for m, (_, why) in not_in_frame(events, e, store).items()]
    return {"seq": seq, "hash": e.hash, "t": e.t, "detail": b["detail"], "result": (b["outcome"] or {}).get("result"),
            "events": (b["outcome"] or {}).get("events", []), "rolls": (b["outcome"] or {}).get("rolls", []),
            "dice": b["dice"], "verdicts": rows, "poses": b["poses"], "options": b["options"],
            "calibration": b.get("calibration"), "companion": b.get("companion"),
            "evidence": [r["ref"] for r in b.get("evidence", [])], "not_in_frame": away, "head": store.head()}


def _verdict_text(v: dict) -> str:
    if "outcome" in v and "value_mm" in v:
        word = {IN: "yes", OUT: "no", TOO_CLOSE: "too close to call"}.get(v["outcome"], v["outcome"])
        return (f"{word}: {v['value_mm']:.2f} mm ({v['value_mm'] / MM_PER_IN:.3f} in) ± {v['sigma_mm']:.2f} mm "
                f"against {v['threshold_mm']:.1f} mm; margin {v['margin_mm']:+.2f} mm")
    legal = v.get("legal")
    return (f"{'legal' if legal else 'not legal'}: margin {v['margin_mm']:+.2f} mm ± {v.get('sigma_mm', 0):.2f} mm"
            + (f" ({'; '.join(v['reasons'])})" if v.get("reasons") else ""))


def export_html(store: GameStore, seq: int) -> str:
    """One verdict as a page that needs nothing else: the frame with the measurement drawn,
    the numbers, what it was measured from, and the same measured again."""
    view = verdict_view(store, seq)
    again, replayed = _measured_again(store, seq)
    try:
        drawn = drawing(store, seq, replayed)        # the game played back once for all of it
        img = base64.b64encode(drawn_frame(store, seq, drawn=drawn)).decode()
        near = base64.b64encode(drawn_frame(store, seq, zoom=True, drawn=drawn)).decode()
        picture = (f'<img alt="The camera frame the verdict was measured from" src="data:image/jpeg;base64,{img}">'
                   f'<img alt="The same, close up" src="data:image/jpeg;base64,{near}">'
                   + "".join(f'<p class="not-in-frame">{html.escape(t)}</p>' for t in view["not_in_frame"]))
    except StoreError as exc:
        picture = f"<p>{html.escape(str(exc))}</p>"
    esc = html.escape
    rows = "".join(f"<tr><td>{esc(v['what'])}</td><td>{esc(_verdict_text(v))}</td>"
                   f"<td>{'same' if r['same'] else 'DIFFERENT: ' + esc(json.dumps(r['again']))}</td></tr>"
                   for v, r in zip(view["verdicts"], again["verdicts"]))
    poses = "".join(_pose_row(p) for p in again["poses"])
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Verdict: event {seq} of {esc(store.path.name)}</title>
<style>body{{font:15px/1.45 system-ui,sans-serif;max-width:1100px;margin:1rem auto;padding:0 1rem;color:#222}}
img{{max-width:100%;border:1px solid #ccc}}table{{border-collapse:collapse;margin:.5rem 0}}
td,th{{border-bottom:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}}
code{{font-size:.85em;word-break:break-all}}</style></head><body>
<h1>{esc(str(view['detail'].get('act', 'resolution')).title())}: {esc(str(view['result']))}</h1>
<p>Event {seq} of the game file <code>{esc(store.path.name)}</code>, recorded {esc(_when(view['t']))}.
What happened: {esc('; '.join(view['events']) or '(nothing further)')}.</p>
{picture}
<h2>Verdicts</h2><table><tr><th>what</th><th>measured</th><th>measured again from the stored corners</th></tr>{rows}</table>
<h2>Poses it was judged on</h2><p>x, y, heading, sigma (mm), sigma (deg); located again from the stored marker corners and table pose.</p>
<table><tr><th>car</th><th>pose</th><th>from</th><th>difference when located again</th></tr>{poses}</table>
<h2>Dice</h2><ul>{''.join(f"<li>{esc(d['asked'])}: {d['faces']} ({esc(d['source'])})</li>" for d in view['dice'])}</ul>
<h2>Record</h2><p>Rule options in force: <code>{esc(json.dumps(view['options']))}</code><br>
Calibration fingerprint <code>{esc(str(view['calibration']))}</code>; companion {esc(str(view['companion']))}.<br>
This event's hash <code>{view['hash']}</code>; the game file's head when exported <code>{esc(view['head'])}</code>.
<code>companion audit verify {esc(store.path.name)} --head {esc(view['head'])}</code> checks the whole file against it.</p>
</body></html>"""


def _measured_again(store: GameStore, seq: int):
    """`remeasure` of event `seq`, and the game played back to just before it (untouched
    by measuring again), from one playback."""
    import copy

    from .dice import FixedDice
    from .session import GameSession
    events = store.events()
    e = _event(store, seq)
    replayed = replay(events, upto=seq)
    trial = GameSession(replayed.rules, copy.deepcopy(replayed.session.state), FixedDice([]))
    return measure_again(store, events, e, trial), replayed


def _pose_row(p: dict) -> str:
    pose = ", ".join(f"{x:.3f}" for x in p["stored"])
    diff = "" if p.get("difference_mm") is None else f"{p['difference_mm']:.6f} mm"
    return f"<tr><td>{p['vehicle']}</td><td>{pose}</td><td>{html.escape(p['from'])}</td><td>{diff}</td></tr>"


def _when(t: float) -> str:
    import time
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))



# --- measuring again --------------------------------------------------------------------
#
# A resolution is judged on every car's pose (its `poses`). Each of those poses came from
# somewhere the record keeps: this resolution's own frame; the frame a car was held from
# where its turn began (a `hold`); an earlier resolution's frame, for a car the game held
# since; or the camera's reading when a car was put where the rules asked (a placement),
# or where a car stood as its move began: numbers the record keeps but no frame shows.
# `pose_sources` traces each pose to where it came from by the record's own numbers
# (a pose is carried from event to event unchanged, so it is found again exactly), and
# measuring again locates each car again from the frame that gave its pose, never from
# a frame that shows it elsewhere.

#: A pose located again from its stored frame within this of the recorded one is the
#: recorded pose (the same code on the same corners: only floating point may differ).
SAME_MM = 1e-6
SAME_DEG = 1e-6


def _same_pose(a, b) -> bool:
    return (abs(a[0] - b[0]) <= SAME_MM and abs(a[1] - b[1]) <= SAME_MM
            and abs((a[2] - b[2] + 180) % 360 - 180) <= SAME_DEG)


def _equal(a, b) -> bool:
    """The same recorded pose (carried unchanged from one event to the next)."""
    n = min(len(a), len(b))
    return n >= 3 and list(a[:n]) == list(b[:n])


class _Frames:
    """Stored frames located again, each once: its cars' poses by marker, with the table in
    force at the event that stored it; or why it cannot be (gone, or not the frame recorded)."""

    def __init__(self, store: GameStore | None, events) -> None:
        self.store = store
        self.events = events
        self.tables: dict = {}
        self.located: dict = {}

    def table(self, seq: int):
        """The table file in force at event `seq` (see record.table_at), once per table event."""
        key = max((x.seq for x in self.events if x.seq < seq and x.kind in ("setup", "table")
                   and x.body.get("table_file")), default=None)
        if key not in self.tables:
            from .record import table_at
            self.tables[key] = table_at(self.events, key + 1) if key is not None else None
        return self.tables[key]

    def poses(self, ref: dict, seq: int) -> tuple[dict, str | None]:
        """({marker: Pose}, None), or ({}, why the frame of event `seq` is not the one recorded)."""
        key = (ref.get("id"), seq)
        if key not in self.located:
            self.located[key] = self._locate(ref, seq)
        return self.located[key]

    def _locate(self, ref: dict, seq: int):
        from vision.evidence import relocate
        if self.store is None:
            return {}, "no game file to read it from"
        table = self.table(seq)
        if table is None:
            return {}, "the game file keeps no table to locate the cars with"
        try:
            ev = self.store.evidence(ref["id"])
        except (StoreError, KeyError, TypeError):
            return {}, f"its evidence {ref.get('id')} is not in the game file"
        if evidence_hash(ev["jpeg"], canonical(ev["detections"]), canonical(ev["table_pose"])) != ref.get("sha256"):
            return {}, f"its evidence {ev['id']} was changed or comes from another file"
        cars = relocate(ev["detections"], ev["table_pose"], table)
        return {m: Pose(c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg) for m, c in cars.items()}, None


def changed_events(events, upto: int) -> str | None:
    """The first event up to `upto` that is not as it was written (its hash, or the chain
    before it), in a sentence; None when all are. What `audit verify` checks, for these."""
    prev = GENESIS
    for x in events:
        if x.seq > upto:
            break
        if event_hash(prev, x.seq, x.t, x.kind, canonical(x.body)) != x.hash:
            return f"event {x.seq} ({x.kind}) is not the one recorded: changed after it was written"
        prev = x.hash
    return None


def pose_sources(store: GameStore | None, events, e, frames: _Frames | None = None) -> dict[int, dict]:
    """Where each pose resolution `e` was judged on came from, by marker: {"kind": "frame"
    (this event's frame), "hold" (the frame it was held from), "carried" (an earlier
    event's frame, the game holding the car since), "placed" or "record" (numbers the
    record keeps that no frame shows); "event", "evidence" (the frame's id), "location"
    (the pose located again from that frame), "from" (in words), "changed" (why the frame
    or the pose is not the one recorded, or None)}."""
    frames = frames or _Frames(store, events)
    before = [x for x in events if x.seq < e.seq]
    return {m: _source(before, e, m, p, frames) for m, p in sorted(((int(k), v) for k, v in
                                                                     (e.body.get("poses") or {}).items()))}


def _from_frame(x, ref, m: int, p, frames: _Frames, kind: str, words: str) -> dict:
    """Car `m` located again from the frame `ref` of event `x`; "changed" says why it is not
    the recorded pose `p` ("elsewhere": the frame shows the car somewhere else)."""
    found, problem = frames.poses(ref, x.seq)
    out = {"kind": kind, "event": x.seq, "evidence": ref.get("id"), "location": found.get(m), "from": words,
           "changed": None, "elsewhere": False}
    if problem is not None:
        out["changed"] = f"the frame of event {x.seq} is not the one recorded: {problem}"
    elif out["location"] is None:
        out["changed"] = f"the frame of event {x.seq} is not the one recorded: it does not show car {m}"
    elif p is not None and not _same_pose(pose_json(out["location"]), p):
        out["elsewhere"] = True
        out["changed"] = (f"the frame of event {x.seq} is not the one recorded: it shows car {m} "
                          f"{math.hypot(out['location'].x_mm - p[0], out['location'].y_mm - p[1]):.2f} mm "
                          f"from the pose the record gives it")
    return out


def _from_frames(x, items: list[dict], m: int, p, frames: _Frames, kind: str, words: str) -> dict:
    """Car `m` located again from the frames `items` ({"ref", "camera"}) of event `x`: one
    frame as `_from_frame`; several cameras' frames (a car two saw) each located again and
    combined as the live table combined them (vision.multicam.combine_frames, in the order
    stored: camera order)."""
    if len(items) == 1:
        return _from_frame(x, items[0]["ref"], m, p, frames, kind, words)
    from vision.multicam import combine_frames
    parts = [_from_frame(x, i["ref"], m, None, frames, kind, words) for i in items]
    out = {"kind": kind, "event": x.seq, "evidence": [i["ref"].get("id") for i in items], "location": None,
           "from": words, "changed": next((q["changed"] for q in parts if q["changed"]), None), "elsewhere": False}
    if out["changed"] is not None:
        return out
    combined, _ = combine_frames([{m: q["location"]} for q in parts])
    out["location"] = Pose(*combined[m])
    if not _same_pose(pose_json(out["location"]), p):
        out["elsewhere"] = True
        out["changed"] = (f"the frames of event {x.seq} are not the ones recorded: they show car {m} "
                          f"{math.hypot(out['location'].x_mm - p[0], out['location'].y_mm - p[1]):.2f} mm "
                          f"from the pose the record gives it")
    return out


def _frames_words(items: list[dict], seq: int) -> str:
    """"the frame of event 5"; with several cameras, which: "the frames of event 5 from
    camera 1 and camera 2"."""
    named = [i["camera"] for i in items if i.get("camera")]
    words = f"the frame{'s' if len(items) > 1 else ''} of event {seq}"
    return f"{words} from {' and '.join(named)}" if named else words


def _hold_items(evidence) -> list[dict]:
    """A hold's frames: one reference (one camera), or a list of {"ref", "cars", "camera"}."""
    return evidence if isinstance(evidence, list) else [{"ref": evidence}]


def _source(before, e, m: int, p, frames: _Frames) -> dict:
    said = (e.body.get("pose_from") or {}).get(str(m))
    items = [item for item in e.body.get("evidence") or [] if m in item.get("cars", [])]
    if items:
        # One frame (one camera, or an older record: the first that lists the car), or every
        # camera's frame its pose was combined from.
        items = items if all(i.get("camera") for i in items) else items[:1]
        found = _from_frames(e, items, m, p, frames, "frame", _frames_words(items, e.seq))
        # A record that says where each pose came from (`pose_from`) lists only the cars its
        # frame gave; an older one also listed a car judged from where its move began (its
        # frame shows it after the move): that pose is traced below, like a held car's.
        if not found["elsewhere"] or "pose_from" in e.body:
            return found
    for x in reversed(before):
        if x.kind == "hold" and x.body.get("vehicle") == m and _equal(x.body.get("pose") or [], p):
            if not x.body.get("evidence"):
                return {"kind": "record", "event": x.seq, "evidence": None, "location": None, "changed": None,
                        "from": f"held where its turn began (event {x.seq}); the camera did not see it then"}
            held = _hold_items(x.body["evidence"])
            return _from_frames(x, held, m, p, frames, "hold",
                                f"{_frames_words(held, x.seq)} (held where its turn began)")
        if x.kind != "resolution":
            continue
        for pl in reversed(x.body.get("placements") or []):
            if pl.get("marker") == m and pl.get("placed") and _equal(pl["placed"], p):
                return {"kind": "placed", "event": x.seq, "evidence": None, "location": None, "changed": None,
                        "from": f"where it was put at event {x.seq} ({pl.get('why', 'the rules moved it')}): "
                                f"the camera's reading once it stood there, no frame kept"}
        had = (x.body.get("poses") or {}).get(str(m))
        if had is not None and _equal(had, p):
            found = _source([y for y in before if y.seq < x.seq], x, m, p, frames)
            if found["kind"] == "frame":
                found = {**found, "kind": "carried",
                         "from": f"the frame{'s' if isinstance(found['evidence'], list) else ''} of event "
                                 f"{x.seq} (held there since)"}
            return found
    why = {"stood": "where it stood as its move began: the camera's reading then, no frame kept"}.get(
        said, "the record's own pose: no kept frame shows the car there (where it stood as its move began, "
              "or where the rules put it)")
    return {"kind": "record", "event": None, "evidence": None, "location": None, "changed": None, "from": why}


def remeasure(store: GameStore, seq: int) -> dict:
    """Measure a stored resolution again from its evidence: each car located again from the
    frame its recorded pose came from (see `pose_sources`), the rules' checks run again on
    them. A frame or a pose that is not the one recorded is said as such ("changed"), not
    as a difference of measurement."""
    from .record import table_at
    events = store.events()
    e = _event(store, seq)
    if table_at(events, seq) is None:
        raise StoreError(f"event {seq}: the game file does not keep the table (a scenario's record): "
                         f"nothing to locate the cars from")
    replayed = replay(events, upto=seq)
    return measure_again(store, events, e, replayed.session)


def measure_again(store: GameStore, events, e, session, frames: _Frames | None = None) -> dict:
    """`remeasure` on the game as it stood just before `e` (`session`, changed by it):
    {"event", "poses" (one row a car: stored, again, from, evidence, difference_mm),
    "verdicts" (stored, again, same), "changed" (sentences: frames or poses not as
    recorded), "same" (every verdict and pose exactly as recorded, nothing changed)}."""
    from .dice import DiceError
    from .record import resolve_again
    changed = []
    problem = changed_events(events, e.seq)
    if problem is not None:
        changed.append(problem)
    stored = poses_from_json(e.body["poses"])
    sources = pose_sources(store, events, e, frames)
    pose_rows, poses = [], dict(stored)
    for m, p in sorted(stored.items()):
        src = sources[m]
        row = {"vehicle": m, "stored": pose_json(p), "again": None, "from": src["from"], "event": src["event"],
               "evidence": src["evidence"], "difference_mm": None}
        q = src["location"]
        if q is not None:
            row["again"] = pose_json(q)
            row["difference_mm"] = max(abs(q.x_mm - p.x_mm), abs(q.y_mm - p.y_mm))
            row["heading_difference_deg"] = abs((q.heading_deg - p.heading_deg + 180) % 360 - 180)
            if src["changed"] is None:
                # Located again to the last bit the frame gives: the recorded pose, judged as stored.
                row["difference_mm"] = 0.0 if row["difference_mm"] <= SAME_MM else row["difference_mm"]
                q = p
            poses[m] = q
        if src["changed"] is not None:
            row["changed"] = src["changed"]
            if src["changed"] not in changed:
                changed.append(src["changed"])
        pose_rows.append(row)
    b = e.body
    try:
        out = resolve_again(session, b, poses)
    except (RulesError, DiceError) as exc:
        out = {"error": str(exc)}
    before = dict(verdicts_in(b["outcome"]))
    after = dict(verdicts_in(out or {}))
    rows = [{"what": k, "stored": v, "again": after.get(k), "same": after.get(k) == v} for k, v in before.items()]
    exact = all(r["same"] for r in rows) and all(not r["difference_mm"] for r in pose_rows)
    return {"event": e.seq, "poses": pose_rows, "verdicts": rows, "changed": changed,
            "same": exact and not changed}
