"""Settling a disputed measurement: a stored verdict, its frame with the measurement
drawn on it, its numbers with their doubt, measured again, and exported as one
self-contained HTML page to share.
"""

from __future__ import annotations

import base64
import html
import json

from .geometry import closest_distance
from .geometry.pose import MM_PER_IN
from .geometry.verdict import IN, OUT, TOO_CLOSE
from .record import held_pose_source, poses_from_json, remeasure, replay, verdicts_in
from .rules.base import RulesError
from .store import GameStore, StoreError

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


def not_in_frame(events, e) -> dict[int, tuple[str, str]]:
    """The cars a resolution was measured with that its own frame does not show where the
    rules had them: for each, where it is drawn (a few words, for its label) and why, in a
    sentence. Held where its turn began, or where a move of it earlier in its activation put
    it (each measured from that event's frame), or not among the cars this frame was measured for."""
    items = e.body.get("evidence") or []
    if not items:
        return {}
    seen = {m for item in items for m in item.get("cars", [])}
    since = "the rules measure it from there, so this frame may show the car elsewhere"
    out = {}
    for m in map(int, e.body.get("poses", {})):
        if m in seen:
            continue
        found = held_pose_source(events, e, m)
        if found is None:
            out[m] = ("not in this frame", "where the game last had it: this frame was not measured for it")
        elif found[0].kind == "hold":
            out[m] = ("where its turn began", f"where its turn began (held at event {found[0].seq}): {since}")
        else:
            out[m] = ("where its move put it",
                      f"where its move of event {found[0].seq} put it (held there for the rest of its turn): {since}")
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
    away = not_in_frame(events, e)
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
    only the part around the cars it is about, enlarged."""
    import cv2

    from vision.evidence import decode_jpeg
    from vision.overlay import draw_table_shapes
    e = _event(store, seq)
    refs = e.body.get("evidence") or []
    if not refs:
        raise StoreError(f"event {seq}: no camera frame was stored with it (a scenario's record, or no camera)")
    ev = store.evidence(refs[0]["ref"]["id"])
    image = decode_jpeg(ev["jpeg"])
    if image is None:
        raise StoreError(f"event {seq}: its stored frame cannot be read")
    shapes, info = drawn if drawn is not None else drawing(store, seq)
    out = draw_table_shapes(image, ev["table_pose"], shapes, focus=zoom)
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
    away = [f"The {names.get(m, f'car {m}')} is drawn dashed {why}." for m, (_, why) in not_in_frame(events, e).items()]
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
    from .record import _remeasure, table_at
    from .session import GameSession
    events = store.events()
    e = _event(store, seq)
    table = table_at(events, seq)
    if table is None:
        return remeasure(store, seq), None
    replayed = replay(events, upto=seq)
    trial = GameSession(replayed.rules, copy.deepcopy(replayed.session.state), FixedDice([]))
    return _remeasure(store, events, e, table, trial), replayed


def _pose_row(p: dict) -> str:
    pose = ", ".join(f"{x:.3f}" for x in p["stored"])
    diff = "" if p.get("difference_mm") is None else f"{p['difference_mm']:.6f} mm"
    return f"<tr><td>{p['vehicle']}</td><td>{pose}</td><td>{html.escape(p['from'])}</td><td>{diff}</td></tr>"


def _when(t: float) -> str:
    import time
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))

