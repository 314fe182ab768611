"""`companion audit`: check a game file, list its events, measure a verdict again, export one.

    companion audit verify GAME.db [--head N:HASH]   exit 0: untouched and it resumes; 1: the first event that fails
    companion audit show GAME.db                     one JSON line per event
    companion audit remeasure GAME.db EVENT          the verdicts of a resolution, measured again
                                                     (exit 0 exact, 1 measured differently, 2 frame or pose changed)
    companion audit export GAME.db EVENT --out F.html   one verdict as a self-contained page
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import CommandError


def register(sub) -> None:
    p = sub.add_parser("audit", help="check a game file's record, and settle a disputed measurement",
                       description="A game file (serve --game, scenario run --game) records every event in a "
                                   "hash chain, with the camera frames its verdicts were measured from.")
    kinds = p.add_subparsers(dest="audit_command", metavar="WHAT", required=True)
    v = kinds.add_parser("verify", help="check the chain and play the game back: exit 0 when untouched and it "
                                        "resumes, 1 naming the first event that fails")
    v.add_argument("game", metavar="GAME.db")
    v.add_argument("--head", metavar="N:HASH",
                   help="a head shown during the game (the audit page's, an export's): event N must still have "
                        "that hash, so nothing up to it was changed or cut off")
    v.set_defaults(func=cmd_verify)
    s = kinds.add_parser("show", help="every event as a JSON line")
    s.add_argument("game", metavar="GAME.db")
    s.set_defaults(func=cmd_show)
    r = kinds.add_parser("remeasure", help="measure a resolution's verdicts again from the frames its poses came from: "
                                           "exit 0 exactly as recorded, 1 measured differently, 2 a frame or pose is "
                                           "not the one recorded")
    r.add_argument("game", metavar="GAME.db")
    r.add_argument("event", type=int, metavar="EVENT")
    r.set_defaults(func=cmd_remeasure)
    e = kinds.add_parser("export", help="write one verdict as a self-contained HTML page to share")
    e.add_argument("game", metavar="GAME.db")
    e.add_argument("event", type=int, metavar="EVENT")
    e.add_argument("--out", required=True, metavar="FILE.html")
    e.set_defaults(func=cmd_export)


def _open(path: str):
    """The game file, read only; a clear error when it cannot be read as one."""
    from ..store import GameStore, StoreError
    try:
        store = GameStore(path, readonly=True)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    if not len(store):
        raise CommandError(f"{path}: holds no events (no game was started in it)")
    return store


def cmd_verify(args: argparse.Namespace) -> int:
    from ..record import check_playback
    from ..store import verify
    ok, message, _ = verify(args.game, args.head)
    if ok:
        # The chain is whole; it must also play back (resume) and measure again.
        played, said, _ = check_playback(_open(args.game))
        if not played:
            ok, message = False, said
        else:
            message = f"{message}; {said}"
    if not ok and not message.startswith(str(args.game)):
        message = f"{args.game}: {message}"
    print(message, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def cmd_show(args: argparse.Namespace) -> int:
    store = _open(args.game)
    for e in store.events():
        print(json.dumps(e.to_json()))
    return 0


def cmd_remeasure(args: argparse.Namespace) -> int:
    from ..record import ReplayError, remeasure
    from ..store import StoreError
    store = _open(args.game)
    try:
        out = remeasure(store, args.event)
    except (StoreError, ReplayError) as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(out))
    for said in out["changed"]:
        print(f"{args.game}: {said}", file=sys.stderr)
    # 0: exactly as recorded; 2: a frame or a pose is not the one recorded; 1: measured differently.
    return 0 if out["same"] else 2 if out["changed"] else 1


def cmd_export(args: argparse.Namespace) -> int:
    from ..audit import export_html
    from ..record import ReplayError
    from ..store import StoreError
    store = _open(args.game)
    try:
        html = export_html(store, args.event)
    except (StoreError, ReplayError) as exc:
        raise CommandError(str(exc)) from None
    Path(args.out).write_text(html, encoding="utf-8")
    print(args.out)
    return 0
