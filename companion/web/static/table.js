// The table page. Follows the live table's snapshots (server-sent events) and
// glides each car to its newest pose, so the page moves smoothly however
// irregularly frames arrive; shows the selected car's card, move region,
// targets and actions; takes the players' decisions and the dice.
(() => {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const board = $("board");
  const depth = parseFloat(board.dataset.depthMm);
  const width = parseFloat(board.dataset.widthMm);
  const carLayer = $("cars"), labelLayer = $("labels"), overlayLayer = $("overlays"), lineLayer = $("lines");
  // A board's cells go over the cars, so what a model stands on still shows (the squares under a
  // truck model, a car in a bomb square); every tap goes through them to the car.
  carLayer.after($("board-cells"));
  $("board-cells").setAttribute("pointer-events", "none");
  const rows = $("car-rows");
  const cars = new Map();   // id -> {group, label, row, shown, target, width}
  // Everything the page knows, for people poking at it and for the tests.
  const state = { updates: 0, last: null, connected: false, game: null, gameVersion: -1, selected: null,
                  car: null, csrf: null, canChange: false, drawn: [] };
  window.companion = state;

  const fmt = (v, d = 1) => Number(v).toFixed(d);
  const inch = (mm, d = 2) => `${fmt(mm / 25.4, d)} in`;
  const el = (tag, attrs = {}, ...children) => {
    const svg = ["g", "path", "line", "polygon", "text", "circle", "rect"].includes(tag) && attrs.svg !== false;
    const e = svg ? document.createElementNS(SVG, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "svg") continue;
      if (k === "text") e.textContent = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  };
  const html = (tag, attrs = {}, ...children) => el(tag, { ...attrs, svg: false }, ...children);
  const carColour = (id) => `hsl(${((id * 137.508) % 360).toFixed(0)} 70% 58%)`;
  const Y = (y) => depth - y;
  const ringsPath = (polys) => polys.map((rings) => rings.map((ring) =>
    "M " + ring.map(([x, y]) => `${x.toFixed(1)} ${Y(y).toFixed(1)}`).join(" L ") + " Z").join(" ")).join(" ");
  const outcomeWord = { in: "yes", out: "no", "too close to call": "too close to call" };
  const outcomeClass = (o) => ({ in: "in", out: "out", "too close to call": "too_close" })[o] || "";
  // Players' text without the rules' internal ids ("Max's cannon fodder Max:10:W1" reads
  // "Max's cannon fodder"): the ids are for the record, not for people.
  const clean = (text) => String(text ?? "").replace(/\s*\(?\b[^\s:()]+:\d+:[A-Za-z]+\d*\)?/g, "");
  // A rules' key said in words: an action by its label on the cards ("Upgrade stage", not
  // UPGRADE_STAGE), a result with spaces ("landed on", not landed_on).
  const spoken = (key) => String(key ?? "").replace(/_/g, " ");
  const actLabels = new Map();                     // act -> its label, as the cards offer it
  const actWords = (act) => actLabels.get(act) || spoken(act);
  const mm = (v, d = 0) => `${fmt(Math.abs(v), d)} mm`;
  // A length in the players' units (the tools' Units menu: inches unless they chose mm).
  const len = (v) => (localStorage.getItem("companion.units") === "mm" ? `${fmt(Math.abs(v), 0)} mm` : inch(Math.abs(v)));
  // How far a hand still has to move a piece: to the millimetre or the tenth of an inch.
  const lenToGo = (v) => (localStorage.getItem("companion.units") === "mm" ? `${fmt(Math.abs(v), 0)} mm` : inch(Math.abs(v), 1));
  // A doubt in the same unit as the length beside it (one unit a line).
  const lenDoubt = (v) => (localStorage.getItem("companion.units") === "mm" ? `${fmt(v, 2)} mm`
    : v < 0.127 ? "<0.01 in" : inch(v));

  // --- talking to the companion ---------------------------------------------------------
  // A POST carries a fresh random Idempotency-Key; when its answer is lost on the way (the
  // connection dropped) it is sent again with the SAME key, and the companion answers the
  // repeat with the first answer rather than doing it twice (an undo undoes one event).
  // getRandomValues, not randomUUID: a LAN page over plain http is not a secure context.
  const freshKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  async function api(path, body) {
    const opts = body === undefined ? {} : {
      method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf || "", "Idempotency-Key": freshKey() } };
    let r = null;
    for (let attempt = 0; r === null; attempt++) {
      try { r = await fetch("api/" + path, opts); } catch (e) {
        if (body === undefined || attempt >= 2) throw e;
        await new Promise((done) => setTimeout(done, 400 * (attempt + 1)));
      }
    }
    let data = null;
    try { data = await r.json(); } catch (e) { data = { error: `the companion answered ${r.status}` }; }
    if (!r.ok) throw new Error(data.error || `the companion answered ${r.status}`);
    return data;
  }
  async function act(path, body, errorBox) {
    if (errorBox) errorBox.textContent = "";
    try {
      const seen = state.game && state.game.last_outcome && state.game.last_outcome.event ? state.game.last_outcome.event.n : null;
      const g = await api(path, body ?? {});
      if (g && g.version !== undefined) showGame(g);
      // A new result, nothing waiting: where the panel stands beside the board, it is scrolled
      // to its top, where the result is (it stayed scrolled down at the buttons pressed). The
      // board does not move (a phone's page is left where the player has it).
      const now = g && g.last_outcome && g.last_outcome.event ? g.last_outcome.event.n : null;
      if (g && !g.pending && now !== null && now !== seen && roomy()) $("panel").scrollTo({ top: 0, behavior: "smooth" });
      return g;
    } catch (e) {
      (errorBox || $("error")).textContent = e.message;
      return null;
    }
  }

  // --- the table ----------------------------------------------------------------------------
  function carShape(c) {
    const g = el("g", { class: "car", "data-car-id": c.id, style: `--car: ${carColour(c.id)}` });
    const L = c.length_mm, W = c.width_mm;
    g.append(el("rect", { class: "body", x: -L / 2, y: -W / 2, width: L, height: W, rx: 4 }));
    g.append(el("path", { class: "nose",
      d: `M ${L / 2 - 14} ${-W / 2 + 5} L ${L / 2 - 3} 0 L ${L / 2 - 14} ${W / 2 - 5} Z` }));
    return g;
  }

  function ensureCar(c) {
    let car = cars.get(c.id);
    if (car) return car;
    const group = carLayer.querySelector(`[data-car-id="${c.id}"]`) || carLayer.appendChild(carShape(c));
    const label = labelLayer.querySelector(`[data-label-for="${c.id}"]`)
      || labelLayer.appendChild(el("text", { class: "car-label", "data-label-for": c.id, text: c.name }));
    let row = rows.querySelector(`[data-row-for="${c.id}"]`);
    if (!row) {
      row = html("tr", { "data-row-for": c.id, style: `--car: ${carColour(c.id)}` });
      for (let i = 0; i < 6; i++) row.append(html("td"));
      row.children[0].append(html("span", { class: "swatch" }), document.createTextNode(""));
      rows.append(row);
    }
    // The halo marks the car whose turn it is; the tap area keeps a small car tappable on a
    // phone (at least TAP_PX square on the screen, whatever the board's scale).
    if (!group.querySelector(".halo")) group.prepend(el("circle", { class: "halo", r: c.length_mm / 2 + 16 }));
    // Tap areas lie under every car (their own layer), so one never covers another car.
    const hit = el("rect", { class: "hit", "data-hit-for": c.id, transform: group.getAttribute("transform") || "" });
    hitLayer.append(hit);
    hit.addEventListener("click", (ev) => select(nearestCar(ev, c.id)));
    group.addEventListener("click", () => select(c.id));
    car = { group, label, row, hit, shown: null, target: null, width: c.width_mm, length: c.length_mm, name: c.name };
    fitTapArea(car);
    cars.set(c.id, car);
    return car;
  }

  // --- sizes on the screen -------------------------------------------------------------------
  // The board is drawn in table millimetres at whatever scale the window gives it (a phone
  // shows 1.2 m in 360 px): labels and tap areas are sized in screen pixels instead, through
  // --u (millimetres per screen pixel), so they stay readable and tappable.
  const TAP_PX = 44;
  let unitsPerPx = 1;
  const hitLayer = carLayer.parentNode.insertBefore(el("g", { id: "car-hits" }), carLayer);
  function fitTapArea(car) {
    const hit = car.hit;
    if (!hit) return;
    const w = Math.max(car.length || 75, TAP_PX * unitsPerPx), h = Math.max(car.width || 32, TAP_PX * unitsPerPx);
    hit.setAttribute("x", -w / 2); hit.setAttribute("y", -h / 2);
    hit.setAttribute("width", w); hit.setAttribute("height", h);
  }
  function fitToScreen() {
    const m = board.getScreenCTM();
    if (!m || !m.a) return;
    unitsPerPx = 1 / Math.hypot(m.a, m.b);
    board.style.setProperty("--u", `${unitsPerPx.toFixed(3)}px`);
    for (const car of cars.values()) fitTapArea(car);
    fixedBoxes = null;
    placeLabels();
  }
  window.addEventListener("resize", fitToScreen);

  // --- a phone's board follows the play --------------------------------------------------------
  // A phone draws the whole table a few hundred pixels wide (a car is a fingertip): there the
  // board zooms on what the play is about (the acting car, where it may go and the cars it may
  // act against; a piece the rules moved and where it goes), keeping its shape, so its height on
  // the page never changes. Redrawn only when something it shows leaves the view or the play
  // moves on, and never while a car is being dragged (the board would move under the finger).
  // "Whole table" shows it all.
  const FULL = { x: -30, y: -30, w: width + 60, h: depth + 60 };
  const view = { ...FULL };
  const MIN_VIEW_MM = 480, VIEW_MARGIN_MM = 45;
  const narrowScreen = window.matchMedia("(max-width: 900px), (orientation: portrait)");
  let following = localStorage.getItem("companion.follow") !== "off";
  state.view = view;
  const focus = { marker: null, version: -1, car: null, asking: false };    // the acting car's targets and regions
  function focusBox() {
    const pts = [];
    const around = (x, y, r) => { pts.push([x - r, y - r], [x + r, y + r]); };
    const p = placementOf(state.game);
    if (p) {
      around(p.to[0], p.to[1], 50);
      const c = liveCar(p.marker);
      if (c) around(c.x_mm, c.y_mm, 50);
    } else {
      const a = actingCar(), c = a === null ? null : liveCar(a);
      if (!c) return null;
      around(c.x_mm, c.y_mm, 50);
      const sel = state.selected !== null && state.selected !== a ? liveCar(state.selected) : null;
      if (sel) around(sel.x_mm, sel.y_mm, 40);
      const info = state.car && state.car.card && state.car.card.marker === a ? state.car
        : focus.marker === a && focus.version === state.gameVersion ? focus.car : null;
      if (!info && !focus.asking && (focus.marker !== a || focus.version !== state.gameVersion)) {
        focus.asking = true;
        const version = state.gameVersion;
        api(`car/${a}`).then((x) => Object.assign(focus, { marker: a, version, car: x }))
          .catch(() => Object.assign(focus, { marker: a, version, car: null }))
          .finally(() => { focus.asking = false; followBoard(); });
      }
      for (const t of (info && info.targets) || []) {
        const tc = t.range && t.range.outcome !== "out" ? liveCar(t.marker) : null;
        if (tc) around(tc.x_mm, tc.y_mm, 40);
      }
      for (const r of (info && info.overlays && info.overlays.move_regions) || []) {
        for (const poly of r.polygons || []) for (const ring of poly) for (const pt of ring) pts.push(pt);
      }
    }
    if (!pts.length) return null;
    const xs = pts.map((q) => q[0]), ys = pts.map((q) => depth - q[1]);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  }
  function wantedView() {
    const box = following && narrowScreen.matches ? focusBox() : null;
    if (!box) return FULL;
    const aspect = FULL.h / FULL.w;
    const [x0, y0, x1, y1] = [box[0] - VIEW_MARGIN_MM, box[1] - VIEW_MARGIN_MM, box[2] + VIEW_MARGIN_MM, box[3] + VIEW_MARGIN_MM];
    const w = Math.max(x1 - x0, (y1 - y0) / aspect, MIN_VIEW_MM);
    if (w >= FULL.w * 0.8) return FULL;
    const h = w * aspect, clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
    return { x: clamp((x0 + x1) / 2 - w / 2, FULL.x, FULL.x + FULL.w - w), y: clamp((y0 + y1) / 2 - h / 2, FULL.y, FULL.y + FULL.h - h), w, h,
             box: [x0, y0, x1, y1] };
  }
  let openForm = null;
  let viewFor = null;                  // what the view was last fitted to (the acting car, a placement)
  function followBoard() {
    if (state.demo && state.demo.dragging) return;
    const want = wantedView();
    const about = JSON.stringify([actingCar(), placementOf(state.game) && placementOf(state.game).to, following, narrowScreen.matches]);
    const inside = want.box && want.box[0] >= view.x && want.box[1] >= view.y
      && want.box[2] <= view.x + view.w && want.box[3] <= view.y + view.h && view.w <= want.w * 1.6;
    const same = Math.abs(want.x - view.x) < 1 && Math.abs(want.y - view.y) < 1 && Math.abs(want.w - view.w) < 1;
    if (same || (about === viewFor && (inside || (!want.box && view.w === FULL.w)))) { viewFor = about; return; }
    viewFor = about;
    Object.assign(view, { x: want.x, y: want.y, w: want.w, h: want.h });
    board.setAttribute("viewBox", [view.x, view.y, view.w, view.h].map((v) => v.toFixed(1)).join(" "));
    board.classList.toggle("zoomed", view.w < FULL.w);
    fitToScreen();
  }
  function showFollow() {
    const b = $("board-follow");
    b.textContent = following ? "Whole table" : "Follow the play";
    b.title = following ? "Show the whole table" : "Zoom on the car acting and what it acts against";
  }
  $("board-follow").addEventListener("click", () => {
    following = !following;
    localStorage.setItem("companion.follow", following ? "on" : "off");
    showFollow();
    followBoard();
  });
  showFollow();
  // A phone's selected car's actions (and its open action's form) right under the board, within
  // a thumb's reach of the car; beside it in the Car tab where the panel stands beside the board.
  function placeActions() {
    const narrow = narrowScreen.matches;
    const home = narrow ? $("board-actions") : $("tab-car");
    if ($("car-actions").parentNode !== home) home.append($("car-actions"), $("action-form"));
    // The demo's turn buttons go with the board, above the actions: below them a tap on "turn"
    // scrolled the car being turned out of sight.
    // The last result's headline too (its working stays in the panel): on a phone the whole
    // result sat a long scroll below the board.
    const under = [$("board-bar"), $("demo-bar"), $("board-result"), $("board-actions")].filter(Boolean);
    let at = $("board-box");
    if (narrow && under.some((e) => { const wrong = at.nextElementSibling !== e; at = e; return wrong; })) $("board-box").after(...under);
  }
  narrowScreen.addEventListener("change", () => { placeActions(); followBoard(); showWaiting(); });
  $("board-result").addEventListener("click", () => {
    $("outcome-details")?.setAttribute("open", "");
    $("outcome").scrollIntoView({ block: "start", behavior: "smooth" });
  });
  // Tap areas overlap where cars stand closer than a fingertip on the screen: a tap takes the
  // car whose centre is nearest to it, not whichever area happens to be drawn on top.
  function nearestCar(ev, fallback) {
    const m = board.getScreenCTM();
    if (!m || ev.clientX === undefined) return fallback;
    const pt = board.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    const at = pt.matrixTransform(m.inverse());
    let best = fallback, bestD = Infinity;
    for (const [id, car] of cars) {
      if (!car.shown) continue;
      const d = Math.hypot(car.shown.x - at.x, depth - car.shown.y - at.y);
      if (d < bestD) { bestD = d; best = id; }
    }
    return best;
  }

  // The car whose turn it is: a halo on the table (and its name in the table-side view).
  function actingCar() {
    const g = state.game;
    if (!g || !g.game) return null;
    const a = g.game.active ?? (g.activation ? g.activation.active : null);
    return a === null || a === undefined ? null : Number(a);
  }
  function drawActing() {
    const a = actingCar();
    for (const [id, car] of cars) car.group.classList.toggle("acting", id === a);
    placeLabels();
  }

  // Several cameras: what each sees of the table, drawn faintly under the terrain, with
  // its name (and, when it is knocked or stopped, that). Redrawn only when they change.
  let coverageDrawn = "";
  function drawCoverage(cameras) {
    const shown = (cameras || []).filter((c) => c.coverage && c.coverage.length >= 3);
    const key = JSON.stringify(shown.map((c) => [c.name, c.status, c.coverage]));
    if (key === coverageDrawn) return;
    coverageDrawn = key;
    let layer = $("coverage");
    if (!layer) {
      layer = el("g", { id: "coverage", "aria-label": "What each camera sees of the table", "pointer-events": "none" });
      $("terrain").before(layer);
    }
    layer.replaceChildren();
    for (const c of shown) {
      // The name inside its own strip, just within the table edge the strip reaches (away
      // from the middle, where the views meet and the cars are), else in the middle; car
      // labels are placed round it (measureFixed).
      const xs = c.coverage.map((p) => p[0]), ys = c.coverage.map((p) => p[1]);
      const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
      const cx = (x0 + x1) / 2, cy = y0 <= 1 ? y0 + 100 : y1 >= depth - 1 ? y1 - 130 : (y0 + y1) / 2;
      const grp = el("g", { class: `camera-coverage ${c.status}`, "data-camera": c.name });
      grp.append(el("polygon", { points: c.coverage.map(([x, y]) => `${x},${Y(y)}`).join(" ") }));
      grp.append(el("text", { x: cx, y: Y(cy), text: c.status === "running" ? c.name : `${c.name} (${c.status})` }));
      layer.append(grp);
    }
      fixedBoxes = null;
  }

  // Several cameras: which see a car ("seen by camera 1 and camera 2"), as the snapshot says.
  const andList = (xs) => xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`;
  function seenByText(s, id) {
    if (!s || !s.cameras || s.cameras.length < 2) return null;
    const c = (s.cars || []).find((x) => x.id === id);
    if (!c) return "seen by no camera";
    return c.cameras && c.cameras.length ? `seen by ${andList(c.cameras)}` : "seen by no camera now (held where it was last seen)";
  }
  function showSeenBy() {
    const sheet = $("car-sheet"), text = sheet ? seenByText(state.last, Number(sheet.dataset.car)) : null;
    let line = $("car-seen-by");
    if (!sheet || text === null) { if (line) line.remove(); return; }
    if (!line || line.parentNode !== sheet) {
      line = html("p", { id: "car-seen-by", class: "dim" });
      sheet.querySelector("h2").after(line);
    }
    setText(line, text);
  }

  // Gates: the line between the posts, the posts (A on the driver's left), the
  // name, and an arrow the way to drive through. Redrawn only when they change.
  let gatesDrawn = "";
  function drawGates(gates) {
    const key = JSON.stringify(gates || []);
    if (key === gatesDrawn) return;
    gatesDrawn = key;
    fixedBoxes = null;
    const layer = $("gates");
    layer.replaceChildren();
    for (const g of gates || []) {
      if (!g.a || !g.b) continue;                      // a marker gate whose posts are not seen yet
      const [ax, ay] = g.a, [bx, by] = g.b;
      const len = Math.hypot(bx - ax, by - ay);
      if (!(len > 0)) continue;
      // The way through is the left-hand normal of A -> B (table frame), drawn with y flipped.
      const nx = -(by - ay) / len, ny = (bx - ax) / len;
      const mx = (ax + bx) / 2, my = (ay + by) / 2, r = Math.min(28, len / 3);
      const tip = [mx + nx * r, my + ny * r], tail = [mx - nx * r, my - ny * r];
      const side = [-ny * r * 0.45, nx * r * 0.45], back = [nx * r * 0.5, ny * r * 0.5];
      const head = [[tip[0] - back[0] + side[0], tip[1] - back[1] + side[1]], tip,
                    [tip[0] - back[0] - side[0], tip[1] - back[1] - side[1]]];
      const grp = el("g", { class: `gate ${g.source === "markers" ? "marker-gate" : ""} ${g.role || ""}`,
                            "data-gate": g.name, "data-role": g.role || "" });
      grp.append(el("line", { class: "gate-line", x1: ax, y1: Y(ay), x2: bx, y2: Y(by) }));
      grp.append(el("path", { class: "gate-arrow",
        d: `M ${tail[0]} ${Y(tail[1])} L ${tip[0]} ${Y(tip[1])} M ${head.map(([x, y]) => `${x} ${Y(y)}`).join(" L ")}` }));
      grp.append(el("circle", { class: "gate-post", "data-post": "a", cx: ax, cy: Y(ay), r: 7 }));
      grp.append(el("circle", { class: "gate-post", "data-post": "b", cx: bx, cy: Y(by), r: 7 }));
      // The name sits beyond post A, off the line, where cars driving through do not cover it.
      const ux = (ax - bx) / len, uy = (ay - by) / len;
      grp.append(el("text", { class: "gate-name", x: ax + ux * 24, y: Y(ay + uy * 24) + 5, text: g.name }));
      layer.append(grp);
    }
  }

  // Text is set only when it changes (each change costs the browser a layout), and the
  // panel's numbers follow at most PANEL_MS apart; the cars on the board follow every snapshot.
  const setText = (node, text) => { if (node.textContent !== text) node.textContent = text; };
  const PANEL_MS = 250;
  let lastMoved = 0, panelAt = -Infinity;
  function onSnapshot(s) {
    state.updates += 1;
    state.last = s;
    // When the frame was taken, and when the page drew it (for the latency benchmark).
    state.drawnAt = { frame: s.frame, captured_at: s.captured_at, received_at: Date.now() / 1000 };
    const now = performance.now(), panel = now - panelAt >= PANEL_MS;
    if (panel) panelAt = now;
    const present = new Set();
    for (const c of s.cars) {
      present.add(c.id);
      const fresh = !cars.has(c.id);
      const car = ensureCar(c);
      // Moved, turned, lost or found again: the rules' answers about the cars are asked again (a
      // car only turned back to its place kept an answer from when it stood turned).
      if (car.target && (Math.hypot(car.target.x - c.x_mm, car.target.y - c.y_mm) > 0.5
                         || Math.abs(((c.heading_deg - car.target.h + 540) % 360) - 180) > 0.5)) lastMoved = now;
      if (fresh || car.stale !== c.stale) lastMoved = now;
      car.target = { x: c.x_mm, y: c.y_mm, h: c.heading_deg };
      if (!car.shown) car.shown = { ...car.target };
      const staleChanged = car.stale !== c.stale;
      car.stale = c.stale;
      car.group.classList.toggle("stale", c.stale);
      car.label.classList.toggle("stale", c.stale);
      car.row.classList.toggle("stale", c.stale);
      if (!(panel || fresh || staleChanged)) continue;
      car.labelText = (c.stale ? `${c.name} (unseen ${fmt(c.age_s)} s)` : c.name) + (car.out ? " (out)" : "");
      const cells = car.row.children;
      setText(cells[0].lastChild, c.name);
      setText(cells[1], fmt(c.x_mm));
      setText(cells[2], fmt(c.y_mm));
      setText(cells[3], `${fmt(c.heading_deg)}°`);
      setText(cells[4], `${fmt(c.sigma_mm)} mm`);
      setText(cells[5], c.stale ? `unseen ${fmt(c.age_s)} s${c.why_stale ? `: ${staleWords(c.why_stale)}` : ""}` : "seen");
      if (s.cameras && s.cameras.length > 1) {
        // Several cameras: a column naming those that see the car.
        const head = rows.parentNode.querySelector("thead tr");
        if (head && head.children.length < 7) head.append(html("th", { text: "seen by" }));
        if (cells.length < 7) car.row.append(html("td"));
        setText(car.row.children[6], c.cameras && c.cameras.length ? andList(c.cameras) : "no camera now");
      }
    }
    for (const [id, car] of cars) {
      if (!present.has(id)) { lastMoved = now; car.group.remove(); car.hit.remove(); car.label.remove(); car.row.remove(); cars.delete(id); }
    }
    drawGates(s.gates);
    if (s.cameras) { drawCoverage(s.cameras); cameraChooser(s.cameras); if (panel) showSeenBy(); }
    if (panel) drawGhosts();
    if (panel) drawActing();
    drawPlacement();
    if (panel) { refreshAway(now); followBoard(); }
    followRuler();
    setText($("source"), sourceText(s));
    setText($("camera"), s.camera
      ? `camera ${s.camera.calibrated ? "calibrated" : "estimated"}, anchors ±${fmt(s.camera.reprojection_mm, 2)} mm`
      : "looking for the anchors…");
    setText($("missing"), missingText(s));
    showVisionStatus(s);
    setText($("error"), s.error || "");
    wake();
    if (s.game_version !== undefined && s.game_version !== state.gameVersion) refreshGame();
    fillMeasureChoices(s.cars);
    if (panel) calibFigures(s);
  }

  // The Camera tab's figures: the picked camera's own anchors and error (several cameras), else the one's.
  function calibFigures(s) {
    const pick = $("camera-pick"), picked = pick && s.cameras ? s.cameras[Number(pick.value) - 1] : null;
    const cam = picked ? (picked.reprojection_px === null || picked.reprojection_px === undefined ? null : picked) : s.camera;
    if (!cam) {
      if (picked) setText($("calib-figures"), `${picked.name} has not found the table yet${picked.detail ? `: ${picked.detail}` : ""}.`);
      return;
    }
    const rejected = cam.anchors_rejected.length ? ` (left out, disagreeing with the rest: ${cam.anchors_rejected.join(", ")})` : "";
    setText($("calib-figures"), `${picked ? `${picked.name}: t` : "T"}able found from anchors ${cam.anchors_used.join(", ")}${rejected}. Reprojection error ` +
      `${fmt(cam.reprojection_px, 2)} px = ${fmt(cam.reprojection_mm, 2)} mm on the table. Camera ` +
      `${cam.calibrated ? "from its calibration file" : "estimated from the anchors (no calibration file)"}.`);
  }

  // The header's source line; with several cameras each says its own state ("camera 1 (A)
  // running; camera 2 stopped: no more frames"), not the first one's for all.
  function sourceText(s) {
    if (!s.cameras || s.cameras.length < 2) return `${s.source.description}: ${s.source.status}`;
    return s.cameras.map((c) => c.status === "running" ? `${c.name} (${c.source}) running`
      : c.detail && c.detail.startsWith(c.name) ? c.detail
      : `${c.name} ${c.status}${c.detail ? `: ${c.detail}` : ""}`).join("; ");
  }

  // --- what the camera says about itself: moved, unchecked, too small or soft, a wrong file ----
  const STALE_WORDS = {
    "not seen": "not seen by the camera",
    "table pose unchecked": "the table's position could not be checked (anchors hidden?)",
    "poor outline": "its roof marker is seen too poorly to trust",
  };
  const staleWords = (why) => STALE_WORDS[why] || why;
  function carName(s, id) {
    const named = (s.table && s.table.cars || []).find((c) => c.id === id);
    return named ? named.name : `car ${id}`;
  }
  function missingText(s) {
    if (!s.missing.length) return "";
    const why = s.missing_why || {};
    return "Not seen yet: " + s.missing.map((id) => why[id] ? `${carName(s, id)} (${why[id]})` : carName(s, id)).join("; ");
  }
  //: How long after the camera or table moved the page keeps saying so (seconds of video time).
  const MOVED_SHOWN_S = 3;
  function showVisionStatus(s) {
    const lines = [];
    const movedAt = s.table_moved_at;
    if (s.table_moved || (movedAt && s.time_s - movedAt.time_s <= MOVED_SHOWN_S && s.time_s >= movedAt.time_s)) {
      lines.push({ kind: "moved", text: "The camera or table moved: cars are being re-checked." });
    }
    if (s.camera && !s.pose_checked) {
      lines.push({ kind: "unchecked", text: "The table's position could not be checked on this frame (too few anchors in view): cars are held where last seen, marked stale, and their doubt grows." });
    }
    const q = s.quality;
    if (q && q.verdict !== "ok" && q.verdict !== "unknown") {
      for (const a of q.advice || []) lines.push({ kind: `quality ${q.verdict}`, text: `Camera picture ${q.verdict}: ${a}` });
    }
    for (const w of (s.setup && s.setup.warnings) || []) lines.push({ kind: "setup", text: `Setup: ${w}` });
    const stale = s.cars.filter((c) => c.stale && c.why_stale);
    if (stale.length) {
      lines.push({ kind: "stale", text: "Held, not seen now: " + stale.map((c) => `${c.name} (${staleWords(c.why_stale)})`).join("; ") });
    }
    const box = $("vision-status");
    if (!box) return;
    const text = lines.map((l) => l.text).join("\n");
    if (box.dataset.text === text) return;
    box.dataset.text = text;
    box.replaceChildren(...lines.map((l) => html("span", { class: `vision-line ${l.kind}`, text: l.text })));
    box.hidden = !lines.length;
  }

  // Glide towards the newest pose; a big jump (a car lifted and put down) snaps. The glide's
  // time constant is short: at 15 frames a second a car is drawn where the frame saw it
  // within a frame's time, without stepping.
  const GLIDE_MS = 35;
  let lastTick = performance.now();
  // The loop sleeps once every car has arrived (a still table costs the browser nothing)
  // and wakes with the next snapshot.
  let animating = false;
  function wake() {
    if (!animating) { animating = true; lastTick = performance.now(); requestAnimationFrame(tick); }
  }
  // Car names placed so none covers another name, a car, the turning handle, a terrain or gate
  // name, or a placement's outline: above the car, else below, beside or at a corner of it;
  // where none of those is free (cars side by side on a phone, where a name is wider than a
  // car) a short name (initials) is tried, and failing that the name is left out (the car keeps
  // its colour, its row in the list, and its card when tapped). The selected and the acting car
  // are placed first. Sizes are in table mm, from the labels' CSS size in screen pixels (--u):
  // pure arithmetic, cheap enough for every frame.
  const shortName = (name) => {
    const words = name.replace(/\(.*\)/, "").trim().split(/\s+/).filter((w) => !/^(the|of)$/i.test(w));
    return words.length > 1 ? words.map((w) => w[0].toUpperCase()).join("") : words[0].slice(0, 3);
  };
  // A pose's outline on the board as a box (a turned car's box is larger), in board y (down).
  function poseBox(x, y, h, hl, hw) {
    const t = (h * Math.PI) / 180;
    const ex = Math.abs(Math.cos(t)) * hl + Math.abs(Math.sin(t)) * hw, ey = Math.abs(Math.sin(t)) * hl + Math.abs(Math.cos(t)) * hw;
    return [x - ex, depth - y - ey, x + ex, depth - y + ey];
  }
  const carBox = (c) => poseBox(c.shown.x, c.shown.y, c.shown.h, (c.length || 75) / 2, (c.width || 32) / 2);
  const boxesApart = (a, b) => a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1];
  let fixedBoxes = null;              // terrain and gate names on the board (table mm), re-read on resize
  let handleBoxes = [];               // the demo's turning handle: its grip and its arm
  // Terrain and gate names stay where they are: names the page places go round them.
  function measureFixed() {
    const inv = fixedBoxes ? null : board.getScreenCTM()?.inverse();
    if (inv) {                          // (not laid out yet: asked again next time)
      fixedBoxes = [...document.querySelectorAll("#terrain text, .gate-name, #coverage text")].map((t) => {
        const r = t.getBoundingClientRect();
        const a = new DOMPoint(r.left, r.top).matrixTransform(inv), b = new DOMPoint(r.right, r.bottom).matrixTransform(inv);
        // The glyphs, not the line box (its ascent and descent leave room above and below).
        const y0 = Math.min(a.y, b.y), y1 = Math.max(a.y, b.y), trim = 0.18 * (y1 - y0);
        return [Math.min(a.x, b.x), y0 + trim, Math.max(a.x, b.x), y1 - trim];
      }).filter((b) => b[2] > b[0]);
    }
    return fixedBoxes || [];
  }
  function placeLabels() {
    const fs = Math.max(18, 13 * unitsPerPx), gap = Math.max(3, 3 * unitsPerPx), charW = 0.6 * fs;
    const acting = actingCar();
    const list = [...cars.entries()].filter(([, c]) => c.shown)
      .sort(([a], [b]) => (b === state.selected) - (a === state.selected) || (b === acting) - (a === acting) || a - b);
    const carBoxes = new Map(list.map(([id, c]) => [id, carBox(c)]));
    const fixed = [...measureFixed(), ...handleBoxes, ...state.placementBoxes];
    // Inside the table, and inside the part of it the board shows (a phone's board may be zoomed).
    const [vx0, vy0, vx1, vy1] = [Math.max(0, view.x), Math.max(0, view.y), Math.min(width, view.x + view.w), Math.min(depth, view.y + view.h)];
    const placed = [];
    for (const [id, car] of list) {
      const full = car.labelText || car.name;
      const [x0, y0, x1, y1] = carBoxes.get(id), cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      let chosen = null;
      for (const text of full === shortName(full) ? [full] : [full, shortName(full)]) {
        // The line box as drawn: a bold name's ascent and descent reach about 0.84 and 0.31 of its size.
        const w = text.length * charW, h = 1.15 * fs;
        const spots = [[cx - w / 2, y0 - gap - h], [cx - w / 2, y1 + gap], [x1 + gap, cy - h / 2], [x0 - gap - w, cy - h / 2],
                       [x1 + gap, cy], [x1 + gap, cy - h], [x0 - gap - w, cy], [x0 - gap - w, cy - h],
                       [x1 - w / 3, y0 - gap - h], [x0 - 2 * w / 3, y0 - gap - h], [x1 - w / 3, y1 + gap], [x0 - 2 * w / 3, y1 + gap],
                       [x1 + gap, y0 - gap - h], [x0 - gap - w, y0 - gap - h], [x1 + gap, y1 + gap], [x0 - gap - w, y1 + gap]]
          .map(([bx, by]) => [bx, by, bx + w, by + h])
          .filter((b) => b[0] >= vx0 && b[2] <= vx1 && b[1] >= vy0 && b[3] <= vy1);
        const free = (b) => placed.every((p) => boxesApart(b, p)) && fixed.every((f) => boxesApart(b, f))
          && [...carBoxes].every(([other, cb]) => other === id || boxesApart(b, cb));
        const spot = spots.find(free);
        if (spot) { chosen = { text, box: spot }; break; }
      }
      car.label.style.display = chosen ? "" : "none";
      if (!chosen) { car.label.dataset.box = ""; continue; }
      placed.push(chosen.box);
      setText(car.label, chosen.text);
      car.label.setAttribute("x", ((chosen.box[0] + chosen.box[2]) / 2).toFixed(1));
      car.label.setAttribute("y", (chosen.box[3] - 0.31 * fs).toFixed(1));
      car.label.dataset.box = chosen.box.map((v) => v.toFixed(1)).join(" ");
    }
  }

  // The glide's in-between drawings come at most about 30 times a second: every drawing of
  // the board costs a phone (or a laptop with ten pages open) a repaint. A snapshot newer
  // than the one drawn is drawn on the next animation frame whatever the limit: it has
  // waited for the camera already (held back, it was drawn 8-10 ms later, median, at 4K).
  const DRAW_MS = 1000 / 32;
  let drawnAt = -Infinity, drawnFrame = null;
  function tick(now) {
    const fresh = state.last && state.last.frame !== drawnFrame;
    if (!fresh && now - drawnAt < DRAW_MS) { requestAnimationFrame(tick); return; }
    drawnAt = now;
    drawnFrame = state.last ? state.last.frame : null;
    const k = 1 - Math.exp(-(now - lastTick) / GLIDE_MS);
    lastTick = now;
    let moving = false;
    for (const car of cars.values()) {
      if (!car.target) continue;
      const s = car.shown, t = car.target;
      if (Math.hypot(t.x - s.x, t.y - s.y) > 150) Object.assign(s, t);
      const dh = ((t.h - s.h + 540) % 360) - 180;   // the short way round
      if (Math.abs(t.x - s.x) < 0.02 && Math.abs(t.y - s.y) < 0.02 && Math.abs(dh) < 0.02 && car.drawnOnce) continue;
      s.x += (t.x - s.x) * k;
      s.y += (t.y - s.y) * k;
      s.h += dh * k;
      moving = true;
      car.drawnOnce = true;
      car.group.setAttribute("transform", `translate(${s.x} ${depth - s.y}) rotate(${-s.h})`);
      car.hit.setAttribute("transform", car.group.getAttribute("transform"));
    }
    placeLabels();
    if (state.last) {
      state.drawn.push({ frame: state.last.frame, captured_at: state.last.captured_at, drawn_at: Date.now() / 1000 });
      if (state.drawn.length > 2000) state.drawn.splice(0, 1000);
    }
    if (moving) requestAnimationFrame(tick); else animating = false;
  }

  // --- the game -----------------------------------------------------------------------------
  let gameFetch = null;
  function refreshGame() {
    if (gameFetch) return;
    gameFetch = api("game").then(showGame).catch((e) => { $("error").textContent = e.message; })
      .finally(() => { gameFetch = null; });
  }

  // Where a die came from, as a player says it.
  const DICE_FROM = { virtual: "rolled on the page", typed: "typed in", tray: "from the tray" };
  const diceFrom = (source) => DICE_FROM[source] || spoken(source);
  function showGame(g) {
    const before = state.game;
    state.game = g;
    state.gameVersion = g.version;
    noticePlaced(before, g);
    showDice(g.pending);
    showPlacement(g);
    showOutcome(g);
    showRound(g);
    // A piece the rules took out of the game is drawn hatched and said so under its name.
    const out = new Set(g.out_of_play || []);
    for (const [id, car] of cars) {
      const was = !!car.out;
      car.out = out.has(id);
      car.group.classList.toggle("out", car.out);
      if (was !== car.out) car.labelText = car.labelText && (car.out ? `${car.labelText} (out)` : car.labelText.replace(/ \(out\)$/, ""));
    }
    for (const f of hooks.game) f(g);
    drawBoard(g);
    drawGhosts();
    drawActing();
    showTableSide(g);
    actionChecks.clear();
    rulerLast = null;
    followRuler();
    showWaiting();
    followBoard();
    if (state.selected !== null) loadCar(state.selected);
  }

  function describeTurn(g) {
    if (!g.game) return "no game yet";
    if (g.game.turn_text) return g.game.turn_text;
    const game = g.game, round = game.round || 0;
    if (game.active === null || game.active === undefined) {
      if (!round) return "start round 1";
      return `round ${round}: between activations` + (game.up ? `, ${game.up} to act` : "");
    }
    const car = cars.get(game.active);
    return `round ${round}: the ${car ? car.name : "car " + game.active}'s turn` + (game.up ? ` (${game.up})` : "");
  }

  // A choice the rules ask of one player (a defender's pick, where damage goes): that
  // player's name on it, one button per option; dice wait in their own box.
  function showChoice(p) {
    const box = $("choice");
    box.hidden = !p;
    if (!p) return;
    $("choice-title").textContent = `${p.player}, your choice`;
    $("choice-asked").textContent = clean(`${p.player} chooses ${p.purpose}${p.who ? ` (${p.who})` : ""}.`);
    const key = JSON.stringify([p.player, p.purpose, p.options]);
    const opts = $("choice-options");
    if (opts.dataset.key !== key) {
      opts.dataset.key = key;
      opts.replaceChildren(...p.options.map((o) => html("button", {
        type: "button", "data-choice": String(o.value), disabled: !state.canChange,
        onclick: () => act("choice", { player: p.player, value: o.value }, $("choice-error")),
        text: `${p.player} chooses: ${clean(o.label)}` })));
    }
    // A seat another device holds is answered there (the companion would refuse it here).
    const seat = state.seats && state.seats.players.find((s) => s.player === p.player);
    const elsewhere = !!seat && seat.held === "another device";
    for (const b of opts.querySelectorAll("button")) b.disabled = !state.canChange || elsewhere;
    $("choice-seat").textContent = elsewhere ? `${p.player} answers on the device holding their seat.`
      : seat && seat.held === "free" && !state.seats.host ? `Answering takes ${p.player}'s seat for this device.` : "";
    $("choice-cancel").disabled = !state.canChange;
  }
  $("choice-cancel").addEventListener("click", () => act("cancel", {}, $("choice-error")));

  function showDice(pending) {
    const box = $("dice");
    // Dice only: a choice and a placement have boxes of their own.
    const p = pending && pending.waiting !== "choice" && pending.waiting !== "placement" ? pending : null;
    showChoice(pending && pending.waiting === "choice" ? pending : null);
    box.hidden = !p;
    state.pendingDice = pending;
    if (!p) return;
    $("dice-asked").textContent = clean(p.asked);
    $("dice-so-far").replaceChildren(...p.so_far.map((d) =>
      html("li", { text: `${clean(d.asked)}: ${d.faces.join(", ")} (${diceFrom(d.source)})` })));
    const inputs = $("dice-inputs");
    const key = p.dice.join(",") + p.asked;
    if (inputs.dataset.key !== key) {
      inputs.dataset.key = key;
      inputs.replaceChildren(...p.dice.map((d, i) => html("label", {}, `${d} `,
        html("input", { type: "number", min: 1, max: d.slice(1), required: true, inputmode: "numeric",
                        class: "face", "aria-label": `face of die ${i + 1} (${d})`, "data-die": d }))));
    }
    $("dice-tray").textContent = p.tray ? "…or throw them in the dice tray: the throw is taken by itself." : "";
    $("dice-error").textContent = "";
    $("dice-use").disabled = $("dice-roll").disabled = $("dice-cancel").disabled = !state.canChange;
  }

  // --- a piece the rules moved, put where they say ---------------------------------------------
  // A resolution that moved a piece (lost control, a bump, a halt at contact) waits until it
  // stands where the rules put it. The board draws its outline there (dashed, its front marked),
  // an arrow from where the camera sees it now, and a label; the headline says how far it has
  // still to go, following the camera. The table takes it by itself once the camera sees it
  // there, and the page ticks it off. Held cars the camera sees away from where the game has
  // them while nothing waits are drawn the same way, with a warning line.
  state.placed = [];                   // placements this page saw taken: {marker, name, why, how}
  state.placementBoxes = [];           // the outlines and their labels (board mm), kept clear by car names
  const isDemo = document.body.dataset.demo === "true";
  const PLACED_SHOWN_MS = 8000;
  const placementOf = (g) => (g && g.pending && g.pending.waiting === "placement" ? g.pending.placement : null);
  const capital = (t) => t.charAt(0).toUpperCase() + t.slice(1);
  // A piece in a sentence: "the Buggy", and "The Truck" as it is named.
  const theName = (name) => (/^the\s/i.test(name) ? name : `the ${name}`);
  const liveCar = (marker) => (state.last ? state.last.cars.find((c) => c.id === marker) || null : null);
  const turnOff = (a, b) => Math.abs(((((a - b) % 360) + 540) % 360) - 180);
  function footprint(marker) {
    const c = liveCar(marker), k = cars.get(marker);
    return { L: (c && c.length_mm) || (k && k.length) || 75, W: (c && c.width_mm) || (k && k.width) || 32 };
  }
  // How far the camera sees a piece from a pose: {mm, deg, stale, at}, or null when unseen.
  function offFrom(marker, to) {
    const c = liveCar(marker);
    if (!c) return null;
    return { mm: Math.hypot(c.x_mm - to[0], c.y_mm - to[1]), deg: turnOff(c.heading_deg, to[2]), stale: c.stale,
             at: [c.x_mm, c.y_mm, c.heading_deg] };
  }
  const fitsPlace = (p, off) => !!off && !off.stale && off.mm <= p.tolerance_mm && off.deg <= p.tolerance_deg;
  function toGo(p) {
    const off = offFrom(p.marker, p.to);
    // A piece put where a player chooses: no distance to go, the players say when it is there.
    if (p.chosen) return off && !off.stale ? "press “It's there” once it stands where you want it"
      : `the camera does not see ${theName(p.name)}${off ? " now" : ""}`;
    if (!off || off.stale) return `the camera does not see ${theName(p.name)}${off ? " now" : ""}`;
    if (fitsPlace(p, off)) return "there: taken as soon as it stands still";
    return `${lenToGo(off.mm)} and ${fmt(off.deg, 0)}° to go`;
  }
  const placementHeadline = (p) => capital(clean(p.asked));

  function showPlacement(g) {
    const p = placementOf(g);
    $("placement").hidden = !p;
    // The selected car's regions and reach are dimmed meanwhile: the outline is what matters now.
    document.body.classList.toggle("placing", !!p);
    if (p) {
      const key = JSON.stringify([p.marker, p.to, p.why]);
      if ($("placement").dataset.key !== key) {
        $("placement").dataset.key = key;
        $("placement-error").textContent = "";
      }
      setText($("placement-asked"), placementHeadline(p));
      setText($("placement-how"), p.chosen
        ? "Where it goes is the player's choice: put it anywhere in the shaded area on the board, then press “It's there”. " +
          "The rules check where it stands, and ask again if it is too far."
        : `Put it on the dashed outline on the board, its front at the marked end: the camera takes it ` +
          `once it stands still within ${fmt(p.tolerance_mm, 0)} mm and ${fmt(p.tolerance_deg, 0)}° of it` +
          (p.may_stay ? "; the rules also let it stay where it stands." : "."));
      const also = p.also || [];
      setText($("placement-also"), also.length ? `Then ${also.map((a) => theName(a.name)).join(", ")}, each on its own outline.` : "");
      $("placement-demo").hidden = !(isDemo && state.canChange) || !!p.chosen;
      setText($("placement-demo"), also.length ? "Move them there (demo)" : "Move it there (demo)");
      $("placement-stay").hidden = !((p.may_stay || p.chosen) && state.canChange);
      setText($("placement-stay"), p.chosen ? "It's there" : "Leave it where it stands");
      // A put-back (after an undo or a resume) has no resolution to call off.
      $("placement-cancel").hidden = !state.canChange || !!p.put_back;
    }
    showOutOfPlace(g);
    placementKey = null;
    drawPlacement();
  }
  $("placement-stay").addEventListener("click", () => {
    const p = placementOf(state.game);
    if (p) act("place", { marker: p.marker, stay: true }, $("placement-error"));
  });
  $("placement-cancel").addEventListener("click", () => act("cancel", {}, $("placement-error")));
  $("placement-demo").addEventListener("click", () => {
    const p = placementOf(state.game);
    if (p && demoPlay) for (const q of [p, ...(p.also || [])]) demoPlay.send(q.marker, { x: q.to[0], y: q.to[1], h: q.to[2] });
  });

  // A placement the game no longer waits for was taken (not called off: then nothing more of
  // the resolution happened): ticked off for a moment, with how it was put.
  let placedTimer = null;
  function noticePlaced(before, g) {
    const was = placementOf(before);
    if (!was || !g.game) return;
    const now = placementOf(g);
    let done;
    if (was.put_back) {
      const left = new Set(now && now.put_back ? [now.marker, ...(now.also || []).map((a) => a.marker)] : []);
      done = [was, ...(was.also || [])].filter((q) => !left.has(q.marker));
      if (!done.length) return;
    } else {
      if (now && now.marker === was.marker && String(now.to) === String(was.to)
          && (now.placed_so_far || []).length === (was.placed_so_far || []).length) return;
      done = [was];
    }
    const head = (x) => (x && x.log && x.log.length ? x.log[0].n : null);
    const made = now ? now.placed_so_far || [] : head(g) !== head(before) ? (g.log[0].placements || []) : null;
    if (!was.put_back && !g.pending && !made) return;      // called off
    const words = [];
    for (const q of done) {
      const rec = (made || []).filter((r) => r.marker === q.marker).slice(-1)[0];
      state.placed.push({ marker: q.marker, name: q.name, why: q.why, how: rec ? rec.how : was.put_back ? "put back" : null });
      words.push(`${capital(theName(q.name))} ${rec && rec.how === "stayed" ? "stays where it stands"
        : rec && rec.how === "chosen" ? "stands where it was put" : "is in place"}`);
    }
    const note = $("placed-note");
    note.textContent = `✓ ${words.join("; ")} (${clean(was.why)}).`;
    note.hidden = false;
    clearTimeout(placedTimer);
    placedTimer = setTimeout(() => { note.hidden = true; showWaiting(); }, PLACED_SHOWN_MS);
  }

  // Held cars the camera sees away from where the game has them: a warning line each, its
  // distance following the camera (a line goes once the car is back within a few mm).
  function awayText(o) {
    const off = offFrom(o.marker, o.to);
    const mmOff = off ? off.mm : o.off_mm, degOff = off ? off.deg : o.off_deg;
    return `${theName(o.name)} stands ${lenToGo(mmOff)}${degOff >= 3 ? ` and ${fmt(degOff, 0)}°` : ""} from where the game has it`;
  }
  const stillAway = (o) => { const off = offFrom(o.marker, o.to); return !off || off.mm > 3 || off.deg > 3; };
  function showOutOfPlace(g) {
    const list = placementOf(g) ? [] : ((g && g.out_of_place) || []).filter(stillAway);
    const box = $("out-of-place");
    const key = JSON.stringify(list.map((o) => [o.marker, o.to]));
    if (box.dataset.key !== key) {
      box.dataset.key = key;
      box.replaceChildren(...list.map((o) => html("p", { class: "away-line", "data-away": o.marker },
        html("span", { class: "away-text", text: `⚠ ${capital(awayText(o))}` }),
        isDemo && state.canChange ? html("button", { type: "button", class: "quiet", "data-away-back": o.marker, text: "Move it back (demo)",
          onclick: () => demoPlay && demoPlay.send(o.marker, { x: o.to[0], y: o.to[1], h: o.to[2] }) }) : null)));
    }
    for (const o of list) {
      const line = box.querySelector(`[data-away="${o.marker}"] .away-text`);
      if (line) setText(line, `⚠ ${capital(awayText(o))}`);
    }
    box.hidden = !list.length;
  }
  // The game's list is asked again (at most every AWAY_MS) when a car has moved since it was
  // last asked: a move made just after an ask is asked about once AWAY_MS is up, not lost
  // (it was, when the ask had to come within a second of the move).
  const AWAY_MS = 1500;
  let awayAt = -Infinity, awayBusy = false;
  function refreshAway(now) {
    const g = state.game;
    if (!g || !g.game || g.pending || awayBusy || now - awayAt < AWAY_MS || lastMoved <= awayAt) return;
    const a = actingCar();
    if (!(g.held || []).some((m) => m !== a) && !(g.out_of_place || []).length) return;
    awayAt = now;
    awayBusy = true;
    api("game").then((fresh) => {
      if (fresh.version !== state.gameVersion) { showGame(fresh); return; }
      if (JSON.stringify(fresh.out_of_place) === JSON.stringify(state.game.out_of_place)) return;
      state.game.out_of_place = fresh.out_of_place;
      showOutOfPlace(state.game);
      drawPlacement();
      showWaiting();
    }).catch(() => {}).finally(() => { awayBusy = false; });
  }

  // On the board: the outline where the piece goes (its front marked), an arrow from where the
  // camera sees it, and a label beside the outline, clear of the cars.
  let placementKey = null;
  function drawPlacement() {
    const g = state.game, p = placementOf(g);
    const items = p ? [p, ...(p.also || [])].map((q) => ({ kind: "asked", marker: q.marker, name: q.name, to: q.to, p: q, back: !!p.put_back }))
      : ((g && g.out_of_place) || []).filter(stillAway).map((o) => ({ kind: "away", marker: o.marker, name: o.name, to: o.to }));
    const offs = items.map((it) => offFrom(it.marker, it.to));
    if (p) {
      const text = toGo(p), fits = fitsPlace(p, offs[0]);
      setText($("placement-togo"), text);
      $("placement-togo").classList.toggle("fits", fits);
      if ($("ts-wanted").dataset.kind === "placement") setText($("ts-wanted"), `${placementHeadline(p)}: ${text}`);
    }
    if (items.length || $("out-of-place").dataset.key) showOutOfPlace(g);
    const key = JSON.stringify([items.map((it, i) => [it.kind, it.marker, it.to, offs[i] && offs[i].at.map((v) => Math.round(v)),
                                                      offs[i] && offs[i].stale, it.p && fitsPlace(it.p, offs[i])]),
                                unitsPerPx.toFixed(2), !!fixedBoxes, view.x, view.y, view.w]);
    if (key === placementKey) return;
    placementKey = key;
    const parts = [], boxes = [];
    const fs = Math.max(18, 13 * unitsPerPx), gap = Math.max(4, 4 * unitsPerPx);
    const others = [...cars.entries()].filter(([, c]) => c.shown).map(([id, c]) => [id, carBox(c)]);
    // Inside the table, and inside the part of it the board shows (a phone's board may be zoomed).
    const [vx0, vy0, vx1, vy1] = [Math.max(0, view.x), Math.max(0, view.y), Math.min(width, view.x + view.w), Math.min(depth, view.y + view.h)];
    items.forEach((it, i) => {
      if (it.p && it.p.chosen) {
        // Where the player may put it: the area drawn, labelled beside it, no single outline.
        const area = el("path", { class: "place-area", "data-place-for": it.marker, d: ringsPath(it.p.area || []),
                                  "fill-rule": "evenodd" });
        parts.push(area);
        const xs = [], ys = [];
        for (const poly of it.p.area || []) for (const [ax, ay] of poly[0] || []) { xs.push(ax); ys.push(Y(ay)); }
        if (xs.length) {
          const text = `Put ${theName(it.name)}'s front in here`, w = text.length * 0.6 * fs;
          const cx = Math.min(Math.max((Math.min(...xs) + Math.max(...xs)) / 2, vx0 + w / 2), vx1 - w / 2);
          const top = Math.max(Math.min(...ys) - gap, vy0 + 1.15 * fs);
          parts.push(el("text", { class: "place-label asked", "data-label-for-place": it.marker, x: cx.toFixed(1),
                                  y: top.toFixed(1), text }));
          boxes.push([cx - w / 2, top - 1.15 * fs, cx + w / 2, top]);
        }
        return;
      }
      const { L, W } = footprint(it.marker), [x, y, h] = it.to, off = offs[i];
      const fits = it.p ? fitsPlace(it.p, off) : false;
      const nose = 5 + W * 0.45;
      const grp = el("g", { class: `place-target ${it.kind}${fits ? " fits" : ""}`, "data-place-for": it.marker,
                            transform: `translate(${x} ${Y(y)}) rotate(${-h})` });
      grp.append(el("rect", { class: "place-outline", x: -L / 2, y: -W / 2, width: L, height: W, rx: 4 }),
                 el("path", { class: "place-front", d: `M ${L / 2} ${-W / 2 + 2} L ${L / 2} ${W / 2 - 2}` }),
                 el("path", { class: "place-nose", d: `M ${L / 2 + 5} ${-W / 2 + 3} L ${L / 2 + nose} 0 L ${L / 2 + 5} ${W / 2 - 3} Z` }));
      parts.push(grp);
      if (off && !off.stale && off.mm > 3) {
        parts.push(el("line", { class: `place-arrow ${it.kind}`, "data-arrow-for": it.marker, x1: off.at[0], y1: Y(off.at[1]),
                                x2: x, y2: Y(y), "marker-end": `url(#place-head${it.kind === "away" ? "-away" : ""})` }));
      }
      const outline = poseBox(x, y, h, L / 2 + nose, W / 2);
      boxes.push(outline);
      // The label: above the outline, else below, right or left of it, where no car stands.
      const text = it.kind === "asked" ? `Put ${theName(it.name)} ${it.back ? "back " : ""}here` : `The game has ${theName(it.name)} here`;
      const w = text.length * 0.6 * fs, lh = 1.15 * fs, [x0, y0, x1, y1] = outline, cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      const spots = [[cx - w / 2, y0 - gap - lh], [cx - w / 2, y1 + gap], [x1 + gap, cy - lh / 2], [x0 - gap - w, cy - lh / 2],
                     [cx - w / 2, y0 - 2 * gap - 2 * lh], [cx - w / 2, y1 + 2 * gap + lh],
                     [x1 + gap, y0 - gap - lh], [x0 - gap - w, y0 - gap - lh], [x1 + gap, y1 + gap], [x0 - gap - w, y1 + gap]]
        .map(([bx, by]) => [Math.min(Math.max(bx, vx0), vx1 - w), by, Math.min(Math.max(bx, vx0), vx1 - w) + w, by + lh])
        .filter((b) => b[1] >= vy0 && b[3] <= vy1);
      // Clear of every car (the piece itself too, where it stands now), the outlines drawn
      // before it, and terrain and gate names; else at least clear of the cars.
      const carsClear = (b) => others.every(([, cb]) => boxesApart(b, cb)) && boxes.every((o) => boxesApart(b, o));
      const spot = spots.find((b) => carsClear(b) && measureFixed().every((f) => boxesApart(b, f)))
        || spots.find(carsClear) || spots[0];
      if (spot) {
        parts.push(el("text", { class: `place-label ${it.kind}`, "data-label-for-place": it.marker,
                                x: ((spot[0] + spot[2]) / 2).toFixed(1), y: (spot[3] - 0.31 * fs).toFixed(1), text }));
        boxes.push(spot);
      }
    });
    $("placement-layer").replaceChildren(...parts);
    state.placementBoxes = boxes;
    placeLabels();
  }

  // What the game waits for (dice, a choice, a placement) and the open action's Resolve sit in
  // one box that is always in view: at the top of the side panel (it sticks there however the
  // panel is scrolled), or a bar at the bottom of a phone's screen, with room kept under the
  // page so nothing hides behind it. Something new to wait for on a phone brings the board
  // into view above the bar when the bar would cover it.
  let waitingKey = "";
  function showWaiting() {
    $("resolve-bar").hidden = !openForm || !!state.pendingDice || !state.canChange;
    const box = $("waiting");
    const shown = [...box.children].filter((c) => !c.hidden);
    box.classList.toggle("empty", !shown.length);
    fitWaitingRoom();
    const key = shown.map((c) => c.id).join(" ") + (state.pendingDice ? state.pendingDice.asked : "");
    if (key === waitingKey) return;
    waitingKey = key;
    if (!shown.length || !narrowScreen.matches || (state.demo && state.demo.dragging)) return;
    const b = board.getBoundingClientRect(), top = window.innerHeight - box.offsetHeight;
    if (b.top < 0 || b.bottom > top) window.scrollBy({ top: b.top - 8, behavior: "instant" });
  }
  function fitWaitingRoom() {
    const box = $("waiting");
    const room = narrowScreen.matches && !box.classList.contains("empty") ? box.offsetHeight : 0;
    document.body.style.setProperty("--waiting-room", `${room}px`);
  }
  if (window.ResizeObserver) new ResizeObserver(fitWaitingRoom).observe($("waiting"));

  function rollLine(r) {
    const mods = r.modifiers.map((m) => `${m.value > 0 ? "+" : ""}${m.value} (${m.reason})`).join(" ");
    return `${r.asked}: rolled ${r.face}${mods ? ` ${mods} = ${r.total}` : ""}`;
  }

  // The last outcome in one line a player reads at a glance ("HIT: the Rust Bucket takes 4");
  // how it was worked out is folded below it.
  // What the event left each piece it hurt: "9 of 13 left" after the one it names, else by name.
  function leftWords(head, left) {
    if (!left || !left.length) return head;
    if (left.length === 1 && head.includes(left[0].name)) return `${head}, ${left[0].left}`;
    return `${head} (${left.map((x) => `${x.name}: ${x.left}`).join("; ")})`;
  }
  function outcomeHeadline(e, left) {
    const o = e.outcome || {};
    if (e.kind === "action") {
      const result = spoken(o.result || "done").toUpperCase();
      const what = (o.events || []).slice(0, 2).map(clean).join("; ");
      // Nothing more to say than the result (a move that went as planned): say of which car.
      const who = cars.get(Number(o.vehicle ?? e.detail.vehicle));
      return leftWords(`${result}: ${what || (who ? `the ${who.name}` : clean(actWords(o.act || e.detail.act || "")))}`, left);
    }
    if (e.kind === "round") return o.first ? `Round ${o.round}: ${o.first} goes first` : o.round !== undefined ? `Round ${o.round}` : `Turn ${o.turn ?? ""}`;
    return "Turn ended";
  }
  // Folded on a phone (the car's card stays in view), open where there is room.
  const roomy = () => window.matchMedia("(min-width: 901px) and (orientation: landscape)").matches;
  function showOutcome(g) {
    const box = $("outcome");
    const last = g.last_outcome;
    const brief = $("board-result");
    if (!last || !g.game) { box.hidden = true; brief.hidden = true; return; }
    box.hidden = false;
    brief.hidden = false;
    setText(brief, `${last.undone ? "Undone: the game is as it was before it." : outcomeHeadline(last.event, last.left)} ›`);
    if (last.undone) {
      box.replaceChildren(html("h2", { class: "headline", id: "outcome-headline", text: "Undone" }),
        html("p", { text: `Event ${last.undone.undid} (${last.undone.kind}) is taken back; the game is as it was before it.` }));
    } else {
      const e = last.event, o = e.outcome || {};
      const title = e.kind === "action" ? `${actWords(o.act || e.detail.act || "").toUpperCase()}: ${spoken(o.result || "done")}` : "";
      const steps = html("ol", { class: "steps" });
      if (o.range) steps.append(html("li", { text: `range ${len(o.range.value_mm)} ± ${lenDoubt(o.range.sigma_mm)} against ${len(o.range.threshold_mm)}: ${len(o.range.margin_mm)} ${o.range.margin_mm >= 0 ? "inside" : "beyond"} it` }));
      if (o.arc) steps.append(html("li", { text: `in the arc: ${outcomeWord[o.arc.outcome]}, ${len(o.arc.margin_mm)} ${o.arc.margin_mm >= 0 ? "inside" : "outside"} its edge ± ${lenDoubt(o.arc.sigma_mm)}` }));
      // Each die once: a roll says where its die came from; dice no roll names are listed as thrown.
      const dice = [...(e.dice || [])];
      for (const r of o.rolls || []) {
        const i = dice.findIndex((d) => d.asked === r.asked || (d.faces.length === 1 && d.faces[0] === r.face));
        const from = i >= 0 ? diceFrom(dice.splice(i, 1)[0].source) : null;
        steps.append(html("li", { text: clean(rollLine(r)) + (from ? ` (${from})` : "") }));
      }
      for (const d of dice) steps.append(html("li", { text: `${clean(d.asked)}: rolled ${d.faces.join(", ")} (${diceFrom(d.source)})` }));
      // Initiative as each system gives it: one roll a player, or a list of roll-offs (ties re-rolled).
      const rolled = (faces) => Object.entries(faces).map(([p, v]) => `${p} ${v && typeof v === "object" ? (v.total ?? v.face ?? JSON.stringify(v)) : v}`).join(", ");
      if (Array.isArray(o.initiative)) o.initiative.forEach((faces, i) => steps.append(html("li", { text: `initiative${o.initiative.length > 1 ? ` (roll-off ${i + 1})` : ""}: ${rolled(faces)}` })));
      else if (o.initiative) steps.append(html("li", { text: "initiative: " + rolled(o.initiative) }));
      for (const ev of (o.events || []).slice(2)) steps.append(html("li", { class: "event", text: clean(ev) }));
      const folded = html("details", { class: "outcome-details", id: "outcome-details" },
        html("summary", { text: `${title ? title + " · " : ""}how it was worked out` }), steps);
      folded.open = roomy();
      box.replaceChildren(html("h2", { class: "headline", id: "outcome-headline", text: outcomeHeadline(e, last.left) }),
        steps.children.length ? folded : title ? html("p", { class: "dim", text: title }) : "");
    }
    if (g.can_undo && state.canChange) {
      box.append(html("button", { id: "undo", onclick: () => act("undo"), text: "Undo the last resolution" }));
    }
  }

  // What the book calls a round ("turn" in Stop The Truck).
  const roundWord = (g) => (g && g.game && g.game.rules && g.game.rules.round_word) || "round";
  function showRound(g) {
    $("turn").textContent = describeTurn(g);
    const now = $("round-now");
    const orders = $("round-orders");
    // The table's notes (a car put back, a camera knocked) are a list of their own, under a
    // heading of their own: read as the log's oldest lines, they seemed to come before round 1.
    $("notes").replaceChildren(...(g.notes || []).slice(-8).reverse().map((n) => html("li", { class: n.kind, text: n.text })));
    $("notes-head").hidden = !(g.notes || []).length;
    if (!g.game) { now.replaceChildren(html("p", { class: "dim", text: "No game yet: start one in Setup." })); orders.replaceChildren(); $("log").replaceChildren(); return; }
    const kids = [html("p", { class: "turn-now", text: describeTurn(g) })];
    const active = g.game.active;
    const said = g.turn_checks || {};
    if (state.canChange) {
      // Ending an activation, or passing when no car is acting: offered when the rules' own dry
      // run of it goes ahead, else greyed with their reason beside it.
      kids.push(html("p", { class: "action-row" + (said.end_turn ? " refused" : "") },
        html("button", { id: "end-turn", onclick: () => act("end_turn", {}, $("order-error")), disabled: !!said.end_turn,
          "aria-describedby": said.end_turn ? "end-turn-why" : null,
          text: active !== null && active !== undefined ? "End this turn" : "Pass (end the turn)" }),
        said.end_turn ? html("span", { id: "end-turn-why", class: "why-not", text: capital(clean(said.end_turn)) }) : null));
    }
    now.replaceChildren(...kids);
    // Play order: where the rules ask for one, a list per player of their cars in the order
    // they will act (the rule system says which cars); else the round just starts.
    const form = html("form", { id: "order-form" });
    for (const [player, own] of Object.entries(g.game.round_orders || {})) {
      const fs = html("fieldset", {}, html("legend", { text: `${player}'s play order` }));
      own.forEach((_, slot) => {
        const sel = html("select", { "data-player": player, "aria-label": `${player} slot ${slot + 1}` },
          html("option", { value: "", text: "(empty)" }),
          ...own.map((c) => html("option", { value: String(c.value), text: c.label })));
        sel.value = own[slot].open ? "" : String(own[slot].value);
        fs.append(html("label", {}, `${slot + 1}. `, sel));
      });
      form.append(fs);
    }
    const next = (g.game.round ?? 0) + 1;
    // Greyed with the rules' reason when their dry run of a new round (with the orders the game
    // offers) refuses it; orders changed by hand are the rules' to judge when it is pressed.
    form.append(html("button", { type: "submit", id: "start-round", disabled: !state.canChange || !!said.round,
                                 "aria-describedby": said.round ? "start-round-why" : null, text: `Start ${roundWord(g)} ${next}` }),
                said.round ? html("span", { id: "start-round-why", class: "why-not", text: ` ${capital(clean(said.round))}` }) : "",
                html("span", { id: "order-error", class: "error" }));
    form.addEventListener("change", () => { if (state.canChange) $("start-round").disabled = false; });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      act("round", { orders: roundOrders() }, $("order-error"));
    });
    orders.replaceChildren(form);
    $("log").replaceChildren(...g.log.map((e) => {
      const o = e.outcome || {};
      const what = e.kind === "action" ? `${actWords(e.detail.act)} → ${spoken(o.result || "")}`
        : e.kind === "round" ? (o.first ? `round ${o.round} (${o.first} first)` : o.round !== undefined ? `round ${o.round}` : `turn ${o.turn ?? ""}`)
        : e.kind === "undo" ? `undo of ${o.undid}` : "turn ended";
      return html("li", { value: e.n, class: e.undone ? "undone" : "", text: `${what}${(o.events || []).length ? ": " + clean(o.events.join("; ")) : ""}` });
    }));
  }

  // The play orders as the Round tab's form has them (each player's cars in the order offered,
  // unless changed there).
  function roundOrders() {
    const orders = {};
    for (const sel of document.querySelectorAll("#order-form select")) {
      (orders[sel.dataset.player] ||= []).push(sel.value === "" ? null : Number(sel.value));
    }
    return orders;
  }

  // --- the rest of the page hooks in here: Setup (setup.js), the players' tools (tools.js) ------
  const hooks = { game: [] };
  window.companionPage = { api, act, html, el, fmt, inch, Y, depth, board, state, showTab, pickPoints, carColour,
                           hooks, onGame: (f) => { hooks.game.push(f); if (state.game) f(state.game); } };

  // --- a selected car -----------------------------------------------------------------------
  function select(id) {
    state.selected = id;
    for (const [cid, car] of cars) car.group.classList.toggle("selected", cid === id);
    placeLabels();
    closeActionForm();
    showTab("car");
    loadCar(id);
  }

  let carFetch = null, carAgain = false;
  function loadCar(id) {
    if (carFetch) { carAgain = true; return; }
    carFetch = api(`car/${id}`).then((c) => { if (state.selected === id) showCar(c); })
      .catch((e) => {
        state.car = null;
        $("car-card").replaceChildren(html("p", { class: "error", text: e.message }));
        $("car-targets").replaceChildren(); $("car-actions").replaceChildren(); overlayLayer.replaceChildren(); lineLayer.replaceChildren();
      })
      .finally(() => { carFetch = null; if (carAgain) { carAgain = false; loadCar(state.selected); } });
  }
  // While cars move, the selected car's measurements follow (at most a few times a second).
  setInterval(() => {
    if (state.selected !== null && performance.now() - lastMoved < 600 && !state.pendingDice) loadCar(state.selected);
  }, 300);

  // A card from a system whose cards are not shaped like Shattered Highways' (hit points by
  // part, seats, gun mounts): its fields in order, lists of records as small tables.
  const CARD_HEAD = new Set(["marker", "name", "class", "type", "owner", "controller", "status", "rule", "active"]);
  const words = (key) => key.replace(/_/g, " ");
  function plain(v) {
    if (v === null || v === undefined || v === "") return "—";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : fmt(v);
    if (Array.isArray(v)) return v.length ? v.map(plain).join(", ") : "none";
    if (typeof v === "object") return Object.entries(v).map(([a, b]) => `${words(a)} ${plain(b)}`).join(" · ");
    // A rules' key shown as a value (heavy_machine_gun, small_skimmer): in words.
    return /^[a-z0-9]+(_[a-z0-9]+)+$/.test(String(v)) ? words(String(v)) : String(v);
  }
  // Action-zone tracks (Car Cult): each component's zones as boxes, filled left to right
  // with speed tokens, damage from the right; the engine's speeds above its zones.
  function trackRows(tracks) {
    return html("div", { class: "tracks" }, ...tracks.map((t) => html("div", { class: "track", "data-track": t.id || t.name },
      html("span", { class: "track-name", text: t.name }),
      ...(t.zones || []).map((z) => html("span", { class: `zone ${z.token ? z.token.toLowerCase() : "free"}${z.st_symbol ? " plus" : ""}`,
        title: `zone ${z.zone}${z.token ? ": " + z.token : ": free"}${z.st_symbol ? " (+ST symbol)" : ""}`,
        text: `${z.token || (z.st_symbol ? "+" : "·")}${z.speed_in !== undefined ? " " + z.speed_in + '"' : ""}` })))));
  }
  function cardValue(v, key) {
    if (key === "tracks" && Array.isArray(v) && v.every((t) => t && Array.isArray(t.zones))) return trackRows(v);
    if (Array.isArray(v) && v.length && v.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
      const cols = [...new Set(v.flatMap((x) => Object.keys(x)))];
      return html("div", { class: "scroll" }, html("table", { class: "card-table" },
        html("thead", {}, html("tr", {}, ...cols.map((h) => html("th", { text: words(h) })))),
        html("tbody", {}, ...v.map((x) => html("tr", {}, ...cols.map((h) => html("td", { text: plain(x[h]) })))))));
    }
    return document.createTextNode(plain(v));
  }
  const extraRows = (k, skip) => Object.entries(k).filter(([key, v]) => !skip.has(key) && v !== null && v !== undefined && v !== "")
    .map(([key, v]) => html("div", { class: "card-row", "data-field": key }, html("b", { text: `${words(key)} ` }), cardValue(v, key)));
  // What the Shattered Highways-shaped card shows itself; anything more a system adds follows it.
  const SH_CARD = new Set([...CARD_HEAD, "hp", "seats", "clinging", "weapons", "addons", "template_in"]);
  function genericCard(k) {
    const kind = words(String(k.class || k.type || k.template || ""));
    const who = [k.owner, k.controller && k.controller !== k.owner ? `driven by ${k.controller}` : null].filter(Boolean).join(", ");
    const rows = extraRows(k, CARD_HEAD);
    return html("div", { class: "card", id: "car-sheet", "data-car": k.marker, style: `--car: ${carColour(k.marker)}` },
      html("h2", {}, html("span", { class: "swatch" }), `${k.name} `, html("small", { class: "dim", text: [kind, who].filter(Boolean).join(", ") })),
      html("p", { class: "dim", text: `${plain(k.status)}${k.active ? " · its turn" : ""}` }),
      ...rows, k.rule ? html("p", { class: "dim", text: `[${k.rule}]` }) : null);
  }

  function showCar(c) {
    state.car = c;
    $("car-hint").hidden = true;
    const k = c.card;
    const named = $("board-actions-car");
    if (named.dataset.car !== String(k.marker)) {
      named.dataset.car = String(k.marker);
      named.replaceChildren(html("span", { class: "swatch", style: `--car: ${carColour(k.marker)}` }), `The ${k.name}`);
    }
    followBoard();
    const cardKey = JSON.stringify([k, c.held]);
    if (!(Array.isArray(k.hp) && Array.isArray(k.seats))) {
      if ($("car-card").dataset.key !== cardKey || !$("car-sheet")) {
        $("car-card").dataset.key = cardKey;
        $("car-card").replaceChildren(genericCard(k), c.why_no_measurements ? html("p", { class: "dim", text: c.why_no_measurements }) : "");
      }
      showSeenBy(); showTargetsAndActions(c);
      return;
    }
    const hp = k.hp.map((h) => html("span", { class: "hp" + (h.now <= 0 ? " gone" : ""), text: `${h.part} ${h.now}/${h.max}` }));
    const seats = html("table", { class: "seats" }, ...k.seats.map((s) =>
      html("tr", {}, html("td", { text: s.seat }), html("td", { class: "dim", text: s.part }),
        html("td", { text: s.label + (s.acted ? " (acted)" : "") }))));
    const weapons = k.weapons.map((w) => `${w.mount} gun (${w.seat})${w.jammed ? " JAMMED" : ""}`).join(", ") || "none";
    // The card is redrawn only when it changes (the measurements below follow every move).
    if ($("car-card").dataset.key !== cardKey) $("car-card").dataset.key = cardKey;
    else if ($("car-sheet")) { showTargetsAndActions(c); return; }
    $("car-card").replaceChildren(html("div", { class: "card", id: "car-sheet", "data-car": k.marker, style: `--car: ${carColour(k.marker)}` },
      html("h2", {}, html("span", { class: "swatch" }), `${k.name} `, html("small", { class: "dim", text: `${k.class}, ${k.owner}${k.controller !== k.owner ? `, driven by ${k.controller}` : ""}` })),
      html("p", {}, html("b", { text: "Hit points " }), ...hp, html("span", { class: "dim", text: ` · ${k.status}${k.active ? " · its turn" : ""}${c.held ? ` · ${heldWhere(k.marker ?? c.card.marker)}` : ""}` })),
      seats,
      k.clinging.length ? html("p", { text: "Clinging on: " + k.clinging.map((w) => w.label).join(", ") }) : null,
      html("p", {}, html("b", { text: "Weapons " }), weapons, html("b", { text: " · Add-ons " }), k.addons.join(", ") || "none"),
      ...extraRows(k, SH_CARD),
      html("p", { class: "dim", text: `${k.template_in !== undefined ? `Move template ${k.template_in} in. ` : ""}${c.why_no_measurements || ""}` })));
    showSeenBy(); showTargetsAndActions(c);
  }

  function showTargetsAndActions(c) {
    // Targets with every measurement, margin and doubt.
    // Margins said in words, never signed: "13.4 mm outside", not "-13.4 mm inside".
    const arcText = (a) => `${a.mount ? a.mount + ": " : ""}${outcomeWord[a.outcome]} (${len(Math.abs(a.margin_mm))} ${a.margin_mm >= 0 ? "inside" : "outside"} ± ${lenDoubt(a.sigma_mm)})`;
    const rangeText = (r) => `${outcomeWord[r.outcome]} (${len(Math.abs(r.margin_mm))} ${r.margin_mm >= 0 ? "inside" : "beyond"} it)`;
    const rowsT = c.targets.map((t) => {
      const arcs = Array.isArray(t.arcs) ? t.arcs.map(arcText).join("; ") : t.arc ? arcText(t.arc) : "";
      return html("tr", { "data-target": t.marker, class: t.shootable ? "shootable" : "",
                          onmouseenter: () => t.line && drawLine(t.line, "hover"), onmouseleave: () => lineLayer.querySelector(".hover")?.remove() },
        html("td", {}, html("span", { class: "swatch", style: `--car: ${carColour(t.marker)}` }), t.label || t.name),
        html("td", { class: "num", text: t.distance_mm !== undefined ? `${len(t.distance_mm)} ± ${lenDoubt(t.sigma_mm)}` : t.square ? `square ${t.square}` : "—" }),
        t.range ? html("td", { class: `verdict ${outcomeClass(t.range.outcome)}`, title: t.range_text || "", text: rangeText(t.range) })
          : html("td", { class: "dim", text: "—" }),
        html("td", { text: arcs || (Array.isArray(t.arcs) && !t.range ? "no guns" : "—") }),
        html("td", { text: t.sight && t.sight.clear !== undefined ? (t.sight.clear ? "clear" : `blocked by ${(t.sight.blocked_by || []).join(", ")}`) : "—" }));
    });
    $("car-targets").replaceChildren(html("h3", { text: "Targets" }), c.targets.length ? html("div", { class: "scroll" }, html("table", { class: "targets" },
      html("thead", {}, html("tr", {}, ...["", "distance", "in range", "arc", "sight"].map((h) => html("th", { text: h })))),
      html("tbody", {}, ...rowsT))) : html("p", { class: "dim", text: "None in play." }),
      c.overlays.about ? html("p", { class: "dim", id: "overlay-about", text: c.overlays.about }) : "",
      c.premeasure && !c.premeasure.allowed ? html("p", { class: "note", id: "no-premeasure", text: c.premeasure.why }) : "",
      html("p", { class: "dim", text: "Distance from closest point to closest point (the line on the table); in range and arc: how far inside or beyond the rule's limit; ± the measurement's doubt (1 sigma)." }));
    showActions(c);
    drawOverlays(c);
    // An open action's conditions follow the cars (its form stays as the player left it).
    if (openForm && openForm.spec && $("preview")) previewAction();
  }

  // --- actions, and why one cannot be taken now ------------------------------------------------
  // Said before it is chosen: what the page knows (watching, a roll or a choice waiting) once for
  // all, else the rules' own answer (api/checks): every action of the car tried as it would be
  // resolved, with every option of its choices (every target, every warrior), in one request per
  // car and game change. It is asked again when cars have moved since (at most once every
  // RECHECK_MS; the last answer stays shown meanwhile): a target driving into range turns its
  // Shoot on. An action is refused only when no option of it would go ahead (the reason is the
  // rules' own, for the option it names); its form starts on the first option that would go
  // ahead, the other side's first.
  const actionChecks = new Map();      // marker -> { version, askedAt, asking, answer: { act: check } | { error } }
  const RECHECK_MS = 1000;
  let recheckTimer = null;
  function carChecks(c) {
    const marker = c.card.marker;
    let got = actionChecks.get(marker);
    if (got && got.version !== state.gameVersion) got = null;            // another game state: forgotten
    const now = performance.now();
    const moved = got && !got.asking && lastMoved > got.askedAt;
    if (!got || (moved && now - got.askedAt >= RECHECK_MS)) {
      const entry = { version: state.gameVersion, askedAt: now, asking: true, answer: got ? got.answer : null };
      actionChecks.set(marker, entry);
      api("checks", { marker }).then((r) => { entry.answer = Object.fromEntries(r.checks.map((x) => [x.act, x])); },
                                     (e) => { entry.answer = { error: e.message }; })
        .finally(() => {
          entry.asking = false;
          if (state.car && state.car.card.marker === marker) showActions(state.car);
        });
    } else if (moved && !recheckTimer) {
      // Asked a moment ago: asked again once the pause is over, even if the cars stop meanwhile.
      recheckTimer = setTimeout(() => { recheckTimer = null; if (state.car) showActions(state.car); },
                                RECHECK_MS - (now - got.askedAt) + 20);
    }
    return actionChecks.get(marker).answer;
  }
  // The option a form starts on for a choice: the first the rules take (the other side's first),
  // with the form's other choices where they are made; undefined before the checks are in.
  function checkedChoice(act, field, choices, values) {
    const got = state.car && actionChecks.get(state.car.card.marker);
    const x = got && got.version === state.gameVersion && got.answer && got.answer[act];
    if (!x || !x.options) return undefined;
    const has = (v) => choices.some((c) => String(c.value) === String(v));
    const first = x.first_ok;
    const fits = first && Object.keys(first).every((k) => k === field || values[k] === undefined || String(values[k]) === String(first[k]));
    if (fits && field in first && has(first[field])) return String(first[field]);
    const o = (x.options[field] || []).find((y) => y.ok && has(y.value));
    return o ? String(o.value) : undefined;
  }
  function globalWhyNot() {
    if (!state.canChange) return "Watching: enter the table's PIN to play.";
    const p = state.pendingDice;
    if (p && p.waiting === "placement") return `Waiting for ${theName(p.placement.name)} to be put ${p.placement.put_back ? "back" : "in place"} first (${clean(p.placement.why)}).`;
    if (p) return p.waiting === "choice" ? `Waiting for ${p.player}'s choice first (above).` : `Waiting for the dice first: ${clean(p.asked)}.`;
    // A game that is over is not greyed here: the rules say what is still open after it (a
    // rally's upgrades and next mission) and refuse the rest in their own words.
    return null;
  }
  // Where the game holds a car this activation: where its turn began, or, once a move of it
  // was resolved, where that move put it (its next move is measured from there).
  function heldWhere(marker) {
    const act = state.game && state.game.activation, s0 = act && act.start && act.start[String(marker)];
    const from = act && act.move_from && act.move_from[String(marker)];
    return s0 && from && Math.hypot(s0[0] - from[0], s0[1] - from[1]) > 1 ? "held where its last move put it" : "held where its turn began";
  }
  const readsTable = (a) => a.fields.some((f) => f.kind === "table_pose" || f.kind === "table_path");
  function rulesWhyNot(c, a) {
    const got = carChecks(c);
    if (!got) return null;
    const check = (b) => (got.error ? { ok: false, why: got.error } : got[b.act]);
    const x = check(a);
    if (!x || x.unchecked) return null;           // a point to pick first: asked once it is picked
    if (x.ok) return null;
    // A move read from the table may be refused only because the car is not there yet: it
    // keeps its button, and the reason is said as "not yet".
    const onTable = readsTable(a);
    // Refused for a reason an action that does not read the table shares (the crew already
    // acted): not about where the car stands, so moving it will not help: greyed like the rest.
    const refusedBecause = (b) => { const y = check(b); return y && !y.ok ? y.why : null; };
    const notAboutTable = onTable && c.actions.some((b) => !readsTable(b) && refusedBecause(b) === x.why);
    return { off: !onTable || notAboutTable, refused: true, why: clean(x.why) };
  }
  function showActions(c) {
    for (const a of c.actions) actLabels.set(a.act, a.label);
    let all = globalWhyNot();
    // The open action's own form says the rules' answer for the target and fields chosen in it;
    // its row's "not yet" (judged for the first target) could name another car: left to the form.
    const opened = openForm && openForm.spec.act;
    const answers = c.actions.map((a) => {
      const r = all ? null : rulesWhyNot(c, a);
      return r && !r.off && a.act === opened ? null : r;
    });
    // One reason refusing every action (not its turn) is said once, above them: what they
    // share up to the first ";" (the rest names each action's own crew).
    const head = (r) => r.why.split(";")[0];
    if (!all && answers.length > 1 && answers.every((r) => r && r.refused && head(r) === head(answers[0]))) {
      all = head(answers[0]).charAt(0).toUpperCase() + head(answers[0]).slice(1) + ".";
      answers.fill(null);
    }
    const rowsA = c.actions.map((a, i) => {
      const r = answers[i];
      const off = !!all || (!!r && r.off);
      return html("div", { class: `action-row${off ? " refused" : ""}`, "data-act-row": a.act },
        html("button", { type: "button", "data-act": a.act, disabled: off, text: a.label,
                         // The action as the car's latest card has it (a row outlives its card).
                         onclick: () => openAction((state.car?.actions || []).find((x) => x.act === a.act) || a),
                         "aria-describedby": r ? `why-${a.act}` : all ? "actions-why" : null }),
        r ? html("span", { class: r.off ? "why-not" : "why-not maybe", id: `why-${a.act}`,
                           text: r.off ? r.why : r.refused ? `not yet: ${r.why}` : `not every choice: ${r.why}` }) : null);
    });
    const box = $("car-actions");
    const key = JSON.stringify([all, rowsA.map((r) => r.textContent + r.className)]);
    if (box.dataset.key === key && box.dataset.car === String(c.card.marker)) return;
    // The same car and actions with new reasons (the cars moved, a roll asked or answered):
    // the rows are updated where they stand, so a button being pressed is never swapped for a
    // copy under the pointer (a press whose button is replaced between its down and its up
    // makes no click: the page tests lost a Shoot pressed as the initiative's roll was cleared).
    const acts = JSON.stringify(c.actions.map((a) => a.act));
    const shown = box.querySelectorAll("[data-act-row]");
    if (box.dataset.car === String(c.card.marker) && box.dataset.acts === acts && shown.length === rowsA.length) {
      box.dataset.key = key;
      const why = $("actions-why");
      if (all && why) setText(why, all);
      else if (all) box.querySelector("h3").after(html("p", { class: "why-not", id: "actions-why", text: all }));
      else if (why) why.remove();
      shown.forEach((row, i) => {
        const fresh = rowsA[i], b = row.querySelector("button"), nb = fresh.querySelector("button");
        row.className = fresh.className;
        b.disabled = nb.disabled;
        const described = nb.getAttribute("aria-describedby");
        if (described) b.setAttribute("aria-describedby", described); else b.removeAttribute("aria-describedby");
        const why = row.querySelector("span"), nwhy = fresh.querySelector("span");
        if (why && nwhy) { why.className = nwhy.className; why.id = nwhy.id; setText(why, nwhy.textContent); }
        else if (why) why.remove();
        else if (nwhy) row.append(nwhy);
      });
      return;
    }
    box.dataset.key = key;
    box.dataset.acts = acts;
    box.dataset.car = String(c.card.marker);
    box.replaceChildren(html("h3", { text: "Actions" }),
      all ? html("p", { class: "why-not", id: "actions-why", text: all }) : "",
      rowsA.length ? html("div", { class: "actions" }, ...rowsA) : html("p", { class: "dim", text: "Nothing it can do now." }));
  }

  // --- picking points on the table ----------------------------------------------------------
  // Taps on the board become table millimetres (through the SVG's own transform); Esc gives up.
  let picking = null;
  function pickPoints(n, prompt) {
    if (picking) picking.finish([]);
    return new Promise((resolve) => {
      const marks = [];
      const hint = $("pick-hint");
      hint.textContent = `${prompt} (Esc to stop)`;
      hint.hidden = false;
      board.classList.add("picking");
      picking = {
        points: [],
        add(pt) {
          this.points.push(pt);
          const m = el("circle", { class: "picked", cx: pt[0], cy: Y(pt[1]), r: 7 });
          lineLayer.append(m);
          marks.push(m);
          if (this.points.length >= n) this.finish(this.points);
        },
        finish(points) {
          picking = null;
          hint.hidden = true;
          board.classList.remove("picking");
          setTimeout(() => marks.forEach((m) => m.remove()), 1500);
          resolve(points);
        },
      };
    });
  }
  board.addEventListener("click", (ev) => {
    if (!picking) return;
    ev.stopPropagation();
    const pt = board.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    const at = pt.matrixTransform(board.getScreenCTM().inverse());
    picking.add([Math.round(at.x * 10) / 10, Math.round((depth - at.y) * 10) / 10]);
  }, true);
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && picking) picking.finish([]); });

  // Gates placed on the page: two posts tapped, A then B (driven through with A on the left).
  $("gate-place").addEventListener("click", async () => {
    const out = $("gate-result");
    out.textContent = "";
    const name = $("gate-name").value.trim();
    if (!name) { out.className = "error"; out.textContent = "name the gate first"; return; }
    const posts = await pickPoints(2, "Tap post A, then post B (drive through with A on your left)");
    if (posts.length < 2) return;
    try {
      const r = await api("gates", { name, a: posts[0], b: posts[1], role: $("gate-role").value });
      out.className = "dim";
      out.replaceChildren(`Gate ${r.gate.name} placed, ${fmt(r.gate.width_mm, 0)} mm wide. To keep it, add to the table file:`,
        html("pre", { text: r.table_file }));
    } catch (e) { out.className = "error"; out.textContent = e.message; }
  });

  function drawLine(line, cls) {
    const [[x0, y0], [x1, y1]] = line;
    const l = el("line", { class: `measured ${cls}`, x1: x0, y1: Y(y0), x2: x1, y2: Y(y1), "marker-start": "url(#tick)", "marker-end": "url(#tick)" });
    lineLayer.append(l);
    return l;
  }

  // Cells: a square board's squares, or what lies on the table (mines, bomb squares); a
  // car's overlays carry the squares it may reach this turn in the same shape.
  function cellParts(cells) {
    const parts = [];
    for (const c of cells || []) {
      const pts = c.polygon;
      const poly = el("polygon", { class: `cell ${c.kind || "square"}${c.select != null ? " selectable" : ""}`,
                                   points: pts.map(([x, y]) => `${x},${Y(y)}`).join(" "),
                                   "data-cell": c.label || "", "data-kind": c.kind || "square" });
      // A piece with no marker (a freak on foot): a tap selects the car whose card offers its actions.
      if (c.select != null) {
        poly.setAttribute("data-select", String(c.select));
        poly.addEventListener("click", (ev) => { ev.stopPropagation(); select(Number(c.select)); });
        const home = cars.get(Number(c.select));
        const tip = document.createElementNS(SVG, "title");
        tip.textContent = `${c.label}: his actions are on the ${home ? home.name : "nearest car"}'s card`;
        poly.append(tip);
      }
      parts.push(poly);
      if (c.label) {
        // Just inside the cell's lower edge: a car standing in its middle leaves it readable, and
        // the car's name, printed above the car, does not cover it.
        // A cell laid over a board square (label_at "top") labels it just inside its upper edge,
        // clear of the square's own label.
        const xs = pts.map((p) => p[0]), bottom = Y(Math.min(...pts.map((p) => p[1]))), top = Y(Math.max(...pts.map((p) => p[1])));
        parts.push(el("text", { class: `cell-label ${c.kind || "square"}`, x: (Math.min(...xs) + Math.max(...xs)) / 2,
                                ...(c.label_at === "top" ? { y: top + 3, "dominant-baseline": "hanging" } : { y: bottom - 3 }) }, c.label));
      }
    }
    return parts;
  }

  // Ghosts: where each car stood when the activation under way began, drawn once the car
  // has moved from there (the active car's move is measured from its ghost, not from
  // where it stands now).
  let ghostsDrawn = "";
  function drawGhosts() {
    const act = state.game && state.game.activation;
    const parts = [];
    if (act && state.game.game) {
      for (const [id, p] of Object.entries(act.start)) {
        const car = cars.get(Number(id));
        if (!car || !car.target) continue;
        const moved = Math.hypot(car.target.x - p[0], car.target.y - p[1]) > 3 ||
          Math.abs(((car.target.h - p[2] + 540) % 360) - 180) > 3;
        if (!moved && Number(id) !== act.active) continue;
        const L = car.length || 75, W = car.width || 32;
        const g = el("g", { class: "ghost" + (Number(id) === act.active ? " active" : ""), "data-ghost-for": id,
          transform: `translate(${p[0]} ${depth - p[1]}) rotate(${-p[2]})` });
        g.append(el("rect", { x: -L / 2, y: -W / 2, width: L, height: W, rx: 4 }));
        g.append(el("title", { text: `${car.name} stood here when this activation began` }));
        parts.push(g);
      }
    }
    const key = parts.map((g) => g.getAttribute("data-ghost-for") + g.getAttribute("transform")).join("|");
    if (key !== ghostsDrawn) { ghostsDrawn = key; $("ghosts").replaceChildren(...parts); }
  }

  // --- the live ruler: a car measured while it is moved -------------------------------------
  // While a car is moved (the camera sees it leave where its move began), the page says how far
  // it has come, how much is to spare, whether it could stop here and, if not, what would make
  // it so ("bring its front bumper 12 mm back into the template"), before anything is committed.
  // The rules judge it through api/preview: at most one a PREVIEW_MS, and only once the car has
  // moved PREVIEW_MM (or turned PREVIEW_DEG) since the last one, so a still table asks nothing.
  const PREVIEW_MS = 250, PREVIEW_MM = 1, PREVIEW_DEG = 1;
  let rulerLast = null, rulerAt = -Infinity, rulerBusy = false, rulerTimer = null;
  state.ruler = { previews: 0, car: null, result: null, text: "" };
  const carSpecs = new Map();          // id -> {version, actions}: the moving car's actions
  function rulerCar() {
    const a = actingCar();
    return a !== null ? a : state.selected;
  }
  function moveStart(id) {
    const act = state.game && state.game.activation;
    if (!act) return null;
    return (act.move_from && act.move_from[id]) || (act.start && act.start[id]) || null;
  }
  // The car's move as an action to ask the rules about: the one whose pose or path the camera
  // fills for this car and that asks the player for nothing else.
  function moveSpec(id) {
    let actions = state.car && state.car.card && state.car.card.marker === id ? state.car.actions : null;
    if (!actions) {
      const got = carSpecs.get(id);
      if (got && got.version === state.gameVersion) actions = got.actions;
      else {
        const version = state.gameVersion;
        carSpecs.set(id, { version, actions: null });
        api(`car/${id}`).then((x) => carSpecs.set(id, { version, actions: x.actions }))
          .catch(() => carSpecs.set(id, { version, actions: [] }));
      }
    }
    return (actions || []).find((a) => a.fields.some((f) => (f.kind === "table_pose" || f.kind === "table_path") && Number(f.of) === id)
      && a.fields.every((f) => ["fixed", "table_pose", "table_path"].includes(f.kind) || f.optional)) || null;
  }
  // Room under the board for the live ruler's words (a phone) while they show, so they never
  // cover the table: kept from when a car is selected or acts until the ruler goes.
  function hideRuler() {
    const box = $("ruler-text");
    if (!box.hidden) box.hidden = true;
    $("board-box").classList.remove("ruler-room");
    if ($("move-ruler").firstChild) $("move-ruler").replaceChildren();
    state.ruler.text = "";
  }
  // While a piece waits to be put in place, the words over (a phone: under) the board say where
  // it goes and how far it has still to go.
  function placementRuler(p) {
    const box = $("ruler-text");
    box.hidden = false;
    $("board-box").classList.add("ruler-room");
    if ($("move-ruler").firstChild) $("move-ruler").replaceChildren();
    box.className = `ruler-text placing ${fitsPlace(p, offFrom(p.marker, p.to)) ? "legal" : "close"}`;
    setText(box, `${placementHeadline(p)} · ${toGo(p)}`);
    state.ruler.text = box.textContent;
  }
  function rulerVerdict(p) {
    if (!p) return { cls: "", text: "checking…" };
    const j = p.judged;
    if (j) {
      const fix = (j.fix || []).join(" and ");
      if (j.legal && j.halts) return { cls: "close", text: clean(j.halts) };      // taken, but stopped short of here
      if (j.legal) {
        // The contract's verdict: its outcome word, or the whole Verdict as JSON.
        const call = j.verdict && typeof j.verdict === "object" ? j.verdict.outcome : j.verdict;
        const close = call === "too close to call";
        return { cls: close ? "close" : "legal", text: close ? "it may stop here, but too close to call"
          : `it may stop here${j.margin_mm > 0 ? `, ${len(j.margin_mm)} to spare` : ""}` };
      }
      const why = clean((j.reasons || [])[0] || "not legal here");
      // A system that says no fix has none to give; one that says nothing: the margin, in words.
      const todo = j.fix !== undefined ? fix : j.margin_mm < 0 ? `bring it ${len(-j.margin_mm)} back` : "";
      return { cls: "illegal", text: `not legal here: ${why}${todo ? ` → ${todo}` : ""}` };
    }
    return p.ok ? { cls: "legal", text: "the rules take this move" } : { cls: "illegal", text: `not now: ${clean(p.why)}` };
  }
  function followRuler() {
    const placing = placementOf(state.game);
    if (placing) { placementRuler(placing); return; }
    const g = state.game, id = rulerCar();
    const car = id === null || id === undefined ? null : cars.get(id);
    const from = car ? moveStart(id) : null;
    if (!g || !g.game || !car || !car.target || !from) { hideRuler(); return; }
    const t = car.target;
    const moved = Math.hypot(t.x - from[0], t.y - from[1]);
    const turned = ((t.h - from[2] + 540) % 360) - 180;
    const box = $("ruler-text");
    box.hidden = false;
    $("board-box").classList.add("ruler-room");
    if (moved < PREVIEW_MM && Math.abs(turned) < PREVIEW_DEG) {
      if ($("move-ruler").firstChild) $("move-ruler").replaceChildren();
      box.className = "ruler-text";
      // After a move the rules took, the car stands where that move put it: not "not moved yet".
      setText(box, heldWhere(id) === "held where its last move put it"
        ? `${car.name}: where its last move put it (a further move is measured from here).`
        : `${car.name}: not moved yet (its move is measured from here; a dashed outline keeps the place).`);
      state.ruler.text = box.textContent;
      return;
    }
    $("move-ruler").replaceChildren(el("line", { class: "move-line", x1: from[0], y1: Y(from[1]), x2: t.x, y2: Y(t.y) }));
    const spec = state.canChange && !state.pendingDice ? moveSpec(id) : null;
    const last = rulerLast && rulerLast.car === id ? rulerLast : null;
    if (spec && (!last || Math.hypot(t.x - last.x, t.y - last.y) > PREVIEW_MM || Math.abs(((t.h - last.h + 540) % 360) - 180) > PREVIEW_DEG)) {
      const wait = PREVIEW_MS - (performance.now() - rulerAt);
      if (rulerBusy) { /* the answer under way calls again */ }
      else if (wait > 0) { if (!rulerTimer) rulerTimer = setTimeout(() => { rulerTimer = null; followRuler(); }, wait); }
      else {
        rulerBusy = true;
        rulerAt = performance.now();
        const pose = { car: id, x: t.x, y: t.y, h: t.h };
        const body = { act: spec.act };
        for (const f of spec.fields) if (f.kind === "fixed") body[f.name] = f.value;
        api("preview", body).then((p) => { state.ruler.result = p; }, (e) => { state.ruler.result = { ok: false, why: e.message }; })
          .finally(() => {
            rulerBusy = false; rulerLast = pose; state.ruler.car = id; state.ruler.previews += 1;
            followRuler();
          });
      }
    }
    const v = spec ? rulerVerdict(state.ruler.car === id ? state.ruler.result : null) : null;
    const turnedText = Math.abs(turned) >= 1 ? `, turned ${fmt(Math.abs(turned), 0)}° ${turned > 0 ? "left" : "right"}` : "";
    box.className = `ruler-text ${v ? v.cls : ""}`;
    setText(box, `${car.name}: moved ${len(moved)}${turnedText}` + (v ? ` · ${v.text}` : ""));
    state.ruler.text = box.textContent;
  }

  function drawBoard(g) {
    const board = g.game && g.game.board;
    $("board-cells").replaceChildren(...cellParts(board ? board.cells : []));
  }

  function drawOverlays(c) {
    const parts = cellParts(c.overlays.cells);
    for (const r of c.overlays.move_regions || []) {
      if (r.template) parts.push(el("path", { class: "template", d: ringsPath(r.template), "data-template": r.name }));
      parts.push(el("path", { class: "move-region", d: ringsPath(r.polygons), "data-region": r.name, "fill-rule": "evenodd" }));
    }
    for (const a of c.overlays.arcs || []) {
      parts.push(el("path", { class: "arc" + (a.jammed ? " jammed" : ""), d: ringsPath(a.polygons), "data-arc": a.mount }));
    }
    overlayLayer.replaceChildren(...parts);
    lineLayer.replaceChildren();
    for (const t of c.targets) if (t.line && t.range && t.range.outcome !== "out") drawLine(t.line, "in-range");
  }

  // --- an action ----------------------------------------------------------------------------
  function closeActionForm() {
    openForm = null; $("action-form").hidden = true; delete $("action-form").dataset.act; showWaiting();
    if (state.car) showActions(state.car);
  }

  function openAction(spec) {
    openForm = { spec, values: {} };
    $("action-error").textContent = "";
    refreshActionForm();
    if (state.car) showActions(state.car);
    // On a phone the form opens under the board's actions: brought into view.
    if (narrowScreen.matches) $("action-form").scrollIntoView({ block: "nearest" });
  }
  // The open action's Resolve stays in view with whatever else waits (see showWaiting).
  $("resolve").addEventListener("click", () => resolveAction());
  $("resolve-close").addEventListener("click", () => closeActionForm());

  function refreshActionForm() {
    const box = $("action-form");
    const spec = (state.car.actions.find((a) => a.act === openForm.spec.act)) || openForm.spec;
    openForm.spec = spec;
    box.hidden = false;
    box.dataset.act = spec.act;
    const fields = [];
    for (const f of spec.fields) {
      if (f.kind === "fixed") continue;
      if (f.kind === "table_pose" || f.kind === "table_path") { fields.push(html("p", { class: "dim", text: `${f.name}: ${f.label} (from the camera)` })); continue; }
      if (f.kind === "table_point") {
        const v = openForm.values[f.name];
        fields.push(html("p", {}, `${f.label}: `, html("span", { class: "num", "data-point": f.name, text: v ? `(${fmt(v[0], 0)}, ${fmt(v[1], 0)}) mm` : "not picked" }), " ",
          html("button", { type: "button", "data-pick": f.name, onclick: async () => {
            const [pt] = await pickPoints(1, `Tap ${f.label} on the table`);
            if (pt) { openForm.values[f.name] = pt; refreshActionForm(); }
          }, text: "Pick on the table" })));
        continue;
      }
      if (f.kind === "number") {
        const input = html("input", { type: "number", name: f.name, "aria-label": f.label, step: f.step ?? 1,
          ...(f.minimum !== null && f.minimum !== undefined ? { min: f.minimum } : {}),
          ...(f.maximum !== null && f.maximum !== undefined ? { max: f.maximum } : {}) });
        if (openForm.values[f.name] !== undefined) input.value = openForm.values[f.name];
        input.addEventListener("change", () => { openForm.values[f.name] = input.value === "" ? undefined : Number(input.value); previewAction(); });
        fields.push(html("label", {}, `${f.label} `, input));
        continue;
      }
      if (f.kind === "flag") {
        const box = html("input", { type: "checkbox", name: f.name, "aria-label": f.label });
        box.checked = !!openForm.values[f.name];
        openForm.values[f.name] = box.checked;
        box.addEventListener("change", () => { openForm.values[f.name] = box.checked; previewAction(); });
        fields.push(html("label", {}, box, ` ${f.label}`));
        continue;
      }
      const choices = f.choices_by ? (f.choices_by[String(openForm.values[f.depends_on])] || []) : f.choices;
      const sel = html("select", { name: f.name, "aria-label": f.label },
        ...(f.optional ? [html("option", { value: "", text: "(any)" })] : []),
        ...choices.map((c) => html("option", { value: String(c.value), text: c.label })));
      const prev = openForm.values[f.name];
      if (prev !== undefined && choices.some((c) => String(c.value) === String(prev))) sel.value = String(prev);
      else if (state.car) {
        // Start on the first option the rules take (the car's checks: the other side's first);
        // before they are in, a target on the nearest one it can reach.
        const checked = checkedChoice(spec.act, f.name, choices, openForm.values);
        const best = checked === undefined && f.name === "target" && state.car.targets.find((t) => t.shootable && choices.some((c) => String(c.value) === String(t.marker)));
        if (checked !== undefined) sel.value = checked; else if (best) sel.value = String(best.marker);
      }
      openForm.values[f.name] = sel.value === "" ? undefined : sel.value;
      sel.addEventListener("change", () => { openForm.values[f.name] = sel.value === "" ? undefined : sel.value; refreshActionForm(); });
      fields.push(html("label", {}, `${f.label} `, sel));
    }
    box.replaceChildren(html("h3", { text: spec.label }), html("p", { class: "dim", text: `${spec.about || ""} [${spec.rule}]` }),
      ...fields, html("div", { id: "preview", "aria-live": "polite" }));
    $("resolve").disabled = true;
    setText($("resolve-what"), `${spec.label}${state.car ? ` (${state.car.card.name})` : ""}: checking…`);
    showWaiting();
    previewAction();
  }

  function actionBody() {
    const body = { act: openForm.spec.act };
    for (const f of openForm.spec.fields) {
      if (f.kind === "fixed") body[f.name] = f.value;
      else if ((f.kind === "table_point" || f.kind === "number" || f.kind === "flag") && openForm.values[f.name] !== undefined) body[f.name] = openForm.values[f.name];
      else if (f.kind === "choice" && openForm.values[f.name] !== undefined) {
        const v = openForm.values[f.name];
        const choices = f.choices_by ? (f.choices_by[String(openForm.values[f.depends_on])] || []) : f.choices;
        const c = choices.find((x) => String(x.value) === String(v));
        body[f.name] = c ? c.value : v;
      }
    }
    return body;
  }

  let previewSeq = 0;
  async function previewAction() {
    const seq = ++previewSeq;
    const box = $("preview");
    let p;
    try { p = await api("preview", actionBody()); } catch (e) { box.replaceChildren(html("p", { class: "error", text: e.message })); return; }
    if (seq !== previewSeq || !openForm) return;
    const lines = [];
    lines.push(html("p", { class: p.ok ? "holds" : "fails", id: "conditions",
      text: !p.ok ? `✗ ${p.why}` : p.premeasure === false ? `✓ Ready to declare: distances are ${p.about}.`
        : `✓ Its conditions hold.${p.needs ? ` It needs ${p.needs}.` : " It needs no dice."}` }));
    const m = p.measured;
    if (m) {
      // range_text says it in the book's unit; a margin in mm beside it would mix units in one line.
      if (m.range) lines.push(html("p", { class: "num", text: `Range: ${m.range_text || outcomeWord[m.range.outcome]}.` }));
      // A margin's sign is said in words ("12.0 mm outside"), never "-12.0 mm inside".
      for (const a of m.arcs || (m.arc ? [m.arc] : [])) lines.push(html("p", { class: "num", text: `${a.mount || "the"} arc: ${outcomeWord[a.outcome]}, ${len(a.margin_mm)} ${a.margin_mm >= 0 ? "inside" : "outside"} its edge ± ${lenDoubt(a.sigma_mm)}.` }));
      lineLayer.querySelector(".chosen")?.remove();
      if (m.line) drawLine(m.line, "chosen");
    }
    if (p.judged) {
      // The refusal above already gives the rules' reasons: each is said once.
      const j = p.judged, reasons = (j.reasons || []).filter((r) => !(p.why || "").includes(r)).join("; ");
      lines.push(html("p", { class: "num", text: j.margin_mm !== undefined && j.template
        ? `Move: ${j.legal ? "legal" : "not legal"}; front bumper ${fmt(Math.abs(j.margin_mm))} mm ${j.margin_mm >= 0 ? "inside" : "outside"} the ${j.template} template region ± ${fmt(j.sigma_mm, 2)} mm.${reasons ? " " + reasons : ""}`
        : `Move: ${j.legal ? "legal" : "not legal"}.${reasons ? " " + reasons : ""}` }));
    }
    box.replaceChildren(...lines);
    $("resolve").disabled = !p.ok || !state.canChange;
    const who = state.car ? ` (${state.car.card.name})` : "";
    setText($("resolve-what"), `${openForm.spec.label}${who}: ${p.ok ? "✓ ready to resolve" : `✗ ${clean(p.why)}`}`);
    $("resolve-what").className = `resolve-what ${p.ok ? "holds" : "fails"}`;
  }

  async function resolveAction() {
    const g = await act("act", actionBody(), $("action-error"));
    if (g) closeActionForm();
  }

  // --- dice ---------------------------------------------------------------------------------
  $("dice-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const faces = [...$("dice-inputs").querySelectorAll("input")].map((i) => Number(i.value));
    // Taken: fresh boxes for the next roll, but only if the page still shows this one. The
    // stream may already have drawn the next request, and the player typed into it.
    const asked = $("dice-inputs").dataset.key;
    act("dice/typed", { faces }, $("dice-error")).then((g) => {
      if (g && $("dice-inputs").dataset.key === asked) $("dice-inputs").dataset.key = "";
    });
  });
  $("dice-roll").addEventListener("click", () => act("dice/virtual", {}, $("dice-error")));
  $("dice-cancel").addEventListener("click", () => act("cancel", {}, $("dice-error")));

  // --- the camera and the ruler --------------------------------------------------------------
  function fillMeasureChoices(list) {
    for (const id of ["measure-a", "measure-b"]) {
      const sel = $(id);
      const have = [...sel.options].map((o) => o.value).join(",");
      const want = list.map((c) => String(c.id)).join(",");
      if (have === want) continue;
      const v = sel.value;
      sel.replaceChildren(...list.map((c) => html("option", { value: c.id, text: c.name })));
      if (v) sel.value = v; else if (id === "measure-b" && list.length > 1) sel.selectedIndex = 1;
    }
  }
  $("measure-go").addEventListener("click", async () => {
    const out = $("measure-result");
    try {
      const m = await api(`measure?a=${$("measure-a").value}&b=${$("measure-b").value}`);
      out.replaceChildren(html("p", { class: "num", id: "measured", text:
        `${m.names[0]} to ${m.names[1]}: ${len(m.distance_mm)} ± ${lenDoubt(m.sigma_mm)}, closest point to closest point; ` +
        `centres ${len(m.centre_distance_mm)} ± ${lenDoubt(m.centre_sigma_mm)}. ${m.names[1]} in ${m.names[0]}'s front arc: ${outcomeWord[m.in_front_arc.outcome]}; ` +
        `rear arc: ${outcomeWord[m.in_rear_arc.outcome]}. Line of sight: ${m.line_of_sight.clear ? "clear" : "blocked by " + m.line_of_sight.blocked_by.join(", ")}.` }));
      lineLayer.querySelector(".ruler")?.remove();
      drawLine(m.line, "ruler");
    } catch (e) { out.replaceChildren(html("p", { class: "error", text: e.message })); }
  });
  let cameraTimer = null;
  function refreshCamera() {
    const pick = $("camera-pick");         // several cameras: the one chosen (api camera.jpg?camera=N)
    $("camera-view").src = `api/camera.jpg?${pick ? `camera=${pick.value}&` : ""}t=${Date.now()}`;
    if (pick && state.last) calibFigures(state.last);
  }
  function cameraChooser(cameras) {
    if (cameras.length < 2 || $("camera-pick")) return;
    $("camera-view").before(html("label", {}, "Camera picture: ", html("select", { id: "camera-pick", onchange: refreshCamera },
      ...cameras.map((c, i) => html("option", { value: String(i + 1), text: c.name })))));
  }
  // The camera's picture under the table follows the cars: the next picture is asked for as soon
  // as the last one is shown (at most UNDERLAY_FPS a second, only while the page is in view), so
  // a moving car is never seen twice, once where it is and once where it was seconds ago.
  const UNDERLAY_FPS = 8;
  let underlayBusy = false, underlayUrl = null;
  async function refreshUnderlay() {
    if (underlayBusy || !$("show-rectified").checked || document.hidden) return;
    underlayBusy = true;
    const started = performance.now();
    try {
      const r = await fetch(`api/rectified.jpg?t=${Date.now()}`, { cache: "no-store" });
      if (r.ok && $("show-rectified").checked) {
        const url = URL.createObjectURL(await r.blob());
        $("rectified").setAttribute("href", url);
        if (underlayUrl) URL.revokeObjectURL(underlayUrl);
        underlayUrl = url;
        $("rectified").dataset.shownAt = String(Date.now());
      }
    } catch (e) { /* the stream's status line says when the server is away */ }
    underlayBusy = false;
    setTimeout(refreshUnderlay, Math.max(0, 1000 / UNDERLAY_FPS - (performance.now() - started)));
  }
  $("show-rectified").addEventListener("change", (ev) => {
    $("rectified").style.display = ev.target.checked ? "" : "none";
    refreshUnderlay();
  });
  document.addEventListener("visibilitychange", refreshUnderlay);

  // --- the demo table: players drag and turn the cars (demo only) ---------------------------
  // On the synthetic demo table a player moves a car from the page: drag it to slide it, drag
  // the selected car's handle (or its turn buttons, or Q / E) to turn it. Each pose goes to
  // api/demo/move; the synthetic camera drives the car there at a hand's pace and the tracker
  // reads it back, so the car drawn on the board is always the camera's. A dashed outline
  // shows where a car was sent until the camera sees it there. A tap still selects a car.
  // On a real table (no data-demo) none of this is set up: cars are moved by hand.
  const demoPlay = (() => {
    if (document.body.dataset.demo !== "true") return null;
    const TURN_STEP_DEG = 15, SEND_MS = 80, SEND_MM = 8, SEND_DEG = 3, DRAG_PX = 6;
    const widthMm = parseFloat(board.dataset.widthMm);
    const layer = el("g", { id: "demo-layer" });
    board.append(layer);                                 // above the cars, for the handle
    const sent = new Map();                              // id -> last pose sent {x, y, h}
    const ghosts = new Map();                            // id -> dashed outline where it was sent
    const handle = el("g", { class: "demo-handle", "data-handle-for": "" });
    handle.append(el("line", { class: "demo-handle-arm" }), el("circle", { class: "demo-handle-grip", r: 22 }));
    handle.style.display = "none";
    layer.append(handle);
    const info = { moves: 0, errors: 0, dragging: null };
    state.demo = info;                                   // for the tests and people poking at it

    const bar = html("p", { id: "demo-bar", class: "demo-bar" },
      html("span", { text: "Demo table: drag a car to slide it; turn the selected car " }),
      html("button", { type: "button", id: "demo-turn-left", title: "turn left 15° (Q)", "aria-label": "turn the selected car left 15 degrees", text: "⟲ 15°" }), " ",
      html("button", { type: "button", id: "demo-turn-right", title: "turn right 15° (E)", "aria-label": "turn the selected car right 15 degrees", text: "⟳ 15°" }),
      html("span", { class: "dim", text: " (or drag its round handle, or press Q / E)" }),
      html("span", { id: "demo-error", class: "error" }));
    $("board-box").after(bar);
    placeActions();

    const tracked = (id) => (state.last ? state.last.cars.find((c) => c.id === id) : null);
    const toTable = (ev) => {
      const pt = board.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      const at = pt.matrixTransform(board.getScreenCTM().inverse());
      return [at.x, depth - at.y];
    };
    const norm = (h) => { const d = ((h % 360) + 360) % 360; return d > 180 ? d - 360 : d; };
    const arrived = (c, p) => Math.hypot(c.x_mm - p.x, c.y_mm - p.y) < 2 && Math.abs(norm(c.heading_deg - p.h)) < 2;
    // Where a car is going: the pose last sent while the camera has not yet seen it there,
    // else where the camera sees it (so a second drag starts from where the first one ends).
    function goal(id) {
      const c = tracked(id), p = sent.get(id);
      if (p && c && !arrived(c, p)) return { ...p };
      return c ? { x: c.x_mm, y: c.y_mm, h: c.heading_deg } : null;
    }

    let chain = Promise.resolve();                       // poses go in the order they were made
    function send(id, pose) {
      const p = { x: Math.min(Math.max(pose.x, 0), widthMm), y: Math.min(Math.max(pose.y, 0), depth), h: norm(pose.h) };
      sent.set(id, p);
      showGhost(id, p);
      const body = { vehicle: id, x_mm: +p.x.toFixed(1), y_mm: +p.y.toFixed(1), heading_deg: +p.h.toFixed(1) };
      chain = chain.then(() => api("demo/move", body)).then(() => { info.moves += 1; $("demo-error").textContent = ""; })
        .catch((e) => {
          info.errors += 1;
          $("demo-error").textContent = ` ${e.message}`;
          if (sent.get(id) === p) { sent.delete(id); ghosts.get(id)?.remove(); ghosts.delete(id); }
        });
      return chain;
    }

    function showGhost(id, p) {
      const c = tracked(id);
      if (!c) return;
      let g = ghosts.get(id);
      if (!g) {
        g = el("g", { class: "demo-ghost", "data-ghost-for": id });
        const L = c.length_mm, W = c.width_mm;
        g.append(el("rect", { x: -L / 2, y: -W / 2, width: L, height: W, rx: 4 }),
                 el("path", { d: `M ${L / 2 - 14} ${-W / 2 + 5} L ${L / 2 - 3} 0 L ${L / 2 - 14} ${W / 2 - 5}` }));
        layer.insertBefore(g, handle);
        ghosts.set(id, g);
      }
      g.setAttribute("transform", `translate(${p.x} ${depth - p.y}) rotate(${-p.h})`);
    }

    function placeHandle(dragged) {
      const id = state.selected, c = id === null ? null : tracked(id);
      const p = dragged && dragged.id === id ? dragged.pose : id === null ? null : goal(id);
      const can = state.canChange && c && !c.stale && p;
      handle.style.display = can ? "" : "none";
      $("demo-turn-left").disabled = $("demo-turn-right").disabled = !can;
      if (!can) { keepNamesOff([]); return; }
      const r = c.length_mm / 2 + 35, a = (p.h * Math.PI) / 180;
      const hx = p.x + r * Math.cos(a), hy = p.y + r * Math.sin(a);
      // Car names keep off the grip and its arm (from the car's nose out).
      const along = [0.5, 0.65, 0.8].map((k) => [p.x + r * k * Math.cos(a), depth - (p.y + r * k * Math.sin(a))]);
      keepNamesOff([[hx - 24, depth - hy - 24, hx + 24, depth - hy + 24], ...along.map(([x, y]) => [x - 5, y - 5, x + 5, y + 5])]);
      handle.dataset.handleFor = id;
      const arm = handle.querySelector("line");
      arm.setAttribute("x1", p.x); arm.setAttribute("y1", depth - p.y);
      arm.setAttribute("x2", hx); arm.setAttribute("y2", depth - hy);
      const grip = handle.querySelector("circle");
      grip.setAttribute("cx", hx); grip.setAttribute("cy", depth - hy);
    }
    let handleKey = "";
    function keepNamesOff(boxes) {
      const key = boxes.map((b) => b.map((v) => v.toFixed(0)).join(",")).join(" ");
      if (key === handleKey) return;
      handleKey = key;
      handleBoxes = boxes;
      placeLabels();
    }
    // Ghosts go once the camera sees the car where it was sent; the handle follows the goal.
    // A car the camera sees standing still elsewhere for 2 s of its frames (the camera's time:
    // a stalled stream or a busy machine proves nothing) is not going where this page sent it
    // (another page, or a hand, moved it since): that goal is forgotten, so the next drag
    // starts from where the car stands.
    const STILL_S = 2;
    setInterval(() => {
      const now = state.last ? state.last.time_s : 0;
      for (const [id, p] of sent) {
        const c = tracked(id);
        if (!c || arrived(c, p) || info.dragging?.id === id) continue;
        const seen = p.seen;
        if (!seen || Math.hypot(c.x_mm - seen.x, c.y_mm - seen.y) > 2 || Math.abs(norm(c.heading_deg - seen.h)) > 2) {
          p.seen = { x: c.x_mm, y: c.y_mm, h: c.heading_deg, at: now };
        } else if (now - seen.at > STILL_S) sent.delete(id);
      }
      for (const [id, g] of ghosts) {
        const c = tracked(id), p = sent.get(id);
        if (!c || !p || (arrived(c, p) && info.dragging?.id !== id)) { g.remove(); ghosts.delete(id); }
      }
      if (!info.dragging) placeHandle();
    }, 100);

    // A press on a car or on the handle; it becomes a drag once the pointer has moved a few
    // pixels (less is a tap, and the tap's click selects the car as before).
    let press = null, swallowClick = false;
    function start(ev, id, kind) {
      if (!state.canChange || board.classList.contains("picking") || ev.button > 0) return;
      const from = goal(id);
      if (!from) return;
      press = { id, kind, pointer: ev.pointerId, x0: ev.clientX, y0: ev.clientY, at0: toTable(ev), from,
                dragging: false, lastSent: { ...from }, sentAt: -Infinity, timer: null, pose: { ...from } };
    }
    // Whether the press is on the car's body itself (not only its fingertip-wide tap area).
    const e_body = (g, ev) => document.elementsFromPoint(ev.clientX, ev.clientY).some((e) => e.classList && e.classList.contains("body") && g.contains(e));
    carLayer.addEventListener("pointerdown", (ev) => {
      // A press on a car's own body drags that car (its label may reach over a neighbour's
      // centre); only the fingertip-wide tap areas around cars pick the nearest one.
      const g = ev.target.closest("[data-car-id]");
      if (g) start(ev, Number(g.dataset.carId), "slide");
    });
    handle.addEventListener("pointerdown", (ev) => {
      ev.stopPropagation();
      // The handle of the selected car lying over a neighbour's body: a press there is on the
      // neighbour (the usability pass could not tap a car under another's handle).
      const owner = Number(handle.dataset.handleFor);
      const under = document.elementsFromPoint(ev.clientX, ev.clientY)
        .map((e) => (e.closest ? e.closest("#cars [data-car-id]") : null))
        .find((g) => g && e_body(g, ev) && Number(g.dataset.carId) !== owner);
      if (under) { select(Number(under.dataset.carId)); start(ev, Number(under.dataset.carId), "slide"); return; }
      start(ev, owner, "turn");
      if (press) { press.dragging = true; info.dragging = press; board.setPointerCapture(ev.pointerId); }
    });
    board.addEventListener("pointermove", (ev) => {
      if (!press || ev.pointerId !== press.pointer) return;
      if (!press.dragging) {
        if (Math.hypot(ev.clientX - press.x0, ev.clientY - press.y0) < DRAG_PX) return;
        press.dragging = true;
        info.dragging = press;
        board.setPointerCapture(ev.pointerId);
      }
      ev.preventDefault();
      const [x, y] = toTable(ev);
      if (press.kind === "slide") {
        press.pose = { x: press.from.x + x - press.at0[0], y: press.from.y + y - press.at0[1], h: press.from.h };
      } else {
        press.pose = { ...press.from, h: Math.round((Math.atan2(y - press.from.y, x - press.from.x) * 180) / Math.PI) };
      }
      showGhost(press.id, press.pose);
      if (press.kind === "turn") placeHandle(press); else if (press.id === state.selected) handle.style.display = "none";
      sendAlong(press);
    });
    // Poses along a drag go at most every SEND_MS; one held back goes when its time comes, so
    // a car follows a pointer that moved quickly and then held still.
    function sendAlong(p) {
      if (press !== p || p.timer) return;
      const now = performance.now(), last = p.lastSent;
      if (!(Math.hypot(p.pose.x - last.x, p.pose.y - last.y) >= SEND_MM || Math.abs(norm(p.pose.h - last.h)) >= SEND_DEG)) return;
      if (now - p.sentAt < SEND_MS) {
        p.timer = setTimeout(() => { p.timer = null; sendAlong(p); }, SEND_MS - (now - p.sentAt));
        return;
      }
      p.sentAt = now;
      p.lastSent = { ...p.pose };
      send(p.id, p.pose);
    }
    function finish(ev) {
      if (!press || ev.pointerId !== press.pointer) return;
      const p = press;
      press = null;
      info.dragging = null;
      clearTimeout(p.timer);
      if (!p.dragging) return;
      swallowClick = true;                               // the click that ends a drag is no tap
      setTimeout(() => { swallowClick = false; }, 0);
      const last = p.lastSent;
      if (Math.hypot(p.pose.x - last.x, p.pose.y - last.y) > 0.05 || Math.abs(norm(p.pose.h - last.h)) > 0.05) send(p.id, p.pose);
      placeHandle();
    }
    board.addEventListener("pointerup", finish);
    board.addEventListener("pointercancel", finish);
    board.addEventListener("click", (ev) => { if (swallowClick) { swallowClick = false; ev.stopPropagation(); } }, true);

    function turn(deg) {
      const id = state.selected, p = id === null ? null : goal(id);
      if (!p || !state.canChange) return;
      send(id, { ...p, h: p.h + deg }).then(placeHandle);
      placeHandle();
    }
    $("demo-turn-left").addEventListener("click", () => turn(TURN_STEP_DEG));
    $("demo-turn-right").addEventListener("click", () => turn(-TURN_STEP_DEG));
    document.addEventListener("keydown", (ev) => {
      if (ev.target.closest("input, textarea, select") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key.toLowerCase();
      if (k === "q" || k === "e") turn((k === "q" ? 1 : -1) * (ev.shiftKey ? 5 : TURN_STEP_DEG));
    });
    info.goal = goal;                                    // where the next drag starts from
    return { send, goal };
  })();

  // --- the table-side view: large type for players a step or two from the screen -------------
  // The acting car, the last result as one headline, what is wanted now; a short beep when dice
  // or a choice are wanted (on by default, with a mute; a browser lets a page sound only after
  // a tap or key on it, so the first one unlocks it and the view says so until then).
  const sound = { on: localStorage.getItem("companion.sound") !== "off", ctx: null, lastKey: null, wanted: 0, beeps: 0 };
  state.sound = sound;
  function audio() {
    if (!sound.ctx) {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return null;
      sound.ctx = new Ctx();
      sound.ctx.onstatechange = showSoundNote;
    }
    return sound.ctx;
  }
  function unlockAudio() {
    if (!sound.on) return;
    const c = audio();
    if (c && c.state !== "running") c.resume().then(showSoundNote, () => {});
  }
  document.addEventListener("pointerdown", unlockAudio, true);
  document.addEventListener("keydown", unlockAudio, true);
  function beep() {
    sound.wanted += 1;
    if (!sound.on) return;
    const c = audio();
    if (!c || c.state !== "running") { showSoundNote(); return; }
    const osc = c.createOscillator(), gain = c.createGain(), t0 = c.currentTime;
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.0001, t0);
    gain.gain.exponentialRampToValueAtTime(0.3, t0 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + 0.25);
    osc.connect(gain).connect(c.destination);
    osc.start(t0);
    osc.stop(t0 + 0.3);
    sound.beeps += 1;
  }
  function showSoundNote() {
    const b = $("sound-toggle");
    b.setAttribute("aria-pressed", String(sound.on));
    b.textContent = sound.on ? "Sound on" : "Sound off";
    const blocked = sound.on && (!sound.ctx || sound.ctx.state !== "running");
    setText($("ts-sound"), !sound.on ? "Sound is off." : blocked ? "Tap anywhere on the page to let it beep when dice or a choice are wanted." : "");
  }
  $("sound-toggle").addEventListener("click", () => {
    sound.on = !sound.on;
    localStorage.setItem("companion.sound", sound.on ? "on" : "off");
    if (sound.on) unlockAudio();
    showSoundNote();
  });
  function wantedNow(g) {
    const p = g.pending;
    if (p && p.waiting === "choice") return { kind: "choice", text: clean(`${p.player}, choose ${p.purpose}`) };
    if (p && p.waiting === "placement") return { kind: "placement", text: `${placementHeadline(p.placement)}: ${toGo(p.placement)}` };
    if (p) return { kind: "dice", text: `Dice, please: ${clean(p.asked)}` };
    if (!g.game) return { kind: "setup", text: "No game yet: start one in Setup." };
    const a = actingCar(), car = a === null ? null : cars.get(a);
    if (car) return { kind: "move", text: `Move the ${car.name}, or act with it` };
    return { kind: "turn", text: describeTurn(g) };
  }
  function showTableSide(g) {
    const w = wantedNow(g);
    const key = w.kind === "dice" || w.kind === "choice" ? w.text + JSON.stringify(g.pending.so_far || [])
      : w.kind === "placement" ? JSON.stringify([g.pending.placement.marker, g.pending.placement.to]) : null;
    if (key && key !== sound.lastKey) beep();
    sound.lastKey = key;
    const a = actingCar(), car = a === null ? null : cars.get(a);
    setText($("ts-acting"), car ? `The ${car.name}'s turn` : describeTurn(g));
    $("ts-acting").style.setProperty("--car", car ? carColour(a) : "transparent");
    const last = g.game ? g.last_outcome : null;
    setText($("ts-headline"), !last ? "" : last.undone ? "Undone" : outcomeHeadline(last.event, last.left));
    setText($("ts-wanted"), w.text);
    $("ts-wanted").dataset.kind = w.kind;
    // The next round started from here, as the Round tab would start it (its play orders).
    const next = canStartRound(g);
    $("ts-next").hidden = !next;
    if (next) setText($("ts-start-round"), `Start ${roundWord(g)} ${(g.game.round ?? 0) + 1}`);
    showSoundNote();
  }
  // Only when nothing acts or waits, no side is up and the game is not over (the rules still
  // judge the request: a refusal is said beside the button).
  function canStartRound(g) {
    if (!state.canChange || !g || !g.game || g.pending) return false;
    const game = g.game;
    if (game.state && (game.state.over || game.state.winner)) return false;
    if (g.turn_checks && g.turn_checks.round) return false;        // the rules' dry run refuses it
    return (game.active === null || game.active === undefined) && !game.up;
  }
  $("ts-start-round").addEventListener("click", () => act("round", { orders: roundOrders() }, $("ts-round-error")));
  function setView(tableSide) {
    document.body.classList.toggle("tableside", tableSide);
    $("tableside").hidden = !tableSide;
    $("view-toggle").setAttribute("aria-pressed", String(tableSide));
    $("view-toggle").textContent = tableSide ? "Full view" : "Table view";
    const u = new URL(location.href);
    if (tableSide) u.searchParams.set("view", "table"); else u.searchParams.delete("view");
    history.replaceState(null, "", u);
    requestAnimationFrame(fitToScreen);
  }
  $("view-toggle").addEventListener("click", () => setView(!document.body.classList.contains("tableside")));
  setView(new URLSearchParams(location.search).get("view") === "table");
  showSoundNote();

  // --- tabs, login --------------------------------------------------------------------------
  function showTab(name) {
    for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.dataset.tab === name));
    for (const t of document.querySelectorAll(".tab")) t.hidden = t.id !== `tab-${name}`;
    clearInterval(cameraTimer);
    if (name === "calibration") { refreshCamera(); cameraTimer = setInterval(refreshCamera, 2000); }
  }
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("turn").addEventListener("click", () => { showTab("round"); $("tabs").scrollIntoView({ block: "start", behavior: "smooth" }); });

  async function session() {
    const s = await api("session");
    state.csrf = s.csrf;
    state.canChange = s.can_change;
    $("login").hidden = s.can_change;
    document.body.classList.toggle("watching", !s.can_change);
  }
  $("login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // A join code is two groups of four letters and digits ("ABCD-EFGH"); a PIN is the rest.
    const typed = $("pin").value.trim();
    const code = /^[A-Za-z2-9]{4}[- ]?[A-Za-z2-9]{4}$/.test(typed) && /[A-Za-z -]/.test(typed);
    try {
      await api("login", code ? { code: typed } : { pin: typed });
      await session();
      refreshGame();
      refreshSeats();
    } catch (e) { $("login-error").textContent = e.message; }
  });

  // --- seats: which player this device answers for ------------------------------------------
  state.seats = null;
  async function seatTo(player, to) {
    $("seats-error").textContent = "";
    try { showSeats(await api("seats", { player, to })); } catch (e) { $("seats-error").textContent = e.message; }
  }
  async function answerHeld(id, take) {
    $("seats-error").textContent = "";
    try { await api("held", { id, take }); refreshSeats(); refreshGame(); } catch (e) { $("seats-error").textContent = e.message; }
  }
  function showSeats(s) {
    state.seats = s;
    const box = $("seats");
    box.hidden = !s.players.length && !s.join_code && !(s.held || []).length;
    // One line folded (a phone's board stays near the top); opened when something is asked of
    // this device: a seat to take, a change waiting for the host.
    $("seats-mine").textContent = (s.host ? "This device is the host" : "This device")
      + (s.mine.length ? ` answers for ${s.mine.join(", ")}` : s.host ? ": it may answer for any free seat" : " holds no seat yet: take yours")
      + (s.join_code ? ` · join code ${s.join_code}` : "");
    const asked = (s.held || []).length > 0 || (!s.host && !s.mine.length);
    if (asked && box.dataset.asked !== "yes") box.open = true;
    box.dataset.asked = asked ? "yes" : "no";
    $("seats-code").hidden = !s.join_code;
    $("seats-code").textContent = s.join_code ? `Join code for new players: ${s.join_code}` : "";
    $("ts-join").hidden = !s.join_code;
    $("ts-join").textContent = s.join_code ? `Join code: ${s.join_code}` : "";
    const key = JSON.stringify([s.players, s.devices, state.canChange]);
    if ($("seats-list").dataset.key !== key) {
      $("seats-list").dataset.key = key;
      $("seats-list").replaceChildren(...s.players.map((p) => {
        const words = p.held === "you" ? "yours" : p.held === "free" ? "free" : `held by ${p.device_label || "another device"}`;
        const li = html("li", { "data-seat": p.player }, html("span", { text: `${p.player}: ${words} ` }));
        if (p.held !== "you" && (p.held === "free" || s.host))
          li.append(html("button", { type: "button", class: "quiet", disabled: !state.canChange, text: `Take ${p.player}'s seat`,
                                     onclick: () => seatTo(p.player, "me") }));
        if (p.held === "you" || (s.host && p.held !== "free"))
          li.append(html("button", { type: "button", class: "quiet", disabled: !state.canChange, text: "Free it",
                                     onclick: () => seatTo(p.player, "free") }));
        if (s.host && s.devices && s.devices.length > 1) {
          const pick = html("select", { "aria-label": `move ${p.player}'s seat to`, disabled: !state.canChange,
                                        onchange: (ev) => ev.target.value && seatTo(p.player, ev.target.value) },
            html("option", { value: "", text: "move to…" }),
            ...s.devices.filter((d) => !d.you).map((d) => html("option", { value: d.device, text: d.label })));
          li.append(pick);
        }
        return li;
      }));
    }
    $("seats-held").replaceChildren(...(s.held || []).map((h) => html("li", {},
      html("span", { text: `${h.from} asks to ${h.what}${h.name ? ` '${h.name}'` : ""} mid-game. ` }),
      html("button", { type: "button", text: "Confirm", onclick: () => answerHeld(h.id, true) }), " ",
      html("button", { type: "button", class: "quiet", text: "Refuse", onclick: () => answerHeld(h.id, false) }))));
    if (state.game) showChoice(state.game.pending && state.game.pending.waiting === "choice" ? state.game.pending : null);
  }
  function refreshSeats() { api("seats").then(showSeats).catch(() => {}); }
  setInterval(refreshSeats, 4000);

  // Updates per second, measured on the page, not claimed by the server.
  let counted = 0;
  setInterval(() => {
    $("rate").textContent = state.connected ? `${state.updates - counted} updates/s` : "reconnecting…";
    counted = state.updates;
  }, 1000);

  // The tools (tools.js) put their bar under the board once this script has run: the actions
  // go right under the board, above it, once every script has.
  placeActions();
  document.addEventListener("DOMContentLoaded", placeActions);
  onSnapshot(JSON.parse($("initial-state").textContent));
  state.updates = 0;
  session().then(refreshGame).then(refreshSeats).catch((e) => { $("error").textContent = e.message; });
  // The live stream. A stream ends after a while and the browser opens it again by itself;
  // when the companion refuses one (it streams to many pages already: 429/503) or it fails
  // for good, the page polls api/state each second and asks for a stream again later.
  let pollTimer = null;
  function pollState() {
    fetch("api/state").then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
      .then((s) => { state.connected = true; onSnapshot(s); })
      .catch(() => { state.connected = false; });
  }
  function connectStream() {
    const stream = new EventSource("api/stream");
    stream.onopen = () => {
      state.connected = true;
      if (pollTimer !== null) { clearInterval(pollTimer); pollTimer = null; }
    };
    stream.onmessage = (e) => { state.connected = true; onSnapshot(JSON.parse(e.data)); };
    stream.onerror = () => {
      if (stream.readyState !== EventSource.CLOSED) { state.connected = false; return; }
      if (pollTimer === null) { pollState(); pollTimer = setInterval(pollState, 1000); }
      // Spread out, so refused pages do not all ask again at once.
      setTimeout(connectStream, 20000 + Math.random() * 20000);
    };
  }
  connectStream();
  wake();
})();
