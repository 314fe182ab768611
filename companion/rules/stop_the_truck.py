"""Stop The Truck! (stop-the-truck.txt), a participation game: the gang against Max's truck.

Movement is in squares relative to the truck on a 12 x 9 board laid over the real
table ("Concept and Board Layout"): the board is fixed in the table frame when the
game starts, the truck stands in its central column (four squares: cab 1-2 with Max
in 2, tanker 3-4) and never moves along it; a vehicle that picks more forward squares
than the truck's speed moves up the board, fewer and it drops back.  The camera says
which square each car stands in (the square holding its centre, with the margin to
the square's edges and the pose's doubt, so a car on a line is too close to call).

A turn ("Move sequence", "TURN SEQUENCE"):

- `start_round` begins it: snakes roll first.
- `select`: every vehicle picks a box of its gear zones in secret (the truck also its
  petrol bomb squares); `declare`: the truck declares its speed and the picks show.
- `move`: vehicles move lightest first; the player puts the car on its new square and
  the camera's pose is checked against the square its box reaches.
- then, in the order of the `sequence` option: `drive_roll` (RED and blue boxes),
  `avoid` / `collide` (contested squares, bumped cars), `truck_sideways` (the truck
  pushes), `bombs`, the auto-gyro's `drop` (or `pass`), and `shoot`. A car the rules move
  (bumped, pushed, under or over steering, the truck's own slide) is asked for inside the
  resolution (`RuleSystem.place`): "put the Buggy here: bumped sideways by the collision
  with the Jeep, into square 4,3", any pose with its point in that square fitting.
- `end_turn` counts the distance (at the gyro's step it is the gyro's pass); `enter` brings
  on a replacement gang vehicle.

Each action is an `@action` method the base dispatches; every field it reads is in its
spec (`st_views.actions`), and `to` is always the camera's pose of the car. An outcome that
moved a car carries `placed` (the car, its square, why). Choices the book gives
a vehicle's player (a kangaroo's points, the gear lost) are `ChoiceRequest`s asked of that
player while the resolution waits.

Numbers and tables live in `st_data`, templates in `data/stop_the_truck/*.toml`,
rosters and state in `st_state`, the page's hooks in `st_views`.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..dice import ChoiceRequest, DiceRequest, Modifier, Roll
from ..geometry import MM_PER_IN, Footprint, Pose, Sector, SquareGrid, in_sector, judge
from ..geometry.verdict import CALL_SIGMAS, TOO_CLOSE
from . import st_data as D
from .actions import ListOf, OneOf, json_text
from .base import RuleOption, RulesError, RuleSystem, action, check_block, register
from .poses import parse_pose
from .st_state import ES, Box, GameState, Truck, Vehicle, new_vehicle, template
from .st_views import StopTheTruckViews

R = D.RULEBOOK
OPTIONS = (
    RuleOption("square_mm", 76.2, None, f'{R}, "Concept and Board Layout"',
               'The board is "12 squares long by 9 squares wide" but no size is given: the side of a square in mm '
               '(3 in by default, so a 1:64 car fits one).'),
    RuleOption("board_anchor", "truck_start", ("truck_start", "table_centre"), f'{R}, "Concept and Board Layout"',
               '"The truck begins the game occupying the central 4 squares of the board." "truck_start": the board is '
               'laid from the truck\'s pose when the game starts (its long side along the truck\'s heading, the truck in '
               'the central column\'s central four squares) and stays fixed on the table; "table_centre": the board is '
               'centred on the table, its long side along the table\'s +x.'),
    RuleOption("square_point", "centre", ("centre", "front_bumper"), f'{R}, "Concept and Board Layout"',
               'Which point of a car says the square it is in (the rulebook counts squares, not points): "centre" the '
               'footprint\'s centre; "front_bumper" the middle of its front edge.'),
    RuleOption("line_call", "box_square", ("box_square", "refuse"), f'{R}, "Movement"',
               'A car placed across a square\'s edge (its point within the camera\'s doubt of the line) is too close to '
               'call. "box_square": it counts as in the square its box reaches when that is one of the squares it might '
               'be in, and the outcome says so; "refuse": the car must be put clearly inside a square.'),
    RuleOption("start_gear", 2, None, f'{R}, "Gang Vehicle Templates"',
               '"Players may go up or down one gear per turn" - from which gear at the start is not said: the gear every '
               'vehicle starts in (a roster may give its own).'),
    RuleOption("tables", "typed", ("typed", "sheet"), f'{R}, "Damage / shooting tables" and the hand sheets',
               'The typed rules and the hand sheets give different numbers for the vehicle, crew, tyre, bike, petrol bomb '
               'and RED tables. "typed": the typed text\'s; "sheet": the sheets\' (e.g. crew: a 2 is "hit truck, no '
               'effect"; tyres: an 8 bursts without damage; RED: 1 is "steering problems").'),
    RuleOption("snake_table", "typed", ("typed", "sheet"), f'{R}, "The AutoGyro" and "Snakes:-"',
               '"typed": roll on the typed snake table every turn "until the snake falls out or is shot"; "sheet": the '
               'sheet\'s table and rhythm, "for two turns ... After two turns [it] goes to sleep ... It will wake up on a '
               'roll of 1 on a d10 ... and then be active for two turns".'),
    RuleOption("sequence", "typed", ("typed", "sheet"), f'{R}, "Move sequence" and "TURN SEQUENCE"',
               'The steps after moving; the book gives both orders. "typed" (the "Move sequence" rules): driving rolls, '
               'collisions, the truck sideways, petrol bombs, the auto-gyro, shooting; "sheet" (the typed "TURN SEQUENCE" '
               'list and the hand sheets\' sequences): "Move Truck sideways" before the driving rolls and the ramming '
               'damage.'),
    RuleOption("tyre_pull", "per_two", ("per_two", "per_three"), f'{R}, "The Truck Template" and the truck sheet',
               '"For every imbalance of two burst tyres on a side the truck pulls one square in that direction every '
               'turn" (typed, "per_two"); the sheet: "For every 3 tyres more burst on one side more than the other truck '
               'veers one space" ("per_three").'),
    RuleOption("victim_bonus", "positive_only", ("positive_only", "all"), f'{R}, "Gang Vehicle Templates", Collision chart',
               '"any + bonus from the victim is treated as a minus to the collider", each of the victim\'s bonuses (its '
               'ram on the side hit, its box) on its own. "positive_only": only a positive one counts, so a weak rear '
               '(-1) neither helps the collider nor cancels a +1 box; "all": a negative one counts too, as a plus.'),
    RuleOption("collision_facing", "by_move", ("by_move", "by_poses"), f'{R}, the vehicle sheets\' "Front ram, Side ram, Rear ram"',
               'Which ram modifier applies. "by_move": from the collider\'s move on the board (more squares forward than '
               'sideways: its front into the victim\'s rear; backwards: its rear into the victim\'s front; else side to '
               'side); "by_poses": from the tracked poses (the other car within 45 degrees of straight ahead is front, '
               'of straight behind rear, else side).'),
    RuleOption("bike_arc", "270", ("270", "front_and_rear_45"), f'{R}, "Notes", The Bike / The Trike',
               '"Can shoot up to 45deg backwards." "270": the forward 180 degrees widened 45 degrees behind each side; '
               '"front_and_rear_45": the forward 180 degrees and a 45 degree wedge straight back.'),
    RuleOption("bike_target_penalty", 1, None, f'{R}, sheet note "ALL SHOOTING AT BIKES IS AT - ... OFF SHOOTING SKILL"',
               'The OCR does not show how much: the points off a shooter\'s skill when the target is the bike.'),
    RuleOption("bomb_squares_follow_truck", True, (True, False), f'{R}, "The Truck Template", Two petrol bombers',
               '"On the top of the truck with their possible drop locations": True, the squares are picked relative to '
               'the truck and move with it when it moves sideways; False, they are squares of the board.'),
    RuleOption("bomb_reach", 2, None, f'{R}, "The Truck Template", Two petrol bombers',
               'The sheet\'s drop locations are not legible: how many squares from the truck (in any direction) a bomb '
               'square may be.'),
    RuleOption("cracked_top_green", "top_gear", ("top_gear", "fastest_green"), f'{R}, sheet "RED ROLL" 4',
               '"CRACKED CHASSIS, DO NO RED, COUNT BLUE AS RED, ALL TOP GREEN AS BLUE": which green boxes need a blue '
               'roll. "top_gear": every green box of the vehicle\'s top gear; "fastest_green": the green box with the '
               'most forward squares in each gear.'),
    RuleOption("halves", "up", ("up", "down"), f'{R}, "Petrol bomb hit effects" 1 and "Failing a RED driving roll" 5',
               '"1d10/2" (the bomb going off in the bomber\'s hand, the engine fire) does not say how an odd roll '
               'halves: "up" rounds up (a 1 still does 1), "down" rounds down (a 1 does nothing).'),
    RuleOption("gyro_drop_skill", "dropping", ("dropping", "flying"), f'{R}, "Notes", The AutoGyro, and "Car No 11 Auto-gyro"',
               'The typed note says "Use flying skill with modifiers as noted on the sheet to achieve a hit"; the gyro\'s '
               'sheet has a "Dropping skill" track (0-9) beside the "Flying skill" (0-5) and "Bomb or snake dropping '
               'modifiers to skill". "dropping": roll against the dropping skill; "flying": against the flying skill.'),
    RuleOption("distance_squares", 100, None, f'{R}, "Rules and Turn Sequence"',
               '"the allotted distance, usually 100 squares": the truck wins when its declared speeds add up to this.'),
    RuleOption("regain_on_elimination", False, (False, True), f'{R}, "Optional rule"',
               '"Every time a gang vehicle is eliminated from the game the truck regains two structural points" (never '
               'above its starting structure).'),
    RuleOption("replacement_enters", "back_edge", ("back_edge", "any_edge"), f'{R}, "Movement"',
               '"may pick a new vehicle and come back on next turn" - where is not said. "back_edge": on a free square of '
               'the board\'s back row; "any_edge": on any free square on the board\'s edge.'),
    RuleOption("kangaroo_points", "capped", ("capped", "any"), f'{R}, "Failing a RED driving roll" 7',
               '"Hit kangaroo, take 1d10 damage points. These may come off any combination of skills or structure '
               'points": the vehicle\'s player splits them. "capped": no track takes more points than it holds (points '
               'past a skill\'s 0 are not damage taken); "any": any split, a skill\'s excess lost (a player may sink '
               'the points into a skill the vehicle no longer needs).'),
    RuleOption("bomb_victims", "any_vehicle", ("any_vehicle", "gang_only"), f'{R}, "Move sequence" 7',
               '"Check to see if any vehicles are in a square selected as a petrol bomb location. If so then roll 1d10 '
               'on the petrol bomb chart": "any_vehicle", every vehicle in a bomb square, a vehicle on Max\'s side too '
               '(the squares are picked before anything moves); "gang_only": the bombers spare Max\'s side.'),
    RuleOption("bomb_in_hand", "not_hit", ("not_hit", "hit"), f'{R}, "Move sequence" 8 and the petrol bomb chart',
               '"All vehicles not involved in a collision or hit by a petrol bomb ... may shoot"; the chart\'s 1: '
               '"Goes off in hand, 1d10/2 to petrol bomber". "not_hit": a bomb that went off in the bomber\'s (or '
               'the gyro\'s) hand never reached the car, which may still shoot; "hit": any car rolled for on the '
               'chart was hit, and may not.'),
    RuleOption("es_colour_limit", "refused", ("refused", "allowed"), f'{R}, "Failing a RED driving roll" 4, the snake tables, '
               'the Plated Wrecker sheet ("ES")',
               '"Steering problem, do only yellow actions", the engine fire\'s "DO ONLY GREEN", the snakes\' "must pick RED '
               'action", "pick yellow move", "must do green", "must do a blue manoeuvre": the book does not say whether the '
               'emergency stop ("ES = emergency stop, start again next turn in first gear") is still open; it is no '
               'red, yellow, green or blue box, and the sheet names it apart from a red action ("NO SHOOTING ALOWED WHEN '
               'DOING A RED MANOUVER, RAM OR EMERGARY STOP"). "refused": while such a limit narrows a car\'s boxes it may '
               'not pick ES; "allowed": ES stays open beside the boxes of that colour. A "straight" limit leaves ES open '
               'either way (it goes no squares sideways).'),
    RuleOption("es_stuck_clutch", "refused", ("refused", "restarts_in_stuck_gear"),
               f'{R}, "Failing a RED driving roll" 6 and the Plated Wrecker sheet ("ES")',
               '"Clutch failure, stuck in current gear for rest of game" against "ES = emergency stop, start again next '
               'turn in first gear"; the book bars ES only for "NO BRAKES" (sheet RED ROLL 5). "refused": a car stuck in '
               'its gear may not emergency stop, which would put it in first gear; "restarts_in_stuck_gear": it may '
               'stop, and starts again next turn in the gear it is stuck in. Either way no car changes gear by more '
               'than its sheet allows in a turn.'),
    RuleOption("bump_side", "away_from_truck", ("away_from_truck", "collider_direction"), f'{R}, "Move sequence", step 5',
               '"If a vehicle is bumped sideways" - to which side is not said. "away_from_truck": one square away from the '
               'truck\'s row (left when in it); "collider_direction": the way the collider was moving sideways, else away '
               'from the truck.'),
)

PHASES_TYPED = ("move", "driving", "collisions", "truck", "bombs", "gyro", "shooting")
PHASES_SHEET = ("move", "truck", "driving", "collisions", "bombs", "gyro", "shooting")
TRUCK_PARTS = ("max", "bomber1", "bomber2", "gunner", "tyre_left", "tyre_right")
#: The truck square each target on it stands in: Max in square 2 ("Max - Occupies the second
#: square"); the petrol bombers on the tanker (3 and 4) and the rear crossbowman at its back (4)
#: are the companion's placing of them; the tyres that may be shot run along squares 2-4 ("The
#: front tyres of the truck are protected").
PART_SQUARE = {"max": (2,), "bomber1": (3,), "bomber2": (4,), "gunner": (4,), "tyre_left": (2, 3, 4),
               "tyre_right": (2, 3, 4)}
#: A square of the board as an action names it: [column, row], counted from 1 (`_sq` checks it).
SQUARE = ListOf("whole")
ACTIONS = ("select", "declare", "move", "drive_roll", "avoid", "collide", "truck_sideways", "bombs", "drop",
           "pass", "shoot", "enter")


def _sq(raw, where: str) -> tuple[int, int]:
    """A square as the players name it, [column, row] counted from 1, to (column, row) from 0."""
    if (not isinstance(raw, (list, tuple)) or len(raw) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in raw)):
        raise RulesError(f"{where}: a square is [column, row], counted from 1 (column 1 the back of the board, row 1 "
                         f"its right-hand side)")
    return raw[0] - 1, raw[1] - 1


def _name(sq: tuple[int, int] | None) -> str:
    return "off the board" if sq is None else f"square {sq[0] + 1},{sq[1] + 1}"


def _the(name: str) -> str:
    """A vehicle's name in a sentence: "the Bike", but "The Truck" as it is."""
    return name if name.lower().startswith("the ") else f"the {name}"


@register
class StopTheTruck(StopTheTruckViews, RuleSystem):
    name = "stop_the_truck"
    title = "Stop The Truck!"
    round_word = "turn"             # "At the start of each turn" (stop-the-truck.txt, "Gears"): turns, not rounds
    rulebook = R
    options = OPTIONS

    #: What a `select` carries that the other players must not see (Move sequence 1: "All
    #: players select movement ... Truck selects movement and selects boxes for petrol bombs").
    SECRET_FIELDS = ("box", "bombs", "bomb1", "bomb2")


    def templates(self) -> list[dict]:
        """The board's squares as gauges (their size is option square_mm): one square, and the
        truck's column of four ("Concept and Board Layout")."""
        from ..geometry.pose import MM_PER_IN
        from .base import template as table_template
        side_in = float(self.option("square_mm")) / MM_PER_IN
        rule = f'{R}, "Concept and Board Layout"'
        return [table_template("One square", "rect", length_in=side_in, width_in=side_in, rule=rule,
                               quote="distance/movement is by squares", use="a square of the board (option square_mm)"),
                table_template("The truck's four squares", "rect", length_in=4 * side_in, width_in=side_in,
                               marks_in=(side_in, 2 * side_in, 3 * side_in), rule=rule,
                               quote="The truck begins the game occupying the central 4 squares of the board",
                               use="the truck's column of squares")]
    def public_action(self, state, action: dict) -> dict:
        """A pick as the log shows it: who picked, not what; the boxes are shown when the truck
        declares and the bomb squares at step 7, from the state."""
        if action.get("act") != "select":
            return action
        return {k: ("(secret)" if k in self.SECRET_FIELDS else v) for k, v in action.items()}

    # --- setting up ------------------------------------------------------------------

    def starter_rosters(self, cars: list[tuple[int, str]]) -> list[dict]:
        """The first car is the truck (Max's); the rest are the gang, one player each, with
        the rulebook's vehicles in its move order."""
        if not cars:
            return []
        gang = [k for k in D.MOVE_ORDER if k != "auto_gyro"]
        rosters = [{"player": "Max", "vehicles": [{"marker": cars[0][0], "template": "the_truck", "name": cars[0][1]}]}]
        for n, (marker, name) in enumerate(cars[1:]):
            rosters.append({"player": f"Gang {n + 1}", "vehicles": [
                {"marker": marker, "template": gang[n % len(gang)], "name": name}]})
        return rosters

    #: Where the demo table's gang vehicles start, [column, row] from 1, in the order of the table's
    #: cars after the truck. The rulebook places only the truck ("The truck begins the game
    #: occupying the central 4 squares of the board"); the gang starts behind and beside it, as
    #: the chase begins, each in its own square.
    DEMO_GANG_SQUARES = ((3, 3), (3, 7), (2, 5), (4, 2), (4, 8), (1, 3), (1, 7), (2, 1), (2, 9), (1, 5))

    def demo_layout(self, cars: list[tuple[int, str, float, float]], table_mm: tuple[float, float]
                    ) -> dict[int, tuple[float, float, float]]:
        """The first car is the truck (as the starter rosters have it), in the middle of the table
        facing +x: the board (12 x 9 squares of option square_mm, 914 x 686 mm by default) is laid
        from it and fits the 1219 x 813 mm demo table. The other cars stand in the middle of
        DEMO_GANG_SQUARES, facing along the board."""
        if not cars:
            return {}
        width_mm, depth_mm = table_mm
        s = float(self.option("square_mm"))
        if D.BOARD_COLUMNS * s > width_mm or D.BOARD_ROWS * s > depth_mm:
            raise RulesError(f"the {D.BOARD_COLUMNS} x {D.BOARD_ROWS} board of {s:g} mm squares "
                             f"({D.BOARD_COLUMNS * s:.0f} x {D.BOARD_ROWS * s:.0f} mm) does not fit the "
                             f"{width_mm:.0f} x {depth_mm:.0f} mm table: a smaller square_mm")
        truck = (width_mm / 2, depth_mm / 2, 0.0)
        x0, y0 = truck[0] - 6 * s, truck[1] - 4.5 * s          # the board's back right corner
        out = {cars[0][0]: truck}
        for (marker, *_), (c, r) in zip(cars[1:], self.DEMO_GANG_SQUARES):
            out[marker] = (x0 + (c - 0.5) * s, y0 + (r - 0.5) * s, 0.0)
        if len(cars) - 1 > len(self.DEMO_GANG_SQUARES):
            raise RulesError(f"the demo places at most {len(self.DEMO_GANG_SQUARES)} gang vehicles")
        return out

    def demo_scenery(self, table_mm: tuple[float, float]) -> dict:
        """Nothing: the book's table is the 12 x 9 board alone ("Concept and Board Layout"): no
        terrain, no gates (the chase runs along an endless road, the distance counted in squares;
        the sheets' cross-roads and bridges are not legible enough to play, and not played)."""
        return {"terrain": [], "gates": []}

    def game_from_scene(self, scene, cars: list[dict]) -> GameState:
        """A game from a scene alone: each car names its `template` (exactly one `the_truck`) and
        may name its `player` (the truck's is Max; a gang car without one is its own player)."""
        rosters: dict[str, list] = {}
        for n, c in enumerate(cars):
            key = c.get("template")
            if not isinstance(key, str):
                raise RulesError(f"car {c.get('id')}: say its vehicle ('template': the_truck, bike, ...) to judge "
                                 f"on a scene alone")
            player = c.get("player") or ("Max" if key == "the_truck" else f"Gang {n}")
            rosters.setdefault(player, []).append({"marker": c["id"], "template": key})
        return self.new_game([{"player": p, "vehicles": vs} for p, vs in rosters.items()], scene)

    def new_game(self, rosters: list[dict], scene) -> GameState:
        if not rosters:
            raise RulesError("a game needs Max's roster (the truck) and the gang players'")
        cars = {c.id: c for c in scene.cars} if scene is not None else {}
        sizes = {m: (c.length_mm, c.width_mm) for m, c in cars.items()}
        vehicles, players, taken = {}, [], set()
        squares: dict[int, tuple[int, int]] = {}
        for roster in rosters:
            if not isinstance(roster, dict):
                raise RulesError(f"a roster is an object (player, vehicles), not {json_text(roster)}")
            player = roster.get("player")
            if not isinstance(player, str) or not player:
                raise RulesError("a roster needs a 'player' name")
            if player in players:
                raise RulesError(f"two rosters for {player}")
            players.append(player)
            extra = sorted(k for k in roster if k not in ("player", "vehicles"))
            if extra:
                raise RulesError(f"roster of {player}: no field {', '.join(repr(k) for k in extra)} "
                                 f"(its fields: player, vehicles)")
            specs = roster.get("vehicles")
            if not isinstance(specs, list) or not specs:
                raise RulesError(f"roster of {player}: no 'vehicles'")
            for spec in specs:
                v = new_vehicle(spec, player, sizes, taken)
                if v.gear == 0:
                    v.gear = min(max(1, int(self.option("start_gear"))), v.kind.top_gear)
                if v.marker in cars:
                    v.pose = cars[v.marker].pose
                if "square" in spec:
                    squares[v.marker] = _sq(spec["square"], f"roster of {player}, {v.name}")
                vehicles[v.marker] = v
        trucks = [v for v in vehicles.values() if v.is_truck]
        if len(trucks) != 1:
            raise RulesError(f"a game has one truck (template the_truck), not {len(trucks)} "
                             f"({R}, \"Concept and Board Layout\")")
        tv = trucks[0]
        if tv.pose is None:
            raise RulesError(f"the truck ({tv.name}, marker {tv.marker}) is not on the table: the board is laid from it")
        tpl = tv.kind
        truck = Truck([tpl.bombers, tpl.bombers], tpl.gunner, {"left": 0, "right": 0}, tpl.tyres_per_side)
        s = float(self.option("square_mm"))
        if s <= 0:
            raise RulesError(f"option square_mm: {s:g} is not a square size")
        origin = self._origin(tv.pose, scene, s)
        state = GameState(players, vehicles, tv.marker, truck, origin, s)
        tv.square = (D.TRUCK_FRONT_COLUMN, D.TRUCK_START_ROW)
        if self.option("board_anchor") == "table_centre":
            tv.square = (D.TRUCK_FRONT_COLUMN, self._truck_row(state, tv.pose, squares.get(tv.marker))[0])
        state.square_hints = squares
        self._on_board(state)
        return state

    def _on_board(self, state: GameState) -> None:
        """Each car on the table in the square the camera puts it in (a roster's `square` settles
        one on a line); a car off the board waits to come on."""
        for v in state.vehicles.values():
            if v.is_truck or v.pose is None:
                continue
            v.square = None
            where = self.locate(state, v, v.pose)
            sq, note = (None, "") if not any(map(self.on_grid, where["candidates"])) else \
                self._square_at(state, v, v.pose, state.square_hints.get(v.marker), "starts")
            if sq is None:
                # On the table but off the board: it waits to come on ("enter"), like a car not yet put down.
                state.notes.append(f"{_the(v.name)} stands off the board: it comes on later")
                continue
            if note:
                state.notes.append(note)
            v.square = sq
        self._check_no_sharing(state)

    def _origin(self, truck_pose: Pose, scene, s: float, row: int = D.TRUCK_START_ROW) -> Pose:
        """The board's outer corner of square (0, 0): the back right corner, as the truck faces.
        Laid from the truck, the truck stands in `row` (counted from 0): the central one at the
        start, another in a game begun part way through."""
        if self.option("board_anchor") == "truck_start":
            # The truck's centre is where its squares 2 and 3 meet: 6 squares from the back,
            # half-way across its row.
            corner = truck_pose.to_table(-6 * s, -(row + 0.5) * s)
            return Pose(float(corner[0]), float(corner[1]), truck_pose.heading_deg)
        w, d = (scene.width_mm, scene.depth_mm) if scene is not None else (1219.2, 914.4)
        return Pose(w / 2 - 6 * s, d / 2 - 4.5 * s, 0.0)

    # --- starting part way through a game -------------------------------------------------------

    #: A game begun part way through (a scenario's "state" block): what play reaches, each field
    #: and its shape (docs/rules/stop-the-truck.md, "Starting part way through a game").
    PART_WAY_FIELDS = {"turn": "whole", "step": OneOf("between_turns", "select", "move"), "distance": "whole",
                       "last_speed": "whole", "eliminated": "whole", "truck": "object", "vehicles": "object"}
    #: The effects the RED and BLUE tables (and an emergency stop, a harpoon shot) leave on a vehicle,
    #: by the names a state block gives them, each with the condition the rules keep.
    EFFECT_FIELDS = {"binding_brakes": "flag", "steering_problem": "flag", "clutch_failure": "flag",
                     "lost_gears": ListOf("whole"), "engine_fire": "whole", "steering_trouble": "whole",
                     "cracked_chassis": "flag", "no_brakes": "flag", "pulls": OneOf("left", "right"),
                     "fuel_blockage": "flag", "missed_gear": "flag", "dust_in_eyes": "flag",
                     "emergency_stop": "flag", "harpoon_reloading": "flag"}
    #: Effects that act on the next turn's picks only: set between turns.
    NEXT_TURN_EFFECTS = ("missed_gear", "dust_in_eyes", "emergency_stop", "harpoon_reloading")
    VEHICLE_FIELDS = {"gear": "whole", "structure": "whole", "driver": "whole", "shooting": "whole",
                      "dropping": "whole", "hand_weapon_destroyed": "flag", "snake": "flag|object",
                      "effects": "object", "out": OneOf("wrecked", "driver out", "off the board"),
                      "square": SQUARE, "box": "text", "moved": "flag"}
    TRUCK_FIELDS = {"gear": "whole", "structure": "whole", "max": "whole", "shotgun_destroyed": "flag",
                    "bombers": ListOf("whole"), "gunner": "whole", "tyres_burst": "object", "top_gear_turns": "whole",
                    "row": "whole", "effects": "object", "box": "text", "bomb1": SQUARE, "bomb2": SQUARE}

    @staticmethod
    def _within(where: str, value: int, lo: int, hi: int, what: str) -> int:
        if not lo <= value <= hi:
            raise RulesError(f"{where}: {value} is not {what} ({lo} to {hi})")
        return int(value)

    def start_part_way(self, state: GameState, block: dict) -> None:
        """A game part way through: the turns played and the squares gone, the truck's damage,
        crew, tyres, gear and row, each vehicle's damage, gear, snake and lasting effects, and
        where the turn is (between turns, picking boxes, or moving with some cars moved: the next
        to move is the lightest left). Set on a copy, so a refusal changes nothing."""
        work = copy.deepcopy(state)
        self._start_part_way(work, block)
        state.__dict__.update(work.__dict__)

    def _start_part_way(self, state: GameState, block: dict) -> None:
        b = check_block("state", self.PART_WAY_FIELDS, block)
        turn = self._within("state.turn", b.get("turn", 0), 0, 10_000, "a number of turns")
        step = b.get("step", "between_turns")
        if step != "between_turns" and turn < 1:
            raise RulesError(f"state.step: {step} is part of a turn: say which turn (state.turn, from 1)")
        distance = b.get("distance", 0)
        if not 0 <= distance < int(self.option("distance_squares")):
            raise RulesError(f"state.distance: {distance} squares; the truck wins at "
                             f"{self.option('distance_squares')}, so a game under way has gone 0 to "
                             f"{int(self.option('distance_squares')) - 1}")
        tv, t = state.truck_vehicle, state.truck
        tk = check_block("state.truck", self.TRUCK_FIELDS, b.get("truck", {}))
        if isinstance(b.get("vehicles"), dict) and str(tv.marker) in b["vehicles"]:
            raise RulesError(f"state.vehicles.{tv.marker}: the truck's tracks, gear and row go under state.truck")
        vb = check_block("state.vehicles", {str(m): "object" for m, v in state.vehicles.items() if not v.is_truck},
                          b.get("vehicles", {}))
        # The truck's row: the board is laid from the truck, so every car's square is read again.
        if "row" in tk:
            row = self._within("state.truck.row", tk["row"], 1, D.BOARD_ROWS, "a row of the board") - 1
            if self.option("board_anchor") == "table_centre":
                if row != tv.square[1]:
                    raise RulesError(f"state.truck.row: the board is centred on the table (option board_anchor), so "
                                     f"the camera puts the truck in row {tv.square[1] + 1}, not {row + 1}")
            else:
                state.board_origin = self._origin(tv.pose, None, state.square_mm, row)
                tv.square = (D.TRUCK_FRONT_COLUMN, row)
        for key, spec in vb.items():
            hint = spec.get("square") if isinstance(spec, dict) else None
            if hint is not None:
                state.square_hints[int(key)] = _sq(hint, f"state.vehicles.{key}.square")
        state.notes = []
        self._on_board(state)
        # The truck's tracks (the truck sheet: Max's Shoot/Drive 0-8, the bombers and the gunner 0-10).
        kind = tv.kind
        where = "state.truck"
        if "gear" in tk:
            tv.gear = self._within(f"{where}.gear", tk["gear"], 1, kind.top_gear, f"a gear of {_the(tv.name)}")
        if "structure" in tk:
            tv.structure = self._within(f"{where}.structure", tk["structure"], 1, tv.max_structure,
                                        "structure left (0 has stopped the truck)")
        if "max" in tk:
            tv.driver = self._within(f"{where}.max", tk["max"], 1, kind.driver_skill,
                                     "points on Max's track (0 has stopped the truck)")
        tv.weapon_lost = bool(tk.get("shotgun_destroyed", False))
        tv.max_track()
        if "bombers" in tk:
            if len(tk["bombers"]) != 2:
                raise RulesError(f"{where}.bombers: the two petrol bombers' points, [bomber 1, bomber 2]")
            t.bombers = [self._within(f"{where}.bombers.{i}", n, 0, kind.bombers, "a petrol bomber's points")
                         for i, n in enumerate(tk["bombers"])]
        if "gunner" in tk:
            t.gunner = self._within(f"{where}.gunner", tk["gunner"], 0, kind.gunner, "the crossbowman's points")
        if "tyres_burst" in tk:
            tb = check_block(f"{where}.tyres_burst", {"left": "whole", "right": "whole"}, tk["tyres_burst"])
            t.tyres_burst = {side: self._within(f"{where}.tyres_burst.{side}", tb.get(side, 0), 0, t.tyres_per_side,
                                                f"burst tyres on a side (the front ones are protected)")
                             for side in ("left", "right")}
        if "top_gear_turns" in tk:
            t.top_gear_turns = self._within(f"{where}.top_gear_turns", tk["top_gear_turns"], 0, turn,
                                            "turns in top gear, at most the turns played")
        self._set_effects(state, tv, tk.get("effects", {}), where, step, turn)
        # Each gang vehicle (and any on Max's side): its tracks, gear, snake, effects, or out.
        for key, spec in vb.items():
            v = state.vehicles[int(key)]
            self._part_way_vehicle(state, v, check_block(f"state.vehicles.{key}", self.VEHICLE_FIELDS, spec),
                                   f"state.vehicles.{key}", step, turn)
        state.turn, state.distance = turn, distance
        state.eliminated = self._within("state.eliminated", b.get("eliminated", 0), 0, 10_000,
                                        "gang vehicles out of the game so far")
        t.last_speed = self._within("state.last_speed", b.get("last_speed", 0), 0, 20, "the truck's speed last turn")
        state.phase = "setup" if step == "between_turns" and turn == 0 else "turn_over" if step == "between_turns" \
            else "select"
        boxes = {m: spec.get("box") for m, spec in ((int(k), s) for k, s in vb.items())}
        boxes[tv.marker] = tk.get("box")
        for m, spec in vb.items():
            if spec.get("moved") and step != "move":
                raise RulesError(f"state.vehicles.{m}.moved: cars move in the move step (state.step \"move\")")
        for name in ("bomb1", "bomb2"):
            if tk.get(name) is not None and step == "between_turns":
                raise RulesError(f"state.truck.{name}: the bomb squares are picked with the boxes (state.step "
                                 f"\"select\" or \"move\")")
        if step == "between_turns":
            if any(k is not None for k in boxes.values()):
                m = next(m for m, k in boxes.items() if k is not None)
                raise RulesError(f"state.{'truck' if m == tv.marker else f'vehicles.{m}'}.box: boxes are picked in a "
                                 f"turn (state.step \"select\" or \"move\")")
            return
        # Part way through turn `turn`: the boxes picked so far (secret until the truck declares).
        for m, key in boxes.items():
            if key is not None and not state.vehicles[m].on_board:
                raise RulesError(f"state.vehicles.{m}.box: {_the(state.vehicles[m].name)} is not on the board")
        for v in sorted(state.on_board(), key=lambda v: v.marker):
            key = boxes.get(v.marker)
            at = "state.truck" if v.is_truck else f"state.vehicles.{v.marker}"
            if key is None:
                if step == "move":
                    raise RulesError(f"{at}.box: in the move step every vehicle on the board has picked its box")
                continue
            try:
                v.choice = self._find_box(state, v, key)
            except RulesError as exc:
                raise RulesError(f"{at}.box: {exc}") from None
        if tk.get("bomb1") is not None or tk.get("bomb2") is not None:
            chosen = []
            for i, name in enumerate(("bomb1", "bomb2")):
                raw = tk.get(name)
                if raw is None:
                    chosen.append(None)
                    continue
                if t.bombers[i] <= 0:
                    raise RulesError(f"state.truck.{name}: petrol bomber {i + 1} is out: no bomb square for him")
                sq = _sq(raw, f"state.truck.{name}")
                try:
                    self._check_bomb_square(state, sq, i)
                except RulesError as exc:
                    raise RulesError(f"state.truck.{name}: {exc}") from None
                chosen.append(sq)
            t.bomb_squares, t.bomb_row = chosen, tv.square[1]
        if step == "select":
            return
        # The move step: the truck has declared (its speed, each pick shown), the cars that have
        # moved stand in the squares their boxes took them to, lightest first.
        t.speed = tv.choice.forward
        for o in state.on_board():
            box = o.choice
            if box.colour == "es":
                o.no_shooting.append("emergency stop")
                o.conditions["restart"] = True
            else:
                o.gear = box.gear
            roll = self.roll_for_box(o, box)
            if roll is not None:
                o.roll_needed = roll
                if roll == "red":
                    o.no_shooting.append("a RED action")
        movers = sorted((v for v in state.gang() if v.on_board), key=lambda v: (v.kind.order, v.marker))
        waiting = None
        for v in movers:
            if not vb.get(str(v.marker), {}).get("moved"):
                waiting = waiting or v
                continue
            if waiting is not None:
                raise RulesError(f"state.vehicles.{v.marker}.moved: vehicles move lightest first, and "
                                 f"{_the(waiting.name)} moves before {_the(v.name)}")
            box = v.choice
            side = box.side + (v.conditions.get("pull", 0) if box.colour != "es" else 0)
            v.from_square = (v.square[0] - (box.forward - t.speed), v.square[1] - side)
            v.moved = True
            self._arrive(state, v, (box.forward - t.speed, side), came=v.square != v.from_square)
        state.phase = "move"
        self._advance(state, [])

    def _part_way_vehicle(self, state: GameState, v: Vehicle, spec: dict, where: str, step: str, turn: int) -> None:
        tpl = v.kind
        if "out" in spec:
            if set(spec) - {"out"}:
                raise RulesError(f"{where}: a vehicle out of the game has no {', '.join(sorted(set(spec) - {'out'}))}")
            v.out, v.square = spec["out"], None
            v.conditions["out_turn"] = turn
            return
        if "gear" in spec:
            v.gear = self._within(f"{where}.gear", spec["gear"], 1, tpl.top_gear, f"a gear of {_the(v.name)}")
        if "structure" in spec:
            v.structure = self._within(f"{where}.structure", spec["structure"], 1, v.max_structure,
                                       "structure left (at 0 it is wrecked: say \"out\")")
        if "driver" in spec:
            v.driver = self._within(f"{where}.driver", spec["driver"], 1, tpl.driver_skill,
                                    f"{'flying' if tpl.flying else 'driver'} skill left (at 0 the driver is out: "
                                    f"say \"out\")")
        if "shooting" in spec:
            v.shooting = self._within(f"{where}.shooting", spec["shooting"], 0, tpl.shooting_skill, "shooting skill left")
        if "dropping" in spec:
            if not tpl.flying:
                raise RulesError(f"{where}.dropping: only the auto-gyro drops (its dropping skill)")
            v.dropping = self._within(f"{where}.dropping", spec["dropping"], 0, tpl.dropping_skill,
                                      "dropping skill left")
        if spec.get("hand_weapon_destroyed"):
            v.weapon_lost, v.shooting = True, 0
        snake = spec.get("snake")
        if snake is True:
            v.snake = {"active": D.SNAKE_ACTIVE_TURNS, "asleep": False}
        elif isinstance(snake, dict):
            sn = check_block(f"{where}.snake", {"active": "whole", "asleep": "flag"}, snake)
            v.snake = {"active": self._within(f"{where}.snake.active", sn.get("active", D.SNAKE_ACTIVE_TURNS), 0, 10,
                                              "turns the snake stays awake"),
                       "asleep": bool(sn.get("asleep", False))}
        if v.snake is not None and (tpl.flying or self.truck_side(state, v)):
            raise RulesError(f"{where}.snake: the auto-gyro drops snakes on the gang's vehicles, not on "
                             f"{_the(v.name)}")
        self._set_effects(state, v, spec.get("effects", {}), where, step, turn)

    def _set_effects(self, state: GameState, v: Vehicle, effects, where: str, step: str, turn: int) -> None:
        """The lasting effects of the RED and BLUE tables (and the next turn's of an emergency stop,
        a missed gear, dust, a harpoon shot) as a state block names them."""
        where = f"{where}.effects"
        e = check_block(where, self.EFFECT_FIELDS, effects)
        c, tpl = v.conditions, v.kind
        for name in self.NEXT_TURN_EFFECTS:
            if e.get(name) and step != "between_turns":
                raise RulesError(f"{where}.{name}: it acts on the next turn's pick: set it between turns "
                                 f"(state.step \"between_turns\")")
        flags = {"binding_brakes": "no_top_gear", "steering_problem": "only_yellow", "cracked_chassis": "cracked_chassis",
                 "no_brakes": "no_brakes", "fuel_blockage": "no_top_speed", "missed_gear": "gear_down_next",
                 "dust_in_eyes": "dust", "emergency_stop": "restart"}
        for name, cond in flags.items():
            if e.get(name):
                c[cond] = True
        if e.get("emergency_stop") and (v.is_truck or tpl.flying):
            raise RulesError(f"{where}.emergency_stop: {_the(v.name)} has no emergency stop box")
        if e.get("clutch_failure"):
            c["stuck_gear"] = v.gear
        if e.get("lost_gears"):
            lost = sorted(set(e["lost_gears"]))
            for g in lost:
                self._within(f"{where}.lost_gears", g, 1, tpl.top_gear, f"a gear of {_the(v.name)}")
            if len(lost) >= tpl.top_gear:
                raise RulesError(f"{where}.lost_gears: a vehicle keeps one gear at least (RED table: lose a gear)")
            c["lost_gears"] = lost
        if "engine_fire" in e:
            c["only_green"] = self._within(f"{where}.engine_fire", e["engine_fire"], 1, 2,
                                           "turns left before the fire goes out (sheet RED ROLL 8: \"in 2 goes\")")
        if "steering_trouble" in e:
            c["red_plus"] = self._within(f"{where}.steering_trouble", e["steering_trouble"], 1, 9,
                                         "points added to RED driving rolls")
        if "pulls" in e:
            c["pull"] = 1 if e["pulls"] == "left" else -1
        if e.get("harpoon_reloading"):
            if not tpl.harpoon:
                raise RulesError(f"{where}.harpoon_reloading: only the harpoon van reloads")
            v.reload, c["reload_turn"] = True, turn + 1

    def truck_side(self, state: GameState, v: Vehicle) -> bool:
        """On Max's side: the truck, the auto-gyro ("Comes on The Truck's side"), and any vehicle on
        Max's roster ("If Max is being overwhelmed ... suggest one vehicle comes on on the Truck's
        side")."""
        return v.is_truck or v.kind.side == "truck" or v.owner == state.truck_vehicle.owner

    def _check_no_sharing(self, state: GameState) -> None:
        seen: dict[tuple[int, int], Vehicle] = {}
        for v in state.on_board():
            for sq in ([] if v.kind.flying else self._squares_of(state, v)):
                if sq in seen:
                    raise RulesError(f"{_the(v.name)} and the {seen[sq].name} both start in {_name(sq)}")
                seen[sq] = v

    # --- the board -------------------------------------------------------------------------

    def grid(self, state: GameState) -> SquareGrid:
        return SquareGrid(state.board_origin, state.square_mm, D.BOARD_COLUMNS, D.BOARD_ROWS)

    def truck_squares(self, state: GameState) -> list[tuple[int, int]]:
        """The truck's squares 1-4, cab first."""
        col, row = state.truck_vehicle.square
        return [(col - k, row) for k in range(D.TRUCK_SQUARES)]

    def _squares_of(self, state: GameState, v: Vehicle) -> list[tuple[int, int]]:
        if not v.on_board:
            return []
        return self.truck_squares(state) if v.is_truck else [v.square]

    def occupants(self, state: GameState) -> dict[tuple[int, int], list[Vehicle]]:
        """Who is on each square, the truck on its four; the auto-gyro flies over them."""
        out: dict[tuple[int, int], list[Vehicle]] = {}
        for v in state.on_board():
            if v.kind.flying:
                continue
            for sq in self._squares_of(state, v):
                out.setdefault(sq, []).append(v)
        return out

    def contested(self, state: GameState) -> list[tuple[tuple[int, int], list[Vehicle]]]:
        return sorted(((sq, vs) for sq, vs in self.occupants(state).items() if len(vs) > 1),
                      key=lambda x: max(v.arrival for v in x[1]))

    def on_grid(self, sq: tuple[int, int]) -> bool:
        return 0 <= sq[0] < D.BOARD_COLUMNS and 0 <= sq[1] < D.BOARD_ROWS

    def _point(self, v: Vehicle, pose: Pose) -> tuple[np.ndarray, float]:
        """The point that says a car's square, and its one-sigma doubt along any axis."""
        if self.option("square_point") == "front_bumper":
            lever = v.length_mm / 2
            return pose.to_table(lever, 0.0), math.hypot(pose.axis_sigma_mm, lever * pose.heading_sigma_rad)
        return pose.xy, pose.axis_sigma_mm

    def locate(self, state: GameState, v: Vehicle, pose: Pose) -> dict:
        """The square a car stands in, by its point (option square_point): the square, the
        verdict of the point's margin to the square's nearest edge against the pose's doubt,
        and, when that is too close to call, every square the point might be in."""
        point, sigma = self._point(v, pose)
        s = state.square_mm
        f, l = state.board_origin.to_local(point)
        col, row = math.floor(f / s), math.floor(l / s)
        margin = min(f - col * s, (col + 1) * s - f, l - row * s, (row + 1) * s - l)
        verdict = judge(f"{_the(v.name)}'s {self.option('square_point').replace('_', ' ')} inside {_name((col, row))}",
                        margin, 0.0, sigma, at_most=False)
        reach = CALL_SIGMAS * sigma
        cands = sorted({(math.floor((f + df) / s), math.floor((l + dl) / s))
                        for df in (-reach, 0.0, reach) for dl in (-reach, 0.0, reach)})
        sq = (col, row)
        return {"square": sq if self.on_grid(sq) else None, "verdict": verdict,
                "candidates": [c for c in cands] if verdict.outcome == TOO_CLOSE else [sq]}

    def _square_at(self, state: GameState, v: Vehicle, pose: Pose, want: tuple[int, int] | None,
                   doing: str) -> tuple[tuple[int, int] | None, str]:
        """The square the camera puts a car in, checked against the one it should be in (`want`,
        or None: wherever it is). A car on a line: the option line_call."""
        where = self.locate(state, v, pose)
        sq, verdict, cands = where["square"], where["verdict"], where["candidates"]
        if verdict.outcome != TOO_CLOSE:
            if want is not None and sq != want:
                raise RulesError(f"{_the(v.name)} {doing} {_name(want)}, but the camera puts it in {_name(sq)} "
                                 f"({verdict.describe()}); put it in {_name(want)}")
            return sq, ""
        text = ", ".join(_name(c) for c in cands)
        if self.option("line_call") == "box_square" and want is not None and want in cands:
            return want, (f"{_the(v.name)} stands on a line (too close to call between {text}: "
                          f"{verdict.describe()}); taken as {_name(want)}, where it {doing[:-1] if doing.endswith('s') else doing}")
        raise RulesError(f"{_the(v.name)} is too close to call between {text} ({verdict.describe()}); "
                         f"push it into {_name(want) if want else 'one square'}")

    def _truck_row(self, state: GameState, pose: Pose, want: int | None) -> tuple[int, str]:
        """The truck's row from its pose: its centre's distance across the board."""
        s = state.square_mm
        _, l = state.board_origin.to_local(pose.xy)
        row = math.floor(l / s)
        margin = min(l - row * s, (row + 1) * s - l)
        verdict = judge(f"the truck inside row {row + 1}", margin, 0.0, pose.axis_sigma_mm, at_most=False)
        if verdict.outcome == TOO_CLOSE:
            if want is not None and abs(want - row) <= 1:
                return want, f"the truck stands on a row's edge ({verdict.describe()}); taken as row {want + 1}"
            raise RulesError(f"the truck is too close to call between rows ({verdict.describe()}); push it into one")
        if want is not None and row != want:
            raise RulesError(f"the truck should be in row {want + 1}, but the camera puts it in row {row + 1} "
                             f"({verdict.describe()})")
        return row, ""

    # --- the turn ----------------------------------------------------------------------------

    def active_marker(self, state: GameState) -> int | None:
        return state.active.marker if state.active is not None else None

    def turn_info(self, state: GameState) -> dict:
        """The move order this turn (every gang vehicle that picked a box, lightest first), the
        index of the one moving (-1 outside the move step), and whose player is up."""
        order = sorted((v for v in state.gang() if v.on_board and v.choice is not None),
                       key=lambda v: (v.kind.order, v.marker))
        active = state.active
        return {"round": state.turn, "players": list(state.players),
                "order": [{"player": v.owner, "vehicle": v.marker} for v in order],
                "turn": next((i for i, v in enumerate(order) if active is not None and v.marker == active.marker), -1),
                "active": active.marker if active is not None else None, "up": self.up_player(state)}

    def up_player(self, state: GameState) -> str | None:
        """Whose player must act for the turn to go on, or None when everyone may (picking boxes
        in secret, shooting) or nobody need (between turns)."""
        if state.over:
            return None
        ph = state.phase
        if ph == "move" and state.active is not None:
            return state.active.owner
        if ph == "driving":
            owing = sorted((v for v in state.vehicles.values() if v.in_play and v.roll_needed),
                           key=lambda v: (v.kind.order, v.marker))
            return owing[0].owner if owing else None
        if ph == "collisions":
            first = self.contested(state)
            if not first:
                return None
            avoider = next((o for o in first[0][1] if o.conditions.get("avoiding") == state.turn), None)
            return (avoider or self._pair(state, *first[0])[0]).owner
        if ph in ("truck", "bombs"):
            return state.truck_vehicle.owner
        if ph == "gyro":
            gyros = [g for g in self._gyros(state) if self._drop_targets(state, g)]
            return gyros[0].owner if gyros else None
        return None

    def judge_move(self, state: GameState, marker: int, to) -> dict | None:
        """Would car `marker` standing at `to` be where the rules want it now: in the square its
        box reaches (its move), a free square next to it (the bike's or trike's avoid), or, for
        the truck's slide, its new row (a car the rules move is asked for by the resolution
        itself, `place`, and the session judges it against the tolerance asked). The margin is how far its
        point (option square_point) is inside that square (negative: outside by that much), against
        the pose's doubt. None when nothing is owed of that car."""
        v = state.vehicles.get(marker)
        if v is None or not v.in_play or state.over:
            return None
        # Every answer carries "fix": what a player does with the car in hand to make it legal
        # (empty when it is): always a move across the board into the square wanted, since the
        # book judges a car only by the square it stands in ("Concept and Board Layout",
        # "Movement"), never by how it is turned.
        if state.phase == "move" and state.active is v:
            want = self.target_square(state, v, v.choice, state.truck.speed)
            if not self.on_grid(want):
                return {"legal": True, "reasons": ["its box takes it off the board: it is out"], "margin_mm": None,
                        "fix": []}
            wants, doing = [want], f"moves {v.choice.label} to {_name(want)}"
        elif state.phase == "collisions" and v.kind.avoid and any(v in vs for _, vs in self.contested(state)):
            wants, doing = self.avoid_squares(state, v), "avoids into a free square next to it"
        elif state.phase == "truck" and v.is_truck and not state.truck.sideways_done:
            row = min(max(v.square[1] + self.truck_sideways_squares(state), 0), D.BOARD_ROWS - 1)
            return self._judge_row(state, to, row)
        else:
            return None
        if not wants:
            # Only the bike's or trike's avoid wants a free square ("Notes"); with none, it stays and
            # the collision is rolled (Move sequence 5).
            here = f" in {_name(v.square)}" if v.square is not None else ""
            return {"legal": False, "reasons": [f"{_the(v.name)} has no free square to go to"], "margin_mm": None,
                    "fix": [f"leave it{here}: there is no free square to avoid into, so the collision is rolled"]}
        point, sigma = self._point(v, to)
        f, l = state.board_origin.to_local(point)
        best = max(wants, key=lambda q: self._inside_mm(state, f, l, q))
        margin = self._inside_mm(state, f, l, best)
        verdict = judge(f"{_the(v.name)}'s {self.option('square_point').replace('_', ' ')} inside {_name(best)}",
                        margin, 0.0, sigma, at_most=False)
        legal = verdict.outcome == "in" or (verdict.outcome == TOO_CLOSE and self.option("line_call") == "box_square")
        reasons = [] if verdict.outcome == "in" else [
            f"{_the(v.name)} {doing}: {verdict.describe()}"
            + ("; counted in it (option line_call)" if legal else "")]
        s = state.square_mm
        fix = [] if legal else [self._shift_words(
            self._nudge_mm(f, (best[0] * s, (best[0] + 1) * s), sigma),
            self._nudge_mm(l, (best[1] * s, (best[1] + 1) * s), sigma), _name(best), sigma)]
        return {"legal": legal, "reasons": reasons, "fix": fix, "margin_mm": round(margin, 2),
                "sigma_mm": round(sigma, 2), "square": [best[0] + 1, best[1] + 1], "verdict": verdict.to_json()}

    #: How far past the camera's doubt a fix puts a car's point inside its square, in mm: only so
    #: the verdict after the fix is "in" (a margin exactly at the doubt is still too close to call).
    FIX_CLEAR_MM = 0.1

    def _nudge_mm(self, at_mm: float, span_mm: tuple[float, float], sigma_mm: float) -> float | None:
        """The shortest shift along one board axis that puts a point at `at_mm` clearly inside
        `span_mm` (by more than the verdict's CALL_SIGMAS doubts, as `judge` calls "in"); 0 when
        it is already, None when the doubt leaves no room in the span at all."""
        need = CALL_SIGMAS * sigma_mm + self.FIX_CLEAR_MM
        lo, hi = span_mm[0] + need, span_mm[1] - need
        if lo > hi:
            return None
        return min(max(at_mm, lo), hi) - at_mm

    def _shift_words(self, forward_mm: float | None, left_mm: float | None, place: str, sigma_mm: float) -> str:
        """A shift across the board in players' words: inches up or down the board ("forward",
        "back", the way the truck faces, as the book counts moves) and sideways ("left", "right",
        as the truck faces, as in "6 squares forward and 1 left", "Movement"), each rounded up to
        the hundredth of an inch so that moving it that far is enough."""
        if forward_mm is None or left_mm is None:
            return (f"put it in the middle of {place} and hold it still: the camera's doubt "
                    f"(+/- {sigma_mm / MM_PER_IN:.2f} in) is too large to call it inside any square")
        parts = []
        for mm, plus, minus in ((forward_mm, "forward", "back"), (left_mm, "left", "right")):
            inches = math.ceil(round(abs(mm) / MM_PER_IN * 100, 6)) / 100
            if inches > 0:
                parts.append(f"{inches:.2f} in {plus if mm > 0 else minus}")
        return f"move it {' and '.join(parts)} into {place}" if parts else f"keep it where it is, in {place}"

    def _inside_mm(self, state: GameState, f: float, l: float, sq: tuple[int, int]) -> float:
        """How far a point (board frame) is inside square `sq`: positive inside, negative outside."""
        s = state.square_mm
        dx = max(sq[0] * s - f, f - (sq[0] + 1) * s)
        dy = max(sq[1] * s - l, l - (sq[1] + 1) * s)
        if dx <= 0 and dy <= 0:
            return min(-dx, -dy)
        return -math.hypot(max(dx, 0.0), max(dy, 0.0))

    def _judge_row(self, state: GameState, to, row: int) -> dict:
        s = state.square_mm
        _, l = state.board_origin.to_local(to.xy)
        margin = min(l - row * s, (row + 1) * s - l)
        verdict = judge(f"the truck inside row {row + 1}", margin, 0.0, to.axis_sigma_mm, at_most=False)
        legal = verdict.outcome != "out"
        # The truck slides across only ("Move sequence" 6): its fix is sideways, by its centre's row.
        fix = [] if legal else [self._shift_words(
            0.0, self._nudge_mm(l, (row * s, (row + 1) * s), to.axis_sigma_mm), f"row {row + 1}",
            to.axis_sigma_mm).replace("move it", "slide it", 1)]
        return {"legal": legal, "reasons": [] if verdict.outcome == "in" else [verdict.describe()], "fix": fix,
                "margin_mm": round(margin, 2), "row": row + 1, "verdict": verdict.to_json()}

    def phases(self) -> tuple[str, ...]:
        return PHASES_TYPED if self.option("sequence") == "typed" else PHASES_SHEET

    #: Each step of the turn and the book's words that make it one ("Move sequence"; the typed
    #: "TURN SEQUENCE" for the snakes and the auto-gyro), for refusals to quote.
    STEP_RULE = {
        "snakes": 'TURN SEQUENCE 1: "Dice for snake action or re-appearance"',
        "select": '"Move sequence" 1: "All players select movement (a coloured box)"',
        "move": '"Move sequence" 3: "Move all vehicles in order, lightest first to heaviest"',
        "driving": '"Move sequence" 4: "Any vehicles that have done a RED action roll against their driver skill"',
        "collisions": '"Move sequence" 5: "After all vehicles have moved do any collision rolls"',
        "truck": '"Move sequence" 6: "Move the truck sideways"',
        "bombs": '"Move sequence" 7: "Check to see if any vehicles are in a square selected as a petrol bomb '
                 'location"',
        "gyro": 'TURN SEQUENCE 9: "Drop snakes or bombs from auto-gyro"',
        "shooting": '"Move sequence" 8: "All vehicles not involved in a collision or hit by a petrol bomb that '
                    'have a shooting skill may shoot"',
    }

    #: Each action as a refusal names it.
    ACT_WORDS = {"select": "picking a box", "declare": "declaring the truck's speed", "move": "a move",
                 "drive_roll": "a driving roll", "avoid": "avoiding a collision", "collide": "a collision",
                 "truck_sideways": "the truck's sideways move", "bombs": "the petrol bombs",
                 "drop": "the auto-gyro's drop", "pass": "the auto-gyro's pass", "shoot": "shooting"}

    def _step_words(self, phase: str) -> str:
        """A step as players read it, with the book's words for it where it has them."""
        words = self.PHASE_WORDS.get(phase, phase)
        return f"{words} ({R}, {self.STEP_RULE[phase]})" if phase in self.STEP_RULE else words

    def start_round(self, state: GameState, orders: dict):
        """A new turn: snakes first (TURN SEQUENCE, 1), then every vehicle picks its box. No play
        order is given: the book's is lightest first, whoever plays the vehicles."""
        if state.over:
            raise RulesError(f"the game is over: {state.why_over}")
        if not isinstance(orders, dict) or any(m is not None for order in orders.values()
                                               for m in (order if isinstance(order, list) else [order])):
            raise RulesError(f"no play order is given in {self.title}: the book sets it ({R}, "
                             f"{self.STEP_RULE['move']}; TURN SEQUENCE 4 lists the vehicles from the Open Dirt "
                             f"Buggy to The Wagon); start the turn without one")
        if state.phase not in ("setup", "turn_over"):
            raise RulesError(f"turn {state.turn} is not over: it is at {self._step_words(state.phase)}"
                             + (f", waiting for {self._waiting(state)}" if self._waiting(state) else "")
                             + f"; the turn ends after shooting ({R}, {self.STEP_RULE['shooting']})")
        state.turn += 1
        state.phase = "snakes"
        t = state.truck
        t.speed, t.bomb_squares, t.bombs_revealed, t.sideways_done, t.cab_hit = None, [], False, False, False
        t.max_shot = t.gunner_shot = False
        state.gyro_done = False
        events, rolls = [], []
        for v in state.vehicles.values():
            v.choice, v.moved, v.from_square, v.roll_needed = None, False, None, None
            v.collided = v.bombed = v.shot = False
            v.no_shooting, v.turn_rules = [], []
            v.conditions.pop("avoiding", None)
            v.conditions.pop("stays", None)
            if v.reload and v.conditions.get("reload_turn") != state.turn:
                v.reload = False
            for key in ("only_green",):
                if key in v.conditions:
                    v.conditions[key] -= 1
                    if v.conditions[key] <= 0:
                        del v.conditions[key]
                        events.append(f"{_the(v.name)}'s engine fire goes out")
            if v.conditions.pop("dust", False):
                v.turn_rules.append("straight")
                v.no_shooting.append("dust in the driver's eyes (BLUE 2)")
        for v in sorted(state.on_board(), key=lambda v: (v.kind.order, v.marker)):
            if v.snake is not None:
                yield from self._snake_turn(state, v, events, rolls)
        state.phase = "select"
        return {"result": "turn begins", "turn": state.turn, "events": events, "rolls": rolls}

    def _snake_turn(self, state: GameState, v: Vehicle, events: list, rolls: list):
        table = D.SNAKE_TYPED if self.option("snake_table") == "typed" else D.SNAKE_SHEET
        section = "The AutoGyro" if self.option("snake_table") == "typed" else "Snakes:-"
        if self.option("snake_table") == "sheet":
            if v.snake.get("asleep"):
                face = yield from self._d10(rolls, f"does the snake in {_the(v.name)} wake? (1)", v.owner)
                if face != D.SNAKE_WAKES_ON:
                    events.append(f"the snake in {_the(v.name)} sleeps on")
                    return
                v.snake = {"active": D.SNAKE_ACTIVE_TURNS, "asleep": False}
                events.append(f"the snake in {_the(v.name)} wakes up")
        face = yield from self._d10(rolls, f"snake in {_the(v.name)}", v.owner)
        row = table[face]
        events.append(f"snake in {_the(v.name)}: {row.text} ({R}, \"{section}\" {face})")
        for effect in filter(None, row.special.split(",")):
            if effect == "snake_gone":
                v.snake = None
                return
            if effect == "snake_two_more":
                v.snake["active"] = v.snake.get("active", 0) + D.SNAKE_ACTIVE_TURNS
            elif effect == "no_shooting":
                v.no_shooting.append("the snake")
            else:
                v.turn_rules.append({"only_yellow_turn": "only_yellow", "only_green_turn": "only_green",
                                     "straight_turn": "straight"}.get(effect, effect))
        self._harm(state, v, row.structure, row.driver, row.shooting, events, "the snake")
        if row.red_roll and v.in_play:
            yield from self._driving_roll(state, v, "red", events, rolls, "the snake's bite")
        if self.option("snake_table") == "sheet" and v.snake is not None:
            v.snake["active"] = v.snake.get("active", D.SNAKE_ACTIVE_TURNS) - 1
            if v.snake["active"] <= 0:
                v.snake = {"active": 0, "asleep": True}
                events.append(f"the snake in {_the(v.name)} goes to sleep")

    def end_activation(self, state: GameState):
        """The turn ends after shooting (whoever has not shot passes): the distance is checked (the
        truck's declared speeds). At the auto-gyro's step its player passes (dropping is not
        compulsory) and the turn goes on. Every other step is compulsory: the refusal says what
        it waits for."""
        if state.over:
            raise RulesError(f"the game is over: {state.why_over}")
        if state.phase == "gyro":
            state.gyro_done = True
            events = ["the auto-gyro drops nothing this turn"]
            self._advance(state, events)
            return {"result": "passed", "events": events, "phase": state.phase, "over": state.over,
                    "winner": state.winner}
        if state.phase in ("setup", "turn_over"):
            raise RulesError(f"no turn is under way to end: start turn {state.turn + 1} ({R}, "
                             f"{self.STEP_RULE['snakes']}, then {self.STEP_RULE['select']})")
        if state.phase != "shooting":
            wait = self._waiting(state)
            raise RulesError(f"the turn ends after shooting, its last step ({R}, {self.STEP_RULE['shooting']}); "
                             f"it is at {self._step_words(state.phase)}, which nobody may pass"
                             + (f": waiting for {wait}" if wait else ""))
        t = state.truck
        t.last_speed = t.speed or 0
        state.phase = "turn_over"
        events = [f"turn {state.turn} over: the truck has gone {state.distance} of {self.option('distance_squares')} squares"]
        for v in state.vehicles.values():
            if v.kind.harpoon and v.shot:
                v.reload = True
                v.conditions["reload_turn"] = state.turn + 1
        if state.distance >= int(self.option("distance_squares")):
            self._game_over(state, "truck", f"the truck has gone {state.distance} squares, the allotted "
                                            f"{self.option('distance_squares')}")
            events.append(state.why_over)
        return {"result": "turn over", "distance": state.distance, "events": events, "over": state.over,
                "winner": state.winner}
        yield  # noqa: a resolution that asks for no dice

    def _game_over(self, state: GameState, winner: str, why: str) -> None:
        if not state.over:
            state.over, state.winner, state.why_over = True, winner, why
            state.phase = "over"

    #: The steps as a player reads them on the page.
    PHASE_WORDS = {"setup": "before the first turn", "snakes": "snakes", "select": "picking boxes in secret", "move": "moves, lightest first",
                   "driving": "driving rolls", "collisions": "collisions", "truck": "the truck's sideways move",
                   "bombs": "petrol bombs", "gyro": "the auto-gyro", "shooting": "shooting",
                   "turn_over": "the turn is over", "over": "the game is over"}

    def turn_text(self, state: GameState) -> str:
        if state.winner:
            return f"{state.winner} won: {state.why_over}" if state.why_over else f"{state.winner} won"
        if state.phase == "setup":
            return "start turn 1 (Round tab)"
        waiting = self._waiting(state)
        head = f"turn {state.turn}, {self.PHASE_WORDS.get(state.phase, state.phase)}"
        return f"{head}: waiting for {waiting}" if waiting else head

    def _waiting(self, state: GameState) -> str:
        if state.phase == "select":
            return ", ".join(v.name for v in state.on_board() if v.choice is None)
        if state.phase == "move" and state.active:
            return f"the {state.active.name} to move"
        if state.phase == "driving":
            return ", ".join(f"{_the(v.name)}'s {v.roll_needed} roll" for v in state.vehicles.values() if v.roll_needed)
        if state.phase == "collisions":
            return ", ".join(f"{_name(sq)} ({' and '.join(v.name for v in vs)})" for sq, vs in self.contested(state))
        if state.phase == "truck":
            return "the truck to move sideways"
        if state.phase == "bombs":
            return "the petrol bombs"
        if state.phase == "gyro":
            return "the auto-gyro to drop or pass"
        return ""

    def _phase_done(self, state: GameState, events: list) -> bool:
        p = state.phase
        if p == "move":
            return not state.movers()
        if p == "driving":
            return not any(v.roll_needed for v in state.vehicles.values() if v.in_play)
        if p == "collisions":
            return not self.contested(state)
        if p == "truck":
            if not state.truck.sideways_done and self.truck_sideways_squares(state) == 0:
                state.truck.sideways_done = True      # said once, in the steps passed ("nothing to do")
            return state.truck.sideways_done
        if p == "bombs":
            return state.truck.bombs_revealed and not self._bomb_victims(state)
        if p == "gyro":
            return state.gyro_done or not any(self._drop_targets(state, g) for g in self._gyros(state))
        return False

    def _advance(self, state: GameState, events: list) -> None:
        """On to the next step whose work is not done (a step with nothing to do is passed)."""
        order = self.phases()
        passed: list[str] = []
        while not state.over and state.phase in order and self._phase_done(state, events):
            i = order.index(state.phase)
            if i + 1 >= len(order):
                break
            state.phase = order[i + 1]
            passed.append(state.phase)
            if state.phase == "bombs":
                self._reveal_bombs(state, events)
        # One line for the steps passed, in players' words: a line a step ("step: driving; step:
        # collisions; ...") said the same thing over and over (usability pass).
        if passed:
            skipped = [self.PHASE_WORDS.get(p, p) for p in passed[:-1]]
            events.append(f"on to {self.PHASE_WORDS.get(passed[-1], passed[-1])}"
                          + (f" ({', '.join(skipped)}: nothing to do)" if skipped else ""))

    # --- dice ---------------------------------------------------------------------------------

    def _d10(self, rolls: list, purpose: str, who: str, mods=(), **extra):
        req = DiceRequest((D.DIE,), purpose, who)
        face = (yield req).faces[0]
        roll = Roll(req, face, tuple(mods))
        rolls.append({**roll.to_json(), **extra})
        return face

    # --- damage -------------------------------------------------------------------------------

    def _harm(self, state: GameState, v: Vehicle, structure: int, driver: int, shooting: int, events: list,
              why: str) -> None:
        """Points off a vehicle's structure and skills; a vehicle at 0 structure is wrecked, a
        driver at 0 is out ("Gang Vehicle Templates"); the truck stopped ends the game."""
        if not v.in_play or not (structure or driver or shooting):
            return
        v.structure = max(0, v.structure - structure)
        v.driver = max(0, v.driver - driver)
        v.shooting = max(0, v.shooting - shooting)
        if v.is_truck:
            v.max_track()
        if v.kind.flying:
            v.dropping = max(0, v.dropping - shooting)
        parts = [f"{n} {what}" for n, what in ((structure, "structure"), (driver, "off Max" if v.is_truck else
                                                                          "driver skill"),
                                                (shooting, "shooting skill")) if n]
        events.append(f"{_the(v.name)} takes {', '.join(parts)} ({why}): structure {v.structure}, "
                      f"{'Max' if v.is_truck else 'driver'} {v.driver}")
        if v.is_truck:
            if v.structure == 0:
                self._game_over(state, "gang", "the truck is stopped: its structure is 0")
            elif v.driver == 0:
                self._game_over(state, "gang", "the truck is stopped: Max is out")
            if state.over:
                events.append(state.why_over)
            return
        if v.structure == 0:
            self._eliminate(state, v, "wrecked", events)
        elif v.driver == 0:
            self._eliminate(state, v, "driver out", events)

    def _eliminate(self, state: GameState, v: Vehicle, why: str, events: list) -> None:
        if not v.in_play:
            return
        v.out = why
        v.conditions["out_turn"] = state.turn
        v.roll_needed = None
        events.append(f"{_the(v.name)} is out of the game ({why})")
        if not self.truck_side(state, v):
            state.eliminated += 1
            if self.option("regain_on_elimination"):
                tv = state.truck_vehicle
                before = tv.structure
                tv.structure = min(tv.max_structure, tv.structure + D.ELIMINATION_REGAIN)
                events.append(f"the truck regains {tv.structure - before} structure ({R}, \"Optional rule\")")

    def _apply_row(self, state: GameState, v: Vehicle, row: D.Row, events: list, rolls: list, why: str):
        """A damage table's row on a vehicle (not the truck's crew or tyres)."""
        if row.dead:
            self._eliminate(state, v, f"dead ({why})", events)
            return
        self._harm(state, v, row.structure, row.driver, row.shooting, events, why)
        if row.weapon_lost and v.in_play:
            v.weapon_lost = True
            v.shooting = 0
            events.append(f"{_the(v.name)}'s hand weapon is destroyed: no more shooting")
        if row.red_roll and v.in_play:
            yield from self._driving_roll(state, v, "red", events, rolls, why)

    # --- driving rolls and the RED / BLUE tables ----------------------------------------------

    def _driving_roll(self, state: GameState, v: Vehicle, colour: str, events: list, rolls: list, why: str):
        """"Roll 1d10 equal or less than current driver skill. If fail roll on the RED table";
        a blue action against twice the skill, a fail on the BLUE table (truck sheet)."""
        mods = []
        if colour == "red" and v.conditions.get("red_plus"):
            mods.append(Modifier(v.conditions["red_plus"], "steering trouble (on red actions)"))
        target = v.driver * (D.BLUE_SKILL_FACTOR if colour == "blue" else 1)
        who = "Max" if v.is_truck else v.owner
        face = yield from self._d10(rolls, f"{colour} driving roll for {_the(v.name)} ({why}; needs {target} or less)",
                                    who, mods, target=target)
        total = face + sum(m.value for m in mods)
        passed = total <= target
        rolls[-1]["passed"] = passed
        events.append(f"{_the(v.name)}'s {colour} driving roll: {total} against {target}: "
                      f"{'made' if passed else 'failed'}")
        if passed:
            return
        if colour == "red":
            yield from self._red_table(state, v, events, rolls, 0)
        else:
            yield from self._blue_table(state, v, events, rolls)

    def _red_table(self, state: GameState, v: Vehicle, events: list, rolls: list, depth: int):
        table = D.TABLES[self.option("tables")]["red"]
        section = D.TABLE_SECTIONS[self.option("tables")]["red"]
        face = yield from self._d10(rolls, f"RED table for {_the(v.name)}", v.owner)
        row = table[face]
        events.append(f"RED table {face} for {_the(v.name)}: {row.text} ({R}, \"{section}\")")
        if row.roll_twice:
            for _ in range(2):
                if v.in_play and not state.over and depth < 3:
                    yield from self._red_table(state, v, events, rolls, depth + 1)
            return
        self._harm(state, v, row.structure, row.driver, row.shooting, events, "RED table")
        yield from self._special(state, v, row.special, events, rolls, "RED table")

    def _blue_table(self, state: GameState, v: Vehicle, events: list, rolls: list):
        face = yield from self._d10(rolls, f"BLUE table for {_the(v.name)}", v.owner)
        row = D.BLUE_TABLE[face]
        events.append(f"BLUE table {face} for {_the(v.name)}: {row.text} ({R}, sheet \"BLUE ROLL\")")
        yield from self._special(state, v, row.special, events, rolls, "BLUE table")

    def _special(self, state: GameState, v: Vehicle, special: str, events: list, rolls: list, why: str):
        c = v.conditions
        if not special or not v.in_play:
            return
        if special in ("no_top_gear", "only_yellow", "cracked_chassis", "no_brakes", "no_top_speed", "gear_down_next",
                       "dust"):
            c[special] = True
        elif special == "only_green" or special == "fire_green":
            c["only_green"] = 2
        elif special == "stuck_gear":
            c["stuck_gear"] = v.gear
        elif special in ("red_plus_1", "red_plus_2"):
            c["red_plus"] = c.get("red_plus", 0) + int(special[-1])
        elif special == "lose_gear":
            yield from self._lose_gear(state, v, events)
        elif special in ("pull_left", "pull_right"):
            c["pull"] = 1 if special == "pull_left" else -1
        elif special == "fire_d10_half":
            face = yield from self._d10(rolls, f"engine fire in {_the(v.name)} (1d10/2)", v.owner)
            self._harm(state, v, self._half(face), 0, 0, events, "engine fire")
        elif special == "kangaroo":
            face = yield from self._d10(rolls, f"{_the(v.name)} hits a kangaroo (1d10 points)", v.owner)
            yield from self._kangaroo(state, v, face, events)
        elif special in ("big_accident", "blown_it"):
            if v.is_truck:
                events.append(f"{why}: a big accident does not apply to Max")
                return
            face = yield from self._d10(rolls, f"{_the(v.name)}'s driver out of the wreck alive? "
                                               f"({'less than' if special == 'blown_it' else 'at most'} {v.driver})",
                                        v.owner)
            alive = face < v.driver if special == "blown_it" else face <= v.driver
            self._eliminate(state, v, "wrecked in a big accident" + ("" if alive else ", the driver killed"), events)
        elif special in ("understeer", "oversteer"):
            box = v.choice
            side = box.side if box is not None else 0
            if special == "understeer":
                step = (1 if side > 0 else -1) if side else self._away_from_truck(state, v)
            else:
                step = (-1 if side > 0 else 1) if side else 0
            if step and v.is_truck:
                # The truck steers by its sideways move (step 6): the square is added to its slide,
                # pushing as any slide does; once it has slid (option sequence "sheet") it is too late.
                if state.truck.sideways_done:
                    events.append(f"{why}: the truck has moved sideways already this turn; no effect")
                else:
                    c["truck_steer"] = [state.turn, step]
                    events.append(f"the truck {'under' if special == 'understeer' else 'over'} steers: one square "
                                  f"{'left' if step > 0 else 'right'} more in its sideways move")
            elif step:
                yield from self._shift(state, v, (0, step), events,
                                       f"{'under' if special == 'understeer' else 'over'} steer ({why})")
        elif special == "red_table":
            yield from self._red_table(state, v, events, rolls, 0)

    def _player_of(self, state: GameState, v: Vehicle) -> str:
        """The player who chooses for a vehicle: its owner (Max's player for the truck)."""
        return v.owner

    def _lose_gear(self, state: GameState, v: Vehicle, events: list):
        """RED 8: "Loose a gear, player's choice": the vehicle's player picks which of the gears it
        still has is lost (a ChoiceRequest). A vehicle with one gear left keeps it: it could not
        move at all otherwise."""
        lost = set(v.conditions.get("lost_gears", []))
        left = [g for g in range(1, v.kind.top_gear + 1) if g not in lost]
        if len(left) < 2:
            events.append(f"{_the(v.name)} has no gear to lose (only gear {left[0] if left else v.gear} left)")
            return
        gear = yield ChoiceRequest(self._player_of(state, v), "which gear is lost (RED table: lose a gear)",
                                   tuple({"value": g, "label": f"gear {g}" + (" (the gear it is in)" if g == v.gear
                                                                              else "")} for g in left),
                                   v.name)
        lost.add(gear)
        v.conditions["lost_gears"] = sorted(lost)
        events.append(f"{_the(v.name)} loses gear {gear} ({v.owner}'s choice)")

    def _kangaroo(self, state: GameState, v: Vehicle, points: int, events: list):
        """RED 7: "take 1d10 damage points. These may come off any combination of skills or
        structure points": the vehicle's player splits them (ChoiceRequests), how many off
        structure, then how many of the rest off the driver skill, the rest off the shooting
        skill. By default (option kangaroo_points) no track is given more than it holds (points
        past a track's 0 would be points not taken), and a vehicle with no shooting (or the truck,
        whose only skill is Max's) has them between structure and driver."""
        player = self._player_of(state, v)
        shoot_cap = 0 if (v.is_truck or v.kind.arc == "none" or v.weapon_lost) else v.shooting
        caps = {"structure": v.structure, "driver": v.driver, "shooting": shoot_cap}
        if self.option("kangaroo_points") == "any":
            caps = {k: (0 if k == "shooting" and v.is_truck else points) for k in caps}
        driver_word = "off Max" if v.is_truck else "off driver skill"
        lo = max(0, points - caps["driver"] - caps["shooting"])
        hi = min(points, caps["structure"])
        take = {"structure": lo, "driver": 0, "shooting": 0}
        if hi > lo:
            take["structure"] = yield ChoiceRequest(
                player, f"how many of the kangaroo's {points} points come off structure (the rest "
                        f"{driver_word}{' or shooting skill' if shoot_cap else ''})",
                tuple({"value": n, "label": f"{n} off structure"} for n in range(lo, hi + 1)), v.name)
        rest = points - take["structure"]
        lo = max(0, rest - caps["shooting"])
        hi = min(rest, caps["driver"])
        take["driver"] = lo
        if hi > lo:
            take["driver"] = yield ChoiceRequest(
                player, f"how many of the {rest} points left come off {'Max' if v.is_truck else 'driver skill'} "
                        f"(the rest off shooting skill)",
                tuple({"value": n, "label": f"{n} {driver_word}, {rest - n} off shooting"} for n in range(lo, hi + 1)),
                v.name)
        take["shooting"] = min(rest - take["driver"], caps["shooting"])
        events.append(f"{v.owner} splits the kangaroo's {points} points: {take['structure']} structure, "
                      f"{take['driver']} {'Max' if v.is_truck else 'driver'}, {take['shooting']} shooting")
        self._harm(state, v, take["structure"], take["driver"], take["shooting"], events, "kangaroo")

    def _half(self, face: int) -> int:
        """A "1d10/2" roll halved (option halves)."""
        return (face + 1) // 2 if self.option("halves") == "up" else face // 2

    def _away_from_truck(self, state: GameState, v: Vehicle) -> int:
        """One square sideways away from the truck's row (+1 left); in the truck's row (ahead of it
        or behind it, where the book gives no side), left."""
        tr = state.truck_vehicle.square[1]
        return 1 if v.square[1] >= tr else -1

    def _shift(self, state: GameState, v: Vehicle, step: tuple[int, int], events: list, why: str):
        """The rules move a car by squares: off the board it is out, else its players put it in
        its new square before the resolution goes on (later rules read where it stands)."""
        new = (v.square[0] + step[0], v.square[1] + step[1])
        if not self.on_grid(new):
            self._eliminate(state, v, f"{why} off the board", events)
            return
        v.square = new
        self._arrive(state, v, step)
        events.append(f"{_the(v.name)} goes to {_name(new)} ({why})")
        yield from self._put(state, v, new, why)

    #: How far a car put where the rules say may be turned from the board's heading, in degrees.
    #: The book judges a car by its square alone ("Concept and Board Layout"; "Movement": moves
    #: are "forward" and "left"/"right" on the board): a car stands facing the truck's way, nearer
    #: along the board than across it.
    PLACE_HEADING_DEG = 45.0

    def square_reach_mm(self, state: GameState, v: Vehicle, to: Pose, sq: tuple[int, int]) -> float:
        """How far from `to` a car put in square `sq` may stand and still fit: out to the square's
        farthest corner from the point `to` puts in it (option square_point), so a car whose point
        is anywhere inside the square fits, wherever in it the page's outline is drawn."""
        s = state.square_mm
        f, l = state.board_origin.to_local(self._point(v, to)[0])
        return math.ceil(max(math.hypot(f - c * s, l - r * s) for c in (sq[0], sq[0] + 1)
                             for r in (sq[1], sq[1] + 1)) * 10) / 10

    def _put(self, state: GameState, v: Vehicle, sq: tuple[int, int], why: str):
        """Ask for a car the rules moved to be put in square `sq` (its middle, or beside a model
        already there: `square_pose`), any pose with its point in the square fitting, facing the
        board's way; "put the Buggy here: bumped sideways ..., into square 4,3"."""
        to = Pose(*self.square_pose(state, v, sq))
        why = f"{why}, into {_name(sq)}"
        yield from self.place(state, v, to, why, tolerance_mm=self.square_reach_mm(state, v, to, sq),
                              tolerance_deg=self.PLACE_HEADING_DEG)
        state.placed.append({"vehicle": v.marker, "name": v.name, "square": [sq[0] + 1, sq[1] + 1], "why": why,
                             "pose": [round(v.pose.x_mm, 2), round(v.pose.y_mm, 2), round(v.pose.heading_deg, 2)]})

    #: How far inside a square's edge a car put beside another in it stands (its point), in mm:
    #: clear of the line by far more than the camera's doubt.
    BESIDE_MARGIN_MM = 10.0

    def square_pose(self, state: GameState, v: Vehicle, sq: tuple[int, int]) -> list[float]:
        """Where to put a car so that it stands in square `sq`, facing along the board:
        [x_mm, y_mm, heading_deg], its point (option square_point) on the square's middle; or,
        when another model stands in that square already (a contested square, the truck's side),
        beside it across the board, its point BESIDE_MARGIN_MM inside the square's edge, on the
        side away from the other (where it comes from, when that is no help): two models cannot
        stand on one spot, and a roof marker under another car would be lost to the camera."""
        s = state.square_mm
        heading = state.board_origin.heading_deg
        lateral = 0.0
        others = self._models_in(state, v, sq)
        if others:
            reach = s / 2 - min(self.BESIDE_MARGIN_MM, s / 4)
            mine = state.board_origin.to_local(v.pose.xy)[1] - (sq[1] + 0.5) * s if v.pose is not None else 0.0
            lateral = max((0.0, reach, -reach),
                          key=lambda x: (min(abs(x - o) for o in others), x * mine > 0, -abs(x)))
        centre = state.board_origin.to_table((sq[0] + 0.5) * s, (sq[1] + 0.5) * s + lateral)
        if self.option("square_point") == "front_bumper":
            centre = centre - v.length_mm / 2 * np.array([math.cos(math.radians(heading)),
                                                          math.sin(math.radians(heading))])
        return [round(float(centre[0]), 1), round(float(centre[1]), 1), round(heading, 1) + 0.0]   # no -0.0

    def _models_in(self, state: GameState, v: Vehicle, sq: tuple[int, int]) -> list[float]:
        """The other models standing in square `sq` (the truck in its four), each as how far its
        centre is across from the square's middle line (mm, + left)."""
        s = state.square_mm
        out = []
        for o in state.vehicles.values():
            if o is v or not o.in_play or o.pose is None:
                continue
            f, l = state.board_origin.to_local(o.pose.xy)
            inside = sq in self.truck_squares(state) if o.is_truck else (
                0 <= f - sq[0] * s <= s and 0 <= l - sq[1] * s <= s)
            if inside:
                out.append(l - (sq[1] + 0.5) * s)
        return out

    def truck_row_pose(self, state: GameState, row: int) -> list[float]:
        """Where the truck stands in row `row` (counted from 0): its centre on the row's middle, as
        far along the board as it stands now, facing along it."""
        tv = state.truck_vehicle
        s = state.square_mm
        along = state.board_origin.to_local(tv.pose.xy)[0] if tv.pose is not None else 6 * s
        centre = state.board_origin.to_table(along, (row + 0.5) * s)
        return [round(float(centre[0]), 1), round(float(centre[1]), 1), round(state.board_origin.heading_deg, 1) + 0.0]

    def _arrive(self, state: GameState, v: Vehicle, step: tuple[int, int], *, came: bool = True) -> None:
        """The order cars came into their squares says who is the collider in a contested one.
        A car that stayed in its square (`came` False: its box kept pace with the truck) came
        into nothing: a car driving into it is the collider, not it."""
        if came:
            v.arrival = max([o.arrival for o in state.vehicles.values()] + [0]) + 1
        v.conditions["last_step"] = list(step)

    # --- the boxes a vehicle may pick -----------------------------------------------------------

    def allowed_boxes(self, state: GameState, v: Vehicle) -> tuple[list[Box], list[str]]:
        """The boxes the vehicle may pick this turn, and the rules that narrowed them."""
        boxes, why, _ = self._narrow_boxes(state, v)
        return boxes, why

    #: What each rule narrowing a vehicle's picks is, in players' words with the table it comes
    #: from (the typed RED table or the sheets' BLUE and RED rolls, the snake tables): the reason
    #: a refused box is refused, leading its refusal.
    NARROW_WORDS = {
        "restart": "an emergency stop: it starts again in first gear (the Plated Wrecker's sheet, \"ES\")",
        "stuck_gear": "clutch failure (RED table): stuck in gear {gear} for the rest of the game",
        "gear_down_next": "a missed gear (BLUE roll 1): one gear lower this turn",
        "no_top_gear": "binding brakes (RED table): no top gear",
        "lost_gears": "gear {gear} is lost (RED table: lose a gear)",
        "no_top_speed": "a fuel blockage (BLUE roll 9): no top square speed in any gear",
        "cracked_chassis": "a cracked chassis (RED roll 4): no red boxes",
        "only_yellow": "only yellow boxes ({whose})",
        "only_green": "only green boxes ({whose})",
        "straight": "only straight boxes ({whose})",
        "must_red": "only red boxes (the snake, this turn)",
        "must_blue": "only blue boxes (the snake, this turn)",
    }

    def _narrow_boxes(self, state: GameState, v: Vehicle) -> tuple[list[Box], list[str], dict[str, list[str]]]:
        """The boxes the vehicle may pick this turn, the rules that narrowed them (short), and for
        every box of its sheet that may not be picked, why, in players' words: the rules that took
        it out, the lasting ones (a table's result) before the gear change it would take."""
        tpl, c = v.kind, v.conditions
        why: list[str] = []
        refused: dict[str, list[str]] = {}
        every = [b for g in range(1, tpl.top_gear + 1) for b in tpl.boxes(g)]

        def out(boxes, reason: str) -> None:
            for b in boxes:
                refused.setdefault(b.key, []).append(reason)

        reach = set(range(v.gear - tpl.gear_change, v.gear + tpl.gear_change + 1)) & set(range(1, tpl.top_gear + 1))
        # A stuck clutch leads an emergency stop's restart: "for rest of game" admits no first gear,
        # and a car stopped in gear 3 then restarting in gear 1 and stuck in 3 would jump two gears.
        if "stuck_gear" in c:
            gears = [c["stuck_gear"]]
            why.append(f"clutch failure: stuck in gear {c['stuck_gear']}")
            out([b for b in every if b.gear != c["stuck_gear"]], self.NARROW_WORDS["stuck_gear"].format(gear=c["stuck_gear"]))
        elif "restart" in c:
            gears = [1]
            why.append("an emergency stop: it starts again in first gear")
            out([b for b in every if b.gear != 1], self.NARROW_WORDS["restart"])
        elif c.get("gear_down_next"):
            gears = [max(1, v.gear - 1)]
            why.append("missed gear: one gear lower")
            out([b for b in every if b.gear != gears[0]], self.NARROW_WORDS["gear_down_next"])
        else:
            gears = sorted(reach)
        if c.get("no_top_gear") and tpl.top_gear in gears and len(gears) > 1:
            gears.remove(tpl.top_gear)
            why.append("binding brakes: no top gear")
        if c.get("no_top_gear") and tpl.top_gear not in gears:
            # Top gear is out by the brakes whether or not it was in reach: the lasting reason leads.
            out([b for b in every if b.gear == tpl.top_gear], self.NARROW_WORDS["no_top_gear"])
        lost = set(c.get("lost_gears", []))
        if lost & set(gears):
            kept = [g for g in gears if g not in lost]
            if kept:
                gears = kept
                for g in sorted(lost):
                    out([b for b in every if b.gear == g], self.NARROW_WORDS["lost_gears"].format(gear=g))
            why.append(f"lost gear(s) {', '.join(map(str, sorted(lost)))}")
        # The gear change a turn ("Players may go up or down one gear per turn"; the bike two):
        # said of a gear out of reach once no lasting rule has said more.
        change = f"up or down {tpl.gear_change} gear{'s' if tpl.gear_change > 1 else ''} a turn"
        for b in every:
            if b.gear not in reach and b.gear not in gears:
                refused.setdefault(b.key, []).append(f"gear {b.gear} is out of reach from gear {v.gear} ({change})")
        boxes = [b for g in gears for b in tpl.boxes(g)]
        if c.get("no_top_speed"):
            slow = [b for b in boxes if b.forward < max(x.forward for x in tpl.boxes(b.gear))]
            out([b for b in boxes if b not in slow], self.NARROW_WORDS["no_top_speed"])
            boxes = slow
            why.append("fuel blockage: no top square speed")
        rules = set(v.turn_rules)
        whose = {r: "the snake, this turn" for r in rules}
        if "straight" in rules and "dust" in " ".join(v.no_shooting):
            whose["straight"] = "dust in the driver's eyes, BLUE roll 2, this turn"
        if c.get("only_yellow"):
            rules.add("only_yellow")
            whose.setdefault("only_yellow", "a steering problem, RED table")
        if c.get("only_green"):
            rules.add("only_green")
            whose.setdefault("only_green", "an engine fire, RED roll 8")
        if c.get("cracked_chassis"):
            out([b for b in boxes if b.colour == "red"], self.NARROW_WORDS["cracked_chassis"])
            boxes = [b for b in boxes if b.colour != "red"]
            why.append("cracked chassis: no red")
        colour_limits = []     # the colour limits that did narrow the boxes: (colour, the refusal's words)
        for r, keep in (("only_yellow", lambda b: b.colour == "yellow"), ("only_green", lambda b: b.colour == "green"),
                        ("straight", lambda b: b.side == 0), ("must_red", lambda b: b.colour == "red"),
                        ("must_blue", lambda b: b.colour == "blue")):
            if r in rules:
                narrowed = [b for b in boxes if keep(b)]
                if narrowed:
                    words = self.NARROW_WORDS[r].format(whose=whose.get(r, ""))
                    out([b for b in boxes if not keep(b)], words)
                    boxes = narrowed
                    why.append(r.replace("_", " "))
                    if r != "straight":
                        colour_limits.append((r.split("_")[1], words))
                else:
                    why.append(f"{r.replace('_', ' ')}: no such box in its gears, so any")
        no_es = []
        if v.is_truck or tpl.flying:
            no_es.append(f"{_the(v.name)} has no emergency stop (\"ES\" is on the gang's car sheets)")
        if c.get("no_brakes"):
            no_es.append("no brakes (RED roll 5): no emergency stop")
        if "stuck_gear" in c and self.option("es_stuck_clutch") == "refused":
            no_es.append(self.NARROW_WORDS["stuck_gear"].format(gear=c["stuck_gear"])
                         + ", and an emergency stop would start it again in first gear")
        if colour_limits and self.option("es_colour_limit") == "refused":
            no_es += [f"{words}, and the emergency stop is no {colour} box" for colour, words in colour_limits]
        if no_es:
            refused.setdefault(ES, []).extend(no_es)
        else:
            boxes.append(Box(v.gear, 0, 0, "es"))
        # A box still allowed under another key (the same box in two gears is never so) is not refused.
        allowed = {b.key for b in boxes}
        refused = {k: rs for k, rs in refused.items() if k not in allowed}
        for rs in refused.values():
            # The lasting rules first, the gear change last; each said once.
            rs.sort(key=lambda r: "out of reach" in r)
            rs[:] = list(dict.fromkeys(rs))
        return boxes, why, refused

    def target_square(self, state: GameState, v: Vehicle, box: Box, speed: int) -> tuple[int, int]:
        """Where a box takes a vehicle: its forward squares less the truck's speed along the
        board, its sideways squares across ("Movement")."""
        side = box.side + (v.conditions.get("pull", 0) if box.colour != "es" else 0)
        return v.square[0] + box.forward - speed, v.square[1] + side

    def truck_sideways_squares(self, state: GameState) -> int:
        """The truck's sideways move this turn: its box's and the pull of burst tyres
        (option tyre_pull), + left."""
        t = state.truck
        tv = state.truck_vehicle
        side = tv.choice.side if tv.choice is not None else 0
        # BLUE 7/8, "always steers 1 square left (right) of desired", and this turn's under or over steer.
        side += tv.conditions.get("pull", 0)
        steer = tv.conditions.get("truck_steer")
        if steer and steer[0] == state.turn:
            side += steer[1]
        per = 2 if self.option("tyre_pull") == "per_two" else 3
        diff = t.tyres_burst["left"] - t.tyres_burst["right"]
        pull = int(abs(diff) // per) * (1 if diff > 0 else -1)
        return side + pull

    # --- resolving actions ---------------------------------------------------------------------

    def before_action(self, state: GameState, action: dict) -> None:
        """Every action: not after the game is over; this action's events and placements start
        empty."""
        if state.over:
            raise RulesError(f"the game is over: {state.why_over}")
        state.events = []
        state.placed = []

    def after_action(self, state: GameState, action: dict, result: dict) -> dict:
        """On to the next step with work to do; the outcome says what happened, the step the turn
        is at, and where each car the rules moved was put (`placed`: {"vehicle", "name",
        "square": [column, row], "why", "pose"})."""
        events, placed = state.events, state.placed
        self._advance(state, events)
        state.events, state.placed = [], []
        result["events"] = events
        result["act"] = action.get("act")
        result["phase"] = state.phase
        result["over"], result["winner"] = state.over, state.winner
        if placed:
            result["placed"] = placed
        return result

    def _vehicle(self, state: GameState, action: dict) -> Vehicle:
        if "vehicle" not in action:
            raise RulesError(f"{action.get('act')}: say which vehicle ('vehicle')")
        v = state.vehicle(action["vehicle"])
        if not v.in_play:
            raise RulesError(f"{_the(v.name)} is out of the game ({v.out})")
        return v

    def _phase(self, state: GameState, *phases: str, act: str) -> None:
        if state.phase not in phases:
            wait = self._waiting(state)
            raise RulesError(f"{self.ACT_WORDS.get(act, act)} is for "
                             f"{' or '.join(self._step_words(p) for p in phases)}; the game is at: "
                             f"{self.PHASE_WORDS.get(state.phase, state.phase)}"
                             + (f" (waiting for {wait})" if wait else ""))

    def _find_box(self, state: GameState, v: Vehicle, key) -> Box:
        """The box `key` if the vehicle may pick it now; else a refusal that leads with why not,
        in players' words (the rule that took it out: binding brakes, a lost gear, the snake...;
        the gear change a turn only when that is the reason), then what it may pick."""
        boxes, _, refused = self._narrow_boxes(state, v)
        for b in boxes:
            if b.key == key:
                return b
        may = f"it may pick: {', '.join(b.key for b in boxes)}"
        if key is None:
            raise RulesError(f"select: say which box {_the(v.name)} picks ('box'); {may}")
        known = next((b for g in range(1, v.kind.top_gear + 1) for b in v.kind.boxes(g) if b.key == key), None)
        if known is None and key != ES:
            raise RulesError(f"{_the(v.name)} has no box {key!r} on its sheet (a box is named gear:forward, and "
                             f"its sideways squares: 3:4 1L); {may}")
        what = "its emergency stop" if known is None else f"{key} ({self.box_words(v, known)})"
        reasons = refused.get(key) or ["not allowed now"]
        raise RulesError(f"{_the(v.name)} cannot pick {what}: {'; '.join(reasons)}; {may}")

    @action("select", fields={"vehicle": "marker", "box": "text", "bomb1": SQUARE, "bomb2": SQUARE})
    def _act_select(self, state: GameState, action: dict):
        """Step 1: the vehicle picks a box in secret; the truck its petrol bomb squares too."""
        events = state.events
        self._phase(state, "select", act="select")
        v = self._vehicle(state, action)
        if not v.on_board:
            raise RulesError(f"{_the(v.name)} is not on the board yet: it comes on with 'enter'")
        box = self._find_box(state, v, action.get("box"))
        if v.is_truck:
            # One square per petrol bomber ("bomb1", "bomb2", each [column, row]), or none.
            bombs = [action.get("bomb1"), action.get("bomb2")]
            alive = [i for i, pts in enumerate(state.truck.bombers) if pts > 0]
            chosen = []
            for i, raw in enumerate(bombs):
                if raw is None:
                    chosen.append(None)
                    continue
                if i not in alive:
                    raise RulesError(f"petrol bomber {i + 1} is out: no bomb square for him")
                sq = _sq(raw, f"bomb square {i + 1}")
                self._check_bomb_square(state, sq, i)
                chosen.append(sq)
            state.truck.bomb_squares = chosen + [None] * (2 - len(chosen))
            state.truck.bomb_row = state.truck_vehicle.square[1]
        v.choice = box
        return {"result": "selected", "vehicle": v.marker, "secret": True}
        yield  # noqa: a resolution that asks for no dice

    def _check_bomb_square(self, state: GameState, sq: tuple[int, int], i: int) -> None:
        reach = int(self.option("bomb_reach"))
        if not self.on_grid(sq):
            raise RulesError(f"bomb square {i + 1} ({_name(sq)}) is off the board")
        truck = self.truck_squares(state)
        if sq in truck:
            raise RulesError(f"bomb square {i + 1} ({_name(sq)}) is the truck's own")
        near = min(max(abs(sq[0] - c), abs(sq[1] - r)) for c, r in truck)
        if near > reach:
            raise RulesError(f"bomb square {i + 1} ({_name(sq)}) is {near} squares from the truck; a petrol bomber "
                             f"reaches {reach} (option bomb_reach)")

    def roll_for_box(self, v, b) -> str | None:
        """The driving roll a box asks for: "red", "blue" or None. A cracked chassis (RED ROLL
        4 on the sheet) counts blue boxes as red and its top green as blue."""
        if b.colour == "green" and v.conditions.get("cracked_chassis") and self._top_green(v, b):
            return "blue"
        if b.colour in ("red", "blue"):
            return "red" if (b.colour == "red" or v.conditions.get("cracked_chassis")) else "blue"
        return None

    @action("declare", fields={"vehicle": "marker"})
    def _act_declare(self, state: GameState, action: dict):
        """Step 2: the truck declares its forward speed; the picks are shown. Top gear after
        four turns costs 2 structure ("Moves in top gear")."""
        events = state.events
        self._phase(state, "select", act="declare")
        v = self._vehicle(state, action)
        if not v.is_truck:
            raise RulesError(f"the truck declares its speed, not {_the(v.name)}")
        waiting = [o.name for o in state.on_board() if o.choice is None]
        if waiting:
            raise RulesError(f"still to pick a box: {', '.join(waiting)}")
        t = state.truck
        box = v.choice
        t.speed = box.forward
        state.distance += box.forward
        events.append(f"the truck declares speed {box.forward} (gear {box.gear}): {state.distance} squares gone")
        if box.gear == v.kind.top_gear:
            t.top_gear_turns += 1
            if t.top_gear_turns > D.TOP_GEAR_FREE_TURNS:
                self._harm(state, v, D.TOP_GEAR_DAMAGE, 0, 0, events,
                           f"top gear turn {t.top_gear_turns}, after the fourth ({R}, \"Moves in top gear\")")
        picks = {}
        for o in state.on_board():
            b = o.choice
            picks[str(o.marker)] = b.key
            if b.colour == "es":
                o.no_shooting.append("emergency stop")
                o.conditions["restart"] = True
            else:
                o.gear = b.gear
                o.conditions.pop("restart", None)
                o.conditions.pop("gear_down_next", None)
            roll = self.roll_for_box(o, b)
            if roll == "blue" and b.colour == "green":
                events.append(f"{_the(o.name)}'s cracked chassis: its top green box {b.label} counts as blue")
            if roll is not None:
                o.roll_needed = roll
                if roll == "red":
                    o.no_shooting.append("a RED action")
        if not state.over:      # top gear's damage may have stopped the truck
            state.phase = "move"
        return {"result": "declared", "speed": box.forward, "distance": state.distance, "picks": picks}
        yield  # noqa: a resolution that asks for no dice

    def _top_green(self, v: Vehicle, box: Box) -> bool:
        """A green box the sheet's cracked chassis counts as blue (option cracked_top_green)."""
        if self.option("cracked_top_green") == "top_gear":
            return box.gear == v.kind.top_gear
        return box.forward == max(b.forward for b in v.kind.boxes(box.gear) if b.colour == "green")

    @action("move", fields={"vehicle": "marker", "to": "pose"})
    def _act_move(self, state: GameState, action: dict):
        """Step 3: the next vehicle, lightest first, goes to the square its box reaches; the
        camera's pose of it (`to`) must be in that square."""
        events = state.events
        self._phase(state, "move", act="move")
        v = self._vehicle(state, action)
        nxt = state.active
        if nxt is None or nxt.marker != v.marker:
            raise RulesError(f"it is {_the(nxt.name)}'s move, not {_the(v.name)}'s (lightest first: "
                             f"{', '.join(o.name for o in state.movers())}; {R}, \"TURN SEQUENCE\" 4)")
        box = v.choice
        want = self.target_square(state, v, box, state.truck.speed)
        out = {"result": "moved", "vehicle": v.marker, "box": box.key, "from": [v.square[0] + 1, v.square[1] + 1],
               "to_square": None if not self.on_grid(want) else [want[0] + 1, want[1] + 1]}
        v.from_square = v.square
        if not self.on_grid(want):
            v.moved = True
            self._eliminate(state, v, "drove off the board", events)
            out["result"] = "off the board"
            return out
        if "to" not in action:
            raise RulesError(f"move: put {_the(v.name)} in {_name(want)} and give its pose ('to')")
        pose = parse_pose(action["to"], f"move, {_the(v.name)}")
        sq, note = self._square_at(state, v, pose, want, "goes to")
        if note:
            events.append(note)
        v.square, v.pose, v.moved = sq, pose, True
        self._arrive(state, v, (box.forward - state.truck.speed, sq[1] - v.from_square[1]), came=sq != v.from_square)
        events.append(f"{_the(v.name)} moves {box.label} (gear {box.gear}) to {_name(sq)}")
        out["square_verdict"] = self.locate(state, v, pose)["verdict"].to_json()
        return out
        yield  # noqa: a resolution that asks for no dice

    @action("drive_roll", fields={"vehicle": "marker"})
    def _act_drive_roll(self, state: GameState, action: dict):
        """Step 4: a vehicle that did a RED (or blue) action rolls against its driver skill."""
        events = state.events
        self._phase(state, "driving", act="drive_roll")
        v = self._vehicle(state, action)
        if not v.roll_needed:
            need = [o.name for o in state.vehicles.values() if o.roll_needed]
            raise RulesError(f"{_the(v.name)} owes no driving roll (owing: {', '.join(need) or 'nobody'})")
        rolls: list = []
        colour, v.roll_needed = v.roll_needed, None
        yield from self._driving_roll(state, v, colour, events, rolls, f"a {colour} box")
        return {"result": "rolled", "vehicle": v.marker, "colour": colour, "rolls": rolls,
                "passed": bool(rolls and rolls[0].get("passed"))}

    @action("avoid", fields={"vehicle": "marker", "square": SQUARE, "to": "pose"})
    def _act_avoid(self, state: GameState, action: dict):
        """The bike (any direction) and the trike (sideways) may move one square out of a
        contested square, and then may not shoot (Notes)."""
        events = state.events
        self._phase(state, "collisions", act="avoid")
        v = self._vehicle(state, action)
        how = v.kind.avoid
        if not how:
            raise RulesError(f"{_the(v.name)} cannot avoid a collision; only the bike and the trike can (Notes)")
        mine = next((vs for sq, vs in self.contested(state) if v in vs), None)
        if mine is None:
            raise RulesError(f"{_the(v.name)} is not in a contested square: nothing to avoid")
        want = _sq(action.get("square"), f"avoid, {_the(v.name)}") if action.get("square") is not None else None
        pose = parse_pose(action.get("to"), f"avoid, {_the(v.name)}")
        sq, note = self._square_at(state, v, pose, want, "avoids to")
        dc, dr = sq[0] - v.square[0], sq[1] - v.square[1]
        ok = max(abs(dc), abs(dr)) == 1 and (how == "any" or dc == 0)
        if not ok:
            raise RulesError(f"{_the(v.name)} may move one square {'in any direction' if how == 'any' else 'sideways'} "
                             f"to avoid, not from {_name(v.square)} to {_name(sq)}")
        if self.occupants(state).get(sq):
            raise RulesError(f"{_name(sq)} is taken by the {self.occupants(state)[sq][0].name}: avoid into a free square")
        if note:
            events.append(note)
        v.square, v.pose = sq, pose
        self._arrive(state, v, (dc, dr))
        v.no_shooting.append("avoided a collision")
        v.conditions.pop("avoiding", None)
        events.append(f"{_the(v.name)} avoids the collision, to {_name(sq)}; it may not shoot this turn")
        return {"result": "avoided", "vehicle": v.marker, "square": [sq[0] + 1, sq[1] + 1]}
        yield  # noqa: a resolution that asks for no dice

    def _pair(self, state: GameState, sq, vs: list[Vehicle]) -> tuple[Vehicle, Vehicle]:
        """The collider (the last to come into the square) and its victim (the one before)."""
        ranked = sorted(vs, key=lambda o: (o.arrival if not o.is_truck else -1, o.kind.order))
        return ranked[-1], ranked[-2]

    @action("collide", fields={"vehicle": "marker"})
    def _act_collide(self, state: GameState, action: dict):
        """Step 5: a contested square: the collider rolls on its chart with the ram modifiers."""
        events = state.events
        self._phase(state, "collisions", act="collide")
        v = self._vehicle(state, action)
        entry = next(((sq, vs) for sq, vs in self.contested(state) if v in vs), None)
        if entry is None:
            raise RulesError(f"{_the(v.name)} is in no contested square")
        sq, vs = entry
        collider, victim = self._pair(state, sq, vs)
        # "The Bike - Can adjust one square in any direction to avoid a collision, but cannot shoot
        # this turn" (the Trike sideways): the bike's player chooses, before the dice. Every refusal
        # first, before any question: the page's preview plays an action up to its first request.
        for o in (collider, victim):
            if o.kind.avoid and self.avoid_squares(state, o) and o.conditions.get("avoiding") == state.turn:
                raise RulesError(f"{_the(o.name)} avoids the collision: its player moves it one square "
                                 f"({', '.join(_name(q) for q in self.avoid_squares(state, o))}) with Avoid")
        self._slash_side_now(state, collider, victim, sq)
        for o in (collider, victim):
            if not o.kind.avoid or not self.avoid_squares(state, o):
                continue
            if o.conditions.get("stays") == state.turn:
                continue
            pick = yield ChoiceRequest(
                self._player_of(state, o), f"does {_the(o.name)} avoid the collision in {_name(sq)}? "
                                           f"({R}, \"Notes\": one square {'any way' if o.kind.avoid == 'any' else 'sideways'}, "
                                           f"then no shooting this turn)",
                ({"value": "collide", "label": "no: take the collision"},
                 {"value": "avoid", "label": f"yes: move one square to {' or '.join(_name(q) for q in self.avoid_squares(state, o))}"}),
                o.name)
            if pick == "avoid":
                o.conditions["avoiding"] = state.turn
                events.append(f"{_the(o.name)} will avoid the collision ({o.owner}'s choice): move it one square")
                return {"result": "avoiding", "vehicle": o.marker, "square": [sq[0] + 1, sq[1] + 1],
                        "squares": [[c + 1, r + 1] for c, r in self.avoid_squares(state, o)]}
            o.conditions["stays"] = state.turn
        rolls: list = []
        result = yield from self._collision(state, collider, victim, sq, events, rolls)
        return {"result": "collided", "square": [sq[0] + 1, sq[1] + 1], "rolls": rolls, **result}

    def _facings(self, state: GameState, c: Vehicle, victim: Vehicle, sq) -> tuple[str, str]:
        if self.option("collision_facing") == "by_poses" and c.pose is not None and victim.pose is not None \
                and not victim.is_truck and not c.is_truck:
            def facing(a: Vehicle, b: Vehicle) -> str:
                f, l = a.pose.to_local(b.pose.xy)
                bearing = abs(math.degrees(math.atan2(l, f)))
                return "front" if bearing <= 45 else "rear" if bearing >= 135 else "side"
            return facing(c, victim), facing(victim, c)
        dc, dr = c.conditions.get("last_step", [0, 0])
        if c.is_truck or abs(dc) <= abs(dr):
            return "side", "side"
        if victim.is_truck:
            k = self.truck_squares(state).index(sq) + 1
            if dc > 0:
                return "front", "rear" if k == D.TRUCK_SQUARES else "side"
            return "rear", "front" if k == 1 else "side"
        return ("front", "rear") if dc > 0 else ("rear", "front")

    def _collision(self, state: GameState, c: Vehicle, victim: Vehicle, sq, events: list, rolls: list,
                   pushing: bool = False):
        """"roll 1d10 (with any modifiers from both the collider and the victim, in this instance
        any + bonus from the victim is treated as a minus to the collider) and look on the chart
        against the final score. Any red value is damage to self, and green value is damage to
        the victim." The winner keeps the square; the loser is bumped sideways."""
        fc, fv = self._facings(state, c, victim, sq)
        slash = self._slash_side_now(state, c, victim, sq)
        mods = [Modifier(c.kind.ram[fc], f"{_the(c.name)}'s {fc} ram")] if c.kind.ram[fc] else []
        if c.choice is not None and c.choice.ram:
            mods.append(Modifier(c.choice.ram, f"{_the(c.name)}'s box {c.choice.label}"))
        # "Any + bonus from the victim": each of its bonuses on its own (its ram on the side hit,
        # its box), so a weak rear (-1) does not cancel a +1 box unless "all" counts minuses too.
        for vb, whose in ((victim.kind.ram[fv], f"{fv} ram {victim.kind.ram[fv]:+d}"),
                          (victim.choice.ram if victim.choice is not None else 0,
                           f"box ({victim.choice.label})" if victim.choice is not None else "")):
            if vb > 0 or (vb < 0 and self.option("victim_bonus") == "all"):
                mods.append(Modifier(-vb, f"{_the(victim.name)}'s {whose}, against the collider"))
        face = yield from self._d10(rolls, f"collision: {_the(c.name)} into {_the(victim.name)} in {_name(sq)} "
                                           f"({c.kind.chart} chart)", c.owner, mods)
        score = max(D.CHART_LOW, min(D.CHART_HIGH, face + sum(m.value for m in mods)))
        who, pts, skill = D.CHARTS[c.kind.chart][score]
        c.collided = victim.collided = True
        for o in (c, victim):
            if o.is_truck and sq in self.truck_squares(state)[:2]:
                state.truck.cab_hit = True
        section = f"the {c.kind.chart} collision chart, row {score}"
        hurt = victim if who == "victim" else c if who == "self" else None
        truck_damage = 0
        if hurt is not None:
            drv = 0 if hurt.is_truck else skill      # "Max ignores any collision results that reduce driver skill"
            if hurt.is_truck:
                truck_damage = pts
            self._harm(state, hurt, pts, drv, 0, events, f"collision, {section}")
        else:
            events.append(f"collision in {_name(sq)}: no damage ({section})")
        out = {"collider": c.marker, "victim": victim.marker, "facings": [fc, fv], "score": score,
               "damaged": None if hurt is None else hurt.marker, "damage": pts if hurt else 0}
        # The Blue Slasher's tyre slash (Notes).
        if slash is not None and truck_damage and not state.over:
            face = yield from self._d10(rolls, f"{_the(c.name)} slashes a {slash} tyre (needs {c.driver} or less)",
                                        c.owner, target=c.driver)
            if face <= c.driver:
                self._burst(state, slash, events, f"{_the(c.name)}'s slash")
        if pushing or state.over:
            return out
        # The winner occupies the square; the loser is bumped sideways. The truck is "just too
        # big" to be moved: a car that loses to it or beats it is bumped all the same.
        loser = victim if who == "victim" else c
        if loser.is_truck:
            loser = c if loser is victim else victim
        if loser.in_play:
            winner = victim if loser is c else c
            step = self._bump_step(state, loser, c, winner)
            out["bumped"] = loser.marker
            yield from self._shift(state, loser, (0, step), events,
                                   f"bumped sideways by the collision with {_the(winner.name)}")
        return out

    def _slash_side_now(self, state: GameState, c: Vehicle, victim: Vehicle, sq) -> str | None:
        """The side the Blue Slasher would slash, were its collision with the truck's squares 2-4
        to damage it ("Notes", The Blue Slasher); None where no slash can follow. Read before any
        die, so a refusal (no pose to tell the side by) comes before the dice."""
        if not (c.kind.tyre_slasher and victim.is_truck and sq in self.truck_squares(state)[1:]):
            return None
        return self._slash_side(state, c)

    def _slash_side(self, state: GameState, c: Vehicle) -> str:
        """The side of the truck the Blue Slasher came at: the side it drove in from (rows are + left),
        or, driving straight in from behind, the side of the truck's centre line its tracked pose is on."""
        dr = c.conditions.get("last_step", [0, 0])[1]
        if dr:
            return "left" if dr < 0 else "right"
        tv = state.truck_vehicle
        if c.pose is None or tv.pose is None:
            raise RulesError(f"which side of the truck {_the(c.name)} is on: the camera has no pose for it")
        _, l = tv.pose.to_local(c.pose.xy)
        return "left" if l > 0 else "right"

    def _bump_step(self, state: GameState, loser: Vehicle, collider: Vehicle, other: Vehicle | None = None) -> int:
        """Which way a car is bumped sideways (+1 left). Bumped off the truck's side (a ram into the
        truck's squares, won or lost), it goes back out on the side it came in from: the truck is
        "just too big" to pass through. Else option bump_side."""
        if other is not None and other.is_truck:
            return self._truck_side_of(state, loser)
        if self.option("bump_side") == "collider_direction" and not collider.is_truck:
            dr = collider.conditions.get("last_step", [0, 0])[1]
            if dr:
                return 1 if dr > 0 else -1
        return self._away_from_truck(state, loser)

    def _truck_side_of(self, state: GameState, v: Vehicle) -> int:
        """The side of the truck a car is on (+1 left, -1 right). In the truck's row: the side it
        came in from (its last sideways step), else the side of the truck's centre line its tracked
        pose is on, else its square before this move's."""
        tr = state.truck_vehicle.square[1]
        if v.square[1] != tr:
            return 1 if v.square[1] > tr else -1
        dr = v.conditions.get("last_step", [0, 0])[1]
        if dr:
            return -1 if dr > 0 else 1
        tv = state.truck_vehicle
        if v.pose is not None and tv.pose is not None:
            _, l = tv.pose.to_local(v.pose.xy)
            if abs(l) > CALL_SIGMAS * math.hypot(v.pose.axis_sigma_mm, tv.pose.axis_sigma_mm):
                return 1 if l > 0 else -1
        if v.from_square is not None and v.from_square[1] != tr:
            return 1 if v.from_square[1] > tr else -1
        return 1

    def _burst(self, state: GameState, side: str, events: list, why: str) -> None:
        t = state.truck
        if t.tyres_burst[side] >= t.tyres_per_side:
            events.append(f"every {side} tyre is already burst")
            return
        t.tyres_burst[side] += 1
        events.append(f"a {side} tyre bursts ({why}): {t.tyres_burst['left']} left, {t.tyres_burst['right']} right burst")

    @action("truck_sideways", fields={"vehicle": "marker"})
    def _act_truck_sideways(self, state: GameState, action: dict):
        """Step 6: the truck moves sideways in full, pushing the vehicles it meets with it,
        a collision each; any pushed off the board are lost. Its players put each car it pushes
        in its new square, then the truck in its new row (`place`): the rules say where."""
        events = state.events
        self._phase(state, "truck", act="truck_sideways")
        v = self._vehicle(state, action)
        if not v.is_truck:
            raise RulesError(f"only the truck moves in this step, not {_the(v.name)}")
        n = self.truck_sideways_squares(state)
        row0 = v.square[1]
        want = row0 + n
        if not 0 <= want < D.BOARD_ROWS:
            want = min(max(want, 0), D.BOARD_ROWS - 1)
            events.append("the truck stops at the board's edge")
        rolls: list = []
        step = 1 if want > row0 else -1
        pushed: list[int] = []
        for _ in range(abs(want - row0)):
            if state.over:
                break
            v.square = (v.square[0], v.square[1] + step)
            for sq in self.truck_squares(state):
                for o in list(self.occupants(state).get(sq, [])):
                    if o is v or state.over:
                        continue    # the truck stopped by a push: nothing more is rolled
                    yield from self._push(state, v, o, sq, step, events, rolls, pushed)
        state.truck.sideways_done = True
        moved = abs(v.square[1] - row0)
        slide = f"{moved} square{'s' if moved != 1 else ''} {'left' if step > 0 else 'right'}"
        events.append(f"the truck moves {slide} to row {v.square[1] + 1}" if moved else "the truck keeps its row")
        if moved and not state.over:
            yield from self._put_truck(state, v, f"slides {slide}")
        return {"result": "truck moved", "row": v.square[1] + 1, "pushed": pushed, "rolls": rolls}

    def _put_truck(self, state: GameState, tv: Vehicle, why: str):
        """Ask for the truck to be put in its new row ("Move sequence" 6: "Move the truck
        sideways"), as far along the board as it stands: its centre anywhere in the row and within
        half a square of there fits."""
        row = tv.square[1]
        to = Pose(*self.truck_row_pose(state, row))
        why = f"{why}, into row {row + 1}"
        yield from self.place(state, tv, to, why, tolerance_mm=state.square_mm / 2, tolerance_deg=self.PLACE_HEADING_DEG)
        state.placed.append({"vehicle": tv.marker, "name": tv.name, "row": row + 1, "why": why,
                             "pose": [round(tv.pose.x_mm, 2), round(tv.pose.y_mm, 2), round(tv.pose.heading_deg, 2)]})

    def _push(self, state: GameState, pusher: Vehicle, o: Vehicle, sq, step: int, events: list, rolls: list,
              pushed: list):
        """The truck (or a car it pushes) shoves a car one square across: a collision, then the
        car moves on, shoving any car in its way. The bike (any way) and the trike (sideways) may
        avoid it as any collision ("Notes"; the sheet: "BIKES MAY MOVE ONE EXTRA SQUARE SIDEWAYS TO
        AVOID A RAM"): its player is asked, and names the free square."""
        free = self.avoid_squares(state, o) if o.kind.avoid else []
        if free:
            pick = yield ChoiceRequest(
                self._player_of(state, o),
                f"does {_the(o.name)} avoid being pushed by {_the(pusher.name)} in {_name(sq)}? ({R}, \"Notes\": one "
                f"square {'any way' if o.kind.avoid == 'any' else 'sideways'}, then no shooting this turn)",
                ({"value": "collide", "label": "no: take the collision and the push"},
                 *({"value": [c + 1, r + 1], "label": f"yes: to {_name((c, r))}"} for c, r in free)), o.name)
            if pick != "collide":
                to = _sq(pick, f"{_the(o.name)}'s avoid")
                o.square = to
                self._arrive(state, o, (to[0] - sq[0], to[1] - sq[1]))
                o.no_shooting.append("avoided a collision")
                events.append(f"{_the(o.name)} avoids the push, to {_name(to)} ({o.owner}'s choice); it may not shoot "
                              f"this turn")
                yield from self._put(state, o, to, f"avoids the push of {_the(pusher.name)} ({o.owner}'s choice)")
                return
        yield from self._collision(state, pusher, o, sq, events, rolls, pushing=True)
        if not o.in_play or state.over:
            return
        new = (o.square[0], o.square[1] + step)
        if o.marker not in pushed:
            pushed.append(o.marker)
        if not self.on_grid(new):
            self._eliminate(state, o, "pushed off the board by the truck", events)
            return
        # Shoved across, the car meets the next one side to side, whatever its own move was.
        o.conditions["last_step"] = [0, step]
        for other in list(self.occupants(state).get(new, [])):
            if other is not o and not other.is_truck and not state.over:
                yield from self._push(state, o, other, new, step, events, rolls, pushed)
        o.square = new
        self._arrive(state, o, (0, step))
        events.append(f"{_the(o.name)} is pushed to {_name(new)}")
        yield from self._put(state, o, new, f"pushed sideways by {_the(pusher.name)}")

    # --- petrol bombs --------------------------------------------------------------------------

    def _bomb_squares(self, state: GameState) -> list[tuple[int, int] | None]:
        t = state.truck
        if not self.option("bomb_squares_follow_truck"):
            return list(t.bomb_squares)
        shift = state.truck_vehicle.square[1] - (t.bomb_row if t.bomb_row is not None else state.truck_vehicle.square[1])
        return [None if s is None else (s[0], s[1] + shift) for s in t.bomb_squares]

    def _reveal_bombs(self, state: GameState, events: list) -> None:
        t = state.truck
        t.bomb_squares = self._bomb_squares(state)
        t.bomb_row = state.truck_vehicle.square[1]
        t.bombs_revealed = True
        shown = [_name(s) for s, pts in zip(t.bomb_squares, t.bombers) if s is not None and pts > 0]
        events.append(f"the petrol bomb squares: {', '.join(shown) or 'none'}")
        t.bombs_done = False

    def _bomb_victims(self, state: GameState) -> list[tuple[int, Vehicle]]:
        t = state.truck
        if t.bombs_done:
            return []
        occ = self.occupants(state)
        spare = self.option("bomb_victims") == "gang_only"
        return [(i, o) for i, (s, pts) in enumerate(zip(t.bomb_squares, t.bombers)) if s is not None and pts > 0
                for o in occ.get(s, []) if not o.is_truck and not (spare and self.truck_side(state, o))]

    @action("bombs", fields={"vehicle": "marker"})
    def _act_bombs(self, state: GameState, action: dict):
        """Step 7: a vehicle in a petrol bomb square takes a roll on the petrol bomb chart."""
        events = state.events
        self._phase(state, "bombs", act="bombs")
        v = self._vehicle(state, action)
        if not v.is_truck:
            raise RulesError("the truck's petrol bombers drop the bombs")
        rolls: list = []
        hits = []
        for i, o in self._bomb_victims(state):
            yield from self._bomb(state, o, events, rolls, f"petrol bomber {i + 1}", lambda n, i=i: self._crew_harm(
                state, i, n, events, "the bomb went off in his hand"))
            hits.append(o.marker)
        state.truck.bombs_done = True
        return {"result": "bombs dropped", "hit": hits, "rolls": rolls}

    def _bomb(self, state: GameState, o: Vehicle, events: list, rolls: list, by: str, in_hand):
        table = D.TABLES[self.option("tables")]["bomb"]
        section = D.TABLE_SECTIONS[self.option("tables")]["bomb"]
        face = yield from self._d10(rolls, f"petrol bomb on {_the(o.name)} ({by})", "Max")
        row = table[face]
        events.append(f"petrol bomb {face} on {_the(o.name)}: {row.text} ({R}, \"{section}\")")
        if row.special == "in_hand":
            n = yield from self._d10(rolls, f"the bomb goes off in {by}'s hand (1d10/2)", "Max")
            in_hand(self._half(n))
            if self.option("bomb_in_hand") == "hit":
                o.bombed = True
            else:
                events.append(f"{_the(o.name)} was not hit: it may still shoot (option bomb_in_hand)")
            return
        o.bombed = True
        self._harm(state, o, row.structure, row.driver, row.shooting, events, f"petrol bomb ({by})")

    def _crew_harm(self, state: GameState, i: int, n: int, events: list, why: str) -> None:
        t = state.truck
        t.bombers[i] = max(0, t.bombers[i] - n)
        events.append(f"petrol bomber {i + 1} {_takes(n)} ({why}): {t.bombers[i]} left"
                      + ("; he is removed" if t.bombers[i] == 0 else ""))

    # --- the auto-gyro -------------------------------------------------------------------------

    def _gyros(self, state: GameState) -> list[Vehicle]:
        return [g for g in state.on_board() if g.kind.flying]

    def _drop_skill(self, g: Vehicle) -> tuple[int, str]:
        """The skill a drop rolls against (option gyro_drop_skill); the gyro's flying skill is its
        driver track."""
        if self.option("gyro_drop_skill") == "flying":
            return g.driver, "flying"
        return g.dropping, "dropping"

    def _drop_targets(self, state: GameState, g: Vehicle) -> list[tuple[Vehicle, int, str]]:
        """Vehicles the gyro could drop on: in its square or next to it, with the modifier
        (reconstructed, auto_gyro.toml: +1 straight ahead, 0 below it, -1 beside)."""
        if self._drop_skill(g)[0] <= 0 or not g.on_board:
            return []
        mods = g.kind.drop_modifiers
        out = []
        for o in state.on_board():
            if self.truck_side(state, o) or o.kind.flying:
                continue
            dc, dr = o.square[0] - g.square[0], o.square[1] - g.square[1]
            if max(abs(dc), abs(dr)) > 1:
                continue
            where = "ahead" if (dc, dr) == (1, 0) else "same" if (dc, dr) == (0, 0) else "adjacent"
            out.append((o, int(mods.get(where, 0)), where))
        return out

    @action("drop", fields={"vehicle": "marker", "payload": OneOf("bomb", "snake"), "target": "marker"})
    def _act_drop(self, state: GameState, action: dict):
        """Step 9 (TURN SEQUENCE): the auto-gyro drops a petrol bomb or a snake on a vehicle."""
        events = state.events
        self._phase(state, "gyro", act="drop")
        g = self._vehicle(state, action)
        if not g.kind.flying:
            raise RulesError(f"only the auto-gyro drops bombs or snakes, not {_the(g.name)}")
        payload = action.get("payload")
        if payload not in ("bomb", "snake"):
            raise RulesError("drop: payload is 'bomb' or 'snake'")
        targets = {o.marker: (o, m, w) for o, m, w in self._drop_targets(state, g)}
        if action.get("target") not in targets:
            raise RulesError(f"{_the(g.name)} can drop on: {', '.join(o.name for o, _, _ in targets.values()) or 'nobody'} "
                             f"(in its square or next to it)")
        o, mod, where = targets[action["target"]]
        rolls: list = []
        # "Bomb or snake dropping modifiers to skill": a plus raises the number to roll under.
        skill, which = self._drop_skill(g)
        need = skill + mod
        face = yield from self._d10(rolls, f"{_the(g.name)} drops a {payload} on {_the(o.name)} (needs {need} or "
                                           f"less: {which} {skill}, {mod:+d} target {where})", g.owner,
                                    target=need)
        hit = face <= need
        rolls[-1]["passed"] = hit
        state.gyro_done = True
        out = {"result": "hit" if hit else "missed", "target": o.marker, "payload": payload, "rolls": rolls,
               "modifier": mod, "where": where}
        if not hit:
            events.append(f"the {payload} misses {_the(o.name)}")
            return out
        if payload == "bomb":
            yield from self._bomb(state, o, events, rolls, g.name, lambda n: self._harm(
                state, g, n, 0, 0, events, "its bomb went off early"))
        else:
            o.snake = {"active": D.SNAKE_ACTIVE_TURNS, "asleep": False}
            events.append(f"a snake lands in {_the(o.name)}: it rolls on the snake table from next turn")
        return out

    @action("pass", fields={"vehicle": "marker"})
    def _act_pass(self, state: GameState, action: dict):
        """The auto-gyro drops nothing this turn."""
        events = state.events
        self._phase(state, "gyro", act="pass")
        g = self._vehicle(state, action)
        if not g.kind.flying:
            raise RulesError(f"pass is the auto-gyro's (dropping nothing); {_the(g.name)} has nothing to pass")
        state.gyro_done = True
        return {"result": "passed", "vehicle": g.marker}
        yield  # noqa: a resolution that asks for no dice

    # --- shooting ------------------------------------------------------------------------------

    def part_footprint(self, state: GameState, part: str) -> Footprint:
        """A target on the truck as the part of the truck's footprint it stands in: the truck's
        length cut in four squares, cab first; a side's tyres its half on that side."""
        tv = state.truck_vehicle
        fp = tv.footprint()
        q = tv.length_mm / D.TRUCK_SQUARES
        ks = PART_SQUARE[part]
        front = tv.length_mm / 2 - (min(ks) - 1) * q
        back = tv.length_mm / 2 - max(ks) * q
        mid_f, length = (front + back) / 2, front - back
        lateral, width = 0.0, tv.width_mm
        if part.startswith("tyre"):
            width = tv.width_mm / 2
            lateral = tv.width_mm / 4 * (1 if part == "tyre_left" else -1)
        c = fp.pose.to_table(mid_f, lateral)
        return Footprint(tv.marker, Pose(float(c[0]), float(c[1]), fp.pose.heading_deg, fp.pose.sigma_mm,
                                         fp.pose.sigma_deg), length, width, D.part_words(part))

    def shooter_sectors(self, state: GameState, v: Vehicle, shooter: str = "") -> list[Sector]:
        """The arcs a shooter fires in, from its tracked pose ("Shooting skill"; "Max ... can
        shoot 180deg forward"; the crossbowman "in the rear 180deg arc")."""
        if v.is_truck:
            part = "max" if shooter != "gunner" else "gunner"
            p = self.part_footprint(state, part).pose
            return [Sector.of(p, 0.0 if part == "max" else 180.0, 180.0)]
        arc = v.kind.arc
        p = v.pose
        if arc == "front":
            return [Sector.of(p, 0.0, 180.0)]
        if arc == "all_round":
            return [Sector.of(p, 0.0, 360.0)]
        if arc == "front_back_45":
            if self.option("bike_arc") == "270":
                return [Sector.of(p, 0.0, 270.0)]
            return [Sector.of(p, 0.0, 180.0), Sector.of(p, 180.0, 45.0)]
        return []

    def in_arc(self, state: GameState, v: Vehicle, target: Footprint, shooter: str = ""):
        """The best of the shooter's arcs for any part of the target, as a verdict."""
        tests = [in_sector(s, target, "any").verdict for s in self.shooter_sectors(state, v, shooter)]
        if not tests:
            return None
        return max(tests, key=lambda t: t.margin_mm)

    def _can_shoot(self, state: GameState, v: Vehicle, shooter: str) -> str | None:
        """Why it may not shoot now, or None ("Move sequence" 8 and the sheet's "NO SHOOTING
        ALOWED WHEN DOING A RED MANOUVER, RAM OR EMERGENCY STOP OR OFF THE BOARD, OR IF A BIKE
        FORCED TO AVOID A RAM")."""
        t = state.truck
        if v.is_truck:
            if shooter == "gunner":
                if t.gunner <= 0:
                    return "the rear crossbowman is out"
                return "the crossbowman has shot this turn" if t.gunner_shot else None
            if shooter != "max":
                return "the truck shoots with 'max' or 'gunner'"
            if t.max_shot:
                return "Max has shot this turn"
            if v.weapon_lost:
                return "Max's shotgun is destroyed"
            if t.cab_hit:
                return "the cab was in a collision this turn"
            if any("RED" in w for w in v.no_shooting):
                return "Max did a RED action this turn"
            return None
        if not v.on_board:
            return "it is off the board"
        if v.weapon_lost:
            return "its hand weapon is destroyed"
        if v.kind.arc == "none":
            return "it has no weapon to shoot with"
        if v.shooting <= 0:
            # The harpoon van's shooting skill is its harpoonist's track ("harpoon van harpoonist").
            if v.kind.harpoon:
                return ("its harpoonist is dead" if v.conditions.get("harpoonist") == "dead"
                        else "its harpoonist is out (his shooting skill is 0)")
            return "its shooting skill is 0"
        if v.shot:
            return "it has shot this turn"
        if v.reload and v.conditions.get("reload_turn") == state.turn:
            return "the harpoon is reloading (a full turn)"
        if v.collided:
            return "it was in a collision this turn"
        if v.bombed:
            return "it was hit by a petrol bomb this turn"
        if v.no_shooting:
            return v.no_shooting[0]
        return None

    @action("shoot", fields={"vehicle": "marker", "shooter": OneOf("max", "gunner"), "target": "marker",
                            "at": OneOf("vehicle", "harpoonist", "snake", *TRUCK_PARTS)})
    def _act_shoot(self, state: GameState, action: dict):
        """Step 8: roll 1d10 at or under the shooting skill to hit, then 1d10 on the target's
        table (+2 for Max's shotgun, +1 for the harpoon)."""
        events = state.events
        self._phase(state, "shooting", act="shoot")
        v = self._vehicle(state, action)
        shooter = action.get("shooter", "max" if v.is_truck else "")
        why = self._can_shoot(state, v, shooter)
        if why:
            raise RulesError(f"{D.part_words(shooter) if v.is_truck else _the(v.name)} may not shoot: {why}")
        at = action.get("at", "vehicle")
        target = state.vehicle(action.get("target")) if action.get("target") is not None else None
        rolls: list = []
        t = state.truck
        if v.is_truck:
            skill = v.driver if shooter == "max" else t.gunner
            bonus = D.MAX_DAMAGE_BONUS if shooter == "max" else 0
            if target is None or target.is_truck or not target.on_board:
                raise RulesError("the truck shoots at a gang vehicle on the board ('target')")
            if shooter == "gunner":
                nearest = self._nearest_behind_all(state)
                if target.marker not in {o.marker for o in nearest}:
                    raise RulesError(f"the crossbowman shoots at the nearest vehicle in the rear 180 degrees: "
                                     f"{' or '.join(_the(o.name) for o in nearest) if nearest else 'nobody'}, "
                                     f"not {_the(target.name)}")
            if self.truck_side(state, target):
                raise RulesError(f"{_the(target.name)} is on the truck's side")
            if at not in ("vehicle", "harpoonist", "snake"):
                raise RulesError(f"the truck shoots at a vehicle, a harpoonist or a snake, not {at!r}")
            if at == "harpoonist" and not target.kind.harpoon:
                raise RulesError(f"{_the(target.name)} has no harpoonist; only the harpoon van has")
            aim = target.footprint()
        elif self.truck_side(state, v):
            # A gang vehicle on Max's side shoots at the gang's vehicles, as the truck's shooters do.
            skill, bonus = v.shooting, (D.HARPOON_DAMAGE_BONUS if v.kind.harpoon else 0)
            if target is None or not target.on_board or self.truck_side(state, target):
                raise RulesError(f"{_the(v.name)} is on the truck's side: it shoots at a gang vehicle ('target')")
            if at not in ("vehicle", "harpoonist", "snake"):
                raise RulesError(f"{_the(v.name)} shoots at a vehicle, a harpoonist or a snake, not {at!r}")
            if at == "harpoonist" and not target.kind.harpoon:
                raise RulesError(f"{_the(target.name)} has no harpoonist; only the harpoon van has")
            aim = target.footprint()
        else:
            skill, bonus = v.shooting, (D.HARPOON_DAMAGE_BONUS if v.kind.harpoon else 0)
            if at in TRUCK_PARTS:
                if target is not None and not target.is_truck:
                    raise RulesError(f"{at} is on the truck, not on {_the(target.name)}")
                target = state.truck_vehicle
                aim = self.part_footprint(state, at)
                if at.startswith("tyre"):
                    _, l = target.pose.to_local(v.pose.xy)
                    side = "left" if l > 0 else "right"
                    if ("left" if at == "tyre_left" else "right") != side:
                        raise RulesError(f"{_the(v.name)} is on the truck's {side}: it cannot see the {at.split('_')[1]} "
                                         f"tyres")
                if at.startswith("bomber") and t.bombers[int(at[-1]) - 1] <= 0:
                    raise RulesError(f"petrol bomber {at[-1]} is out already")
                if at == "gunner" and t.gunner <= 0:
                    raise RulesError("the crossbowman is out already")
            elif at == "snake" and target is not None and target.snake is not None:
                aim = target.footprint()
            elif at in ("vehicle", "harpoonist") and target is not None:
                # The auto-gyro and any vehicle on Max's side are the gang's enemies and may be shot
                # like any vehicle ("Shooting skill": "To hit a target ..."; the gyro has structural
                # points, "Car No 11 Auto-gyro"); the gang does not shoot its own.
                if target.is_truck or not self.truck_side(state, target):
                    raise RulesError(f"{_the(v.name)} shoots at the truck's crew, tyres or Max, at a vehicle on Max's "
                                     f"side or at a snake; {_the(target.name)} is "
                                     f"{'the truck: say which part (at)' if target.is_truck else 'in the gang'}")
                if not target.on_board:
                    raise RulesError(f"{_the(target.name)} is not on the board")
                if at == "harpoonist" and not target.kind.harpoon:
                    raise RulesError(f"{_the(target.name)} has no harpoonist; only the harpoon van has")
                aim = target.footprint()
            else:
                raise RulesError(f"a gang vehicle shoots at the truck's {', '.join(TRUCK_PARTS)}, at a vehicle on "
                                 f"Max's side (the auto-gyro) or at a snake in a vehicle ({R}, \"Shooting skill\"), "
                                 f"not {at!r}")
        if at == "snake" and (target is None or target.snake is None):
            raise RulesError("there is no snake in that vehicle to shoot")
        own = at == "snake" and target.marker == v.marker
        # What is aimed at, as a sentence names it: "the Rust Bucket", "the snake in the Jeep",
        # "the Harpoon Van's harpoonist"; a part of the truck by its own words ("petrol bomber 1").
        aimed = {"vehicle": lambda: _the(target.name), "snake": lambda: f"the snake in {_the(target.name)}",
                 "harpoonist": lambda: f"{_the(target.name)}'s harpoonist"}.get(at, lambda: aim.name)()
        # Who shoots, as a sentence names him: Max, the crossbowman, or the gang's car.
        by = D.part_words(shooter) if v.is_truck else _the(v.name)
        arc = None if own else self.in_arc(state, v, aim, shooter)
        if arc is not None and arc.outcome == "out":
            raise RulesError(f"{aimed} is out of {by}'s arc ({arc.describe()})")
        mods = []
        if at in ("vehicle", "snake", "harpoonist") and target.kind.target_table == "bike":
            # "ALL SHOOTING AT BIKES IS AT - n OFF SHOOTING SKILL": n off the skill is n on the die,
            # shown as the roll's modifier with its reason (the skill needed stays the shooter's).
            n = int(self.option("bike_target_penalty"))
            if n:
                mods.append(Modifier(n, f"shooting at the bike: {n} off the shooting skill"))
        need = skill
        who = "Max" if v.is_truck else v.owner
        face = yield from self._d10(rolls, f"{by} shoots at {aimed} (needs {need} or less)", who, mods, target=need)
        hit = face + sum(m.value for m in mods) <= need
        rolls[-1]["passed"] = hit
        if v.is_truck:
            if shooter == "max":
                t.max_shot = True
            else:
                t.gunner_shot = True
        else:
            v.shot = True
        out = {"result": "hit" if hit else "missed", "shooter": v.marker, "target": target.marker, "at": at,
               "arc": None if arc is None else arc.to_json(), "rolls": rolls}
        if at == "snake":
            if hit:
                target.snake = None
                events.append(f"the snake in {_the(target.name)} is shot dead")
                return out
            # "any miss hits the vehicle and roll 1d10 on the vehicle damage table"
            events.append(f"the shot misses the snake and hits {_the(target.name)}")
            yield from self._effect(state, target, "vehicle", bonus, events, rolls, by, who, 0)
            out["result"] = "missed the snake"
            return out
        if not hit:
            events.append(f"{by} misses {aimed}")
            return out
        if at == "vehicle":
            kind = target.kind.target_table
        elif at == "harpoonist":
            kind = "crew"
        else:
            kind = "max" if at == "max" else "tyres" if at.startswith("tyre") else "crew"
        yield from self._effect(state, target, kind, bonus, events, rolls, by, who, 0, at)
        return out

    def _nearest_behind(self, state: GameState) -> Vehicle | None:
        near = self._nearest_behind_all(state)
        return near[0] if near else None

    def _nearest_behind_all(self, state: GameState) -> list[Vehicle]:
        """The crossbowman's targets: the nearest vehicle in the rear 180 degrees, and any other
        whose distance is too close to call against it (the poses' doubt); nearest first."""
        tv = state.truck_vehicle
        sec = self.shooter_sectors(state, tv, "gunner")[0]
        found = []
        for o in state.on_board():
            if self.truck_side(state, o) or o.pose is None:
                continue
            if in_sector(sec, o.footprint(), "any").verdict.outcome == "out":
                continue
            found.append((float(np.hypot(*(o.pose.xy - np.asarray(sec.apex)))), o.marker, o))
        if not found:
            return []
        found.sort(key=lambda x: (x[0], x[1]))
        d0, _, first = found[0]
        tie = [o for d, _, o in found[1:]
               if d - d0 <= CALL_SIGMAS * math.hypot(o.pose.axis_sigma_mm, first.pose.axis_sigma_mm)]
        return [first, *tie]

    def _effect(self, state: GameState, target: Vehicle, kind: str, bonus: int, events: list, rolls: list,
                by: str, who: str, depth: int, at: str = "vehicle"):
        """The effect die on the target's table: `by` names the shooter in a sentence ("Max",
        "the crossbowman", "the Jeep"), `who` is the player rolling."""
        tables = D.TABLES[self.option("tables")]
        section = D.TABLE_SECTIONS[self.option("tables")][kind]
        mods = [Modifier(bonus, "Max's shotgun" if bonus == D.MAX_DAMAGE_BONUS else "the harpoon")] if bonus else []
        face = yield from self._d10(rolls, f"effect on {'the ' + target.name if at == 'vehicle' else D.part_words(at)} "
                                           f"({section})", who, mods)
        score = min(D.TABLE_HIGH, face + bonus)
        row = tables[kind][score]
        events.append(f"{section} {score}: {row.text}")
        if row.roll_twice:
            for _ in range(2):
                if not state.over and depth < 3:
                    yield from self._effect(state, target, kind, bonus, events, rolls, by, who, depth + 1, at)
            return
        t = state.truck
        if kind in ("vehicle", "bike"):
            yield from self._apply_row(state, target, row, events, rolls, f"shot by {by}")
        elif kind == "max":
            tv = state.truck_vehicle
            self._harm(state, tv, row.structure, row.driver, 0, events, f"shot by {by}")
            if row.weapon_lost:
                tv.weapon_lost = True
                tv.max_track()
                events.append("Max's shotgun is destroyed: no more shooting for Max")
            if row.red_roll and not state.over:
                yield from self._driving_roll(state, tv, "red", events, rolls, "shot")
        elif kind == "tyres":
            if row.burst:
                self._burst(state, at.split("_")[1], events, f"shot by {by}")
            self._harm(state, state.truck_vehicle, row.structure, 0, 0, events, "a burst tyre")
        else:   # crew: a bomber, the crossbowman, a harpoonist
            n = DEAD if row.dead else row.crew
            if not n:
                return
            if at.startswith("bomber"):
                self._crew_harm(state, int(at[-1]) - 1, n, events, f"shot by {by}")
            elif at == "gunner":
                t.gunner = max(0, t.gunner - n)
                events.append(f"the crossbowman {_takes(n)}: {t.gunner} left")
            else:
                target.shooting = max(0, target.shooting - n)
                if row.dead:
                    target.conditions["harpoonist"] = "dead"     # a refused shot says so
                events.append(f"{_the(target.name)}'s harpoonist {_takes(n)}: shooting {target.shooting}")

    # --- replacements --------------------------------------------------------------------------

    @action("enter", fields={"vehicle": "marker", "template": "text", "to": "pose"})
    def _act_enter(self, state: GameState, action: dict):
        """"Any player who has a vehicle destroyed may pick a new vehicle and come back on next
        turn": a new vehicle (template) on the marker's car, on a free edge square."""
        events = state.events
        if state.phase not in ("setup", "turn_over", "select"):
            raise RulesError(f"a vehicle comes on between turns or while boxes are picked ({R}, \"Movement\": "
                             f"\"come back on next turn\"), not at {self.PHASE_WORDS.get(state.phase, state.phase)}")
        if "vehicle" not in action:
            raise RulesError("enter: say which car ('vehicle', its marker)")
        old = state.vehicle(action["vehicle"])
        if old.is_truck:
            raise RulesError("the truck is never replaced")
        if old.on_board:
            raise RulesError(f"{_the(old.name)} is on the board already")
        if old.out is not None and old.conditions.get("out_turn", -1) >= state.turn and state.phase != "turn_over":
            raise RulesError(f"{_the(old.name)} went out this turn: its player comes back on next turn")
        key = action.get("template") or old.template_key
        tpl = template(key)
        if tpl.is_truck:
            raise RulesError("there is only one truck")
        if tpl.side == "truck" and not self.truck_side(state, old):
            raise RulesError(f"{_the(tpl.name)} comes on on the truck's side ({R}, \"Notes\", The AutoGyro): "
                             f"{old.owner} is in the gang")
        pose = parse_pose(action.get("to"), f"enter, {_the(tpl.name)}")
        fresh = Vehicle(old.marker, tpl.name, old.owner, tpl.key, old.length_mm, old.width_mm)
        fresh.driver, fresh.shooting, fresh.dropping = tpl.driver_skill, tpl.shooting_skill, tpl.dropping_skill
        fresh.structure = fresh.max_structure = tpl.structure
        fresh.gear = min(max(1, int(self.option("start_gear"))), tpl.top_gear)
        sq, note = self._square_at(state, fresh, pose, None, "comes on at")
        if sq is None:
            raise RulesError(f"{_the(tpl.name)} must come on on the board")
        edge = sq[0] == 0 or (self.option("replacement_enters") == "any_edge"
                              and (sq[0] == D.BOARD_COLUMNS - 1 or sq[1] in (0, D.BOARD_ROWS - 1)))
        if not edge:
            raise RulesError(f"{_the(tpl.name)} comes on at the board's "
                             f"{'back row (column 1)' if self.option('replacement_enters') == 'back_edge' else 'edge'}, "
                             f"not {_name(sq)} (option replacement_enters)")
        if self.occupants(state).get(sq) and not tpl.flying:
            raise RulesError(f"{_name(sq)} is taken by the {self.occupants(state)[sq][0].name}")
        if old.out is not None:
            state.wrecks.append({"marker": old.marker, "name": old.name, "template": old.template_key, "out": old.out,
                                 "turn": old.conditions.get("out_turn")})
        fresh.square, fresh.pose = sq, pose
        state.vehicles[old.marker] = fresh
        events.append(f"{fresh.owner}'s {fresh.name} comes on at {_name(sq)}" + (f" ({note})" if note else ""))
        return {"result": "entered", "vehicle": fresh.marker, "template": tpl.key, "square": [sq[0] + 1, sq[1] + 1]}
        yield  # noqa: a resolution that asks for no dice


#: A crew table's "Dead": more than any crew track holds.
DEAD = 99


def _takes(n: int) -> str:
    """What a crew member takes, in the table's words: "is killed" for Dead, else "takes 2"."""
    return "is killed" if n >= DEAD else f"takes {n}"
