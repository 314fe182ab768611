// The players' tools on the table: a free ruler (two taps: points or cars), the rule system's
// templates and gauges (placed, dragged and turned over the live table, drawn with the
// table's doubt), and "put it back" (where each car must stand again after an undo, a knock
// or a resume, ticked off as the camera sees it there). Server side: companion/web/tools_api.py.
(() => {
  "use strict";
  const P = window.companionPage;
  if (!P) return;
  const { api, html, el, Y, board, state, pickPoints, carColour } = P;
  const $ = (id) => document.getElementById(id);
  const MM_PER_IN = 25.4;

  // --- units: one per line, the players' choice (kept in this browser) ------------------------
  let units = localStorage.getItem("companion.units") === "mm" ? "mm" : "in";
  const len = (mm) => units === "mm" ? `${mm.toFixed(1)} mm` : `${(mm / MM_PER_IN).toFixed(2)} in`;
  // A doubt small enough to round to nothing keeps a digit more, so "± 0.00" is never shown.
  const doubt = (mm) => {
    if (units === "mm") return `± ${mm < 0.1 ? mm.toFixed(2) : mm.toFixed(1)} mm`;
    const v = mm / MM_PER_IN;
    return `± ${v < 0.01 ? v.toFixed(3) : v.toFixed(2)} in`;
  };

  // --- the page's parts ------------------------------------------------------------------------
  const layer = el("g", { id: "tools-layer", "aria-label": "The players' ruler, templates and where cars go back" });
  const backLayer = el("g", { id: "putback-layer" });
  const tplLayer = el("g", { id: "template-layer" });
  const rulerLayer = el("g", { id: "free-ruler-layer" });
  layer.append(backLayer, tplLayer, rulerLayer);
  board.append(layer);

  const tplSelect = html("select", { id: "template-choice", "aria-label": "template to place" });
  const bar = html("div", { id: "tools-bar", class: "tools-bar", role: "toolbar", "aria-label": "Tools for the table" },
    html("button", { type: "button", id: "ruler-go", text: "Ruler" }),
    html("button", { type: "button", id: "ruler-clear", text: "Clear ruler", hidden: true }),
    tplSelect,
    html("button", { type: "button", id: "template-place", text: "Place" }),
    html("button", { type: "button", id: "putback-knocked", text: "A car was knocked" }),
    html("button", { type: "button", id: "putback-record", text: "Cars as the record has them" }),
    html("label", { class: "units" }, "Units ", html("select", { id: "units", "aria-label": "units" },
      html("option", { value: "in", text: "inches" }), html("option", { value: "mm", text: "millimetres" }))));
  const rulerText = html("p", { id: "free-ruler-text", class: "free-ruler-text", "aria-live": "polite", hidden: true });
  const tplList = html("ul", { id: "template-list", class: "template-list" });
  const toolsNote = html("p", { id: "tools-note", class: "dim", hidden: true });
  const toolsError = html("p", { id: "tools-error", class: "error" });
  document.getElementById("board-box").after(bar, rulerText, tplList, toolsNote, toolsError);
  $("units").value = units;

  const backCard = html("div", { id: "putback", class: "card putback", hidden: true, "aria-live": "polite" },
    html("h2", { text: "Put the cars back" }),
    html("p", { id: "putback-why", class: "dim" }),
    html("ul", { id: "putback-list", class: "putback-list" }),
    html("p", {}, html("button", { type: "button", id: "putback-done", text: "Done" })));
  // Beside the board where the panel stands beside it; under the board's tools where the panel
  // goes below it (a phone), so the list is in view while the cars are put back.
  const narrow = window.matchMedia("(max-width: 900px), (orientation: portrait)");
  const placeBackCard = () => { if (narrow.matches) tplList.before(backCard); else $("tabs").after(backCard); };
  placeBackCard();
  narrow.addEventListener("change", placeBackCard);

  const say = (text) => { toolsError.textContent = text || ""; };

  // --- the table's cars, as the camera sees them now ------------------------------------------
  function liveCars() { return (state.last && state.last.cars) || []; }
  function carAt(pt) {
    for (const c of liveCars()) {
      const r = (c.heading_deg * Math.PI) / 180, dx = pt[0] - c.x_mm, dy = pt[1] - c.y_mm;
      const f = dx * Math.cos(r) + dy * Math.sin(r), l = -dx * Math.sin(r) + dy * Math.cos(r);
      if (Math.abs(f) <= c.length_mm / 2 && Math.abs(l) <= c.width_mm / 2) return c;
    }
    return null;
  }

  // --- the ruler --------------------------------------------------------------------------------
  let premeasure = true, ruler = null, rulerTimer = null;
  function endParam(e) { return e.car !== undefined ? `car:${e.car}` : `${e.point[0]},${e.point[1]}`; }

  async function measure() {
    if (!ruler) return;
    try {
      const r = await api(`ruler?from=${encodeURIComponent(endParam(ruler.from))}&to=${encodeURIComponent(endParam(ruler.to))}`);
      ruler.result = r;
      drawRuler();
      say("");
    } catch (e) { say(e.message); }
  }

  function drawRuler() {
    rulerLayer.replaceChildren();
    if (!ruler || !ruler.result) { rulerText.hidden = true; return; }
    const r = ruler.result, [[x0, y0], [x1, y1]] = r.line;
    const band = Math.max(2 * r.sigma_mm, 1);
    rulerLayer.append(
      el("line", { class: "free-ruler-doubt", x1: x0, y1: Y(y0), x2: x1, y2: Y(y1), "stroke-width": band * 2 }),
      el("line", { class: "free-ruler-line", x1: x0, y1: Y(y0), x2: x1, y2: Y(y1) }),
      el("circle", { class: "free-ruler-end", cx: x0, cy: Y(y0), r: 5 }),
      el("circle", { class: "free-ruler-end", cx: x1, cy: Y(y1), r: 5 }),
      el("text", { class: "free-ruler-label", x: (x0 + x1) / 2, y: Y((y0 + y1) / 2) - 10, text: `${len(r.distance_mm)} ${doubt(r.sigma_mm)}` }));
    const name = (e) => e.car !== undefined ? `the ${e.label}` : `(${e.point[0].toFixed(0)}, ${e.point[1].toFixed(0)})`;
    rulerText.textContent = `From ${name(r.from)} to ${name(r.to)}: ${len(r.distance_mm)} ${doubt(r.sigma_mm)}` +
      (r.from.car !== undefined || r.to.car !== undefined ? " (closest edge; follows the car)" : "");
    rulerText.hidden = false;
    $("ruler-clear").hidden = false;
    toProjector();
  }

  function clearRuler() {
    ruler = null;
    clearInterval(rulerTimer);
    rulerLayer.replaceChildren();
    rulerText.hidden = true;
    $("ruler-clear").hidden = true;
    toProjector();
  }

  $("ruler-go").addEventListener("click", async () => {
    say("");
    if (!premeasure) return;
    const pts = await pickPoints(2, "Ruler: tap where it starts (a car or a point), then where it ends");
    if (pts.length < 2) return;
    clearRuler();
    const end = (pt) => { const c = carAt(pt); return c ? { car: c.id } : { point: pt }; };
    ruler = { from: end(pts[0]), to: end(pts[1]), result: null };
    await measure();
    // A car's end follows the car as the camera sees it move.
    if (ruler && (ruler.from.car !== undefined || ruler.to.car !== undefined)) rulerTimer = setInterval(measure, 1000);
  });
  $("ruler-clear").addEventListener("click", clearRuler);
  $("units").addEventListener("change", () => {
    units = $("units").value;
    localStorage.setItem("companion.units", units);
    drawRuler();
    drawTemplates();
  });

  // --- templates -------------------------------------------------------------------------------
  let templates = [], tableSigma = 0, placed = [], nextId = 1, templatesFor = null;

  async function loadTemplates(rules) {
    try {
      const t = await api(rules ? `templates?rules=${encodeURIComponent(rules)}` : "templates");
      templates = t.templates;
      tableSigma = t.table_sigma_mm || 0;
      tplSelect.replaceChildren(...templates.map((x, k) => html("option", { value: String(k), text: `${x.name} (${x.size_text})` })));
      premeasure = t.premeasure;
      $("ruler-go").disabled = !premeasure;
      toolsNote.hidden = premeasure;
      toolsNote.textContent = premeasure ? "" : `${t.title} forbids measuring before an action is declared: the ruler is off, ` +
        "and its templates are for what has been declared.";
      if (!premeasure) clearRuler();
    } catch (e) { say(e.message); }
  }

  function shapeOf(t) {
    const s = t.size_mm;
    if (t.shape === "circle") return [el("circle", { cx: 0, cy: 0, r: s.radius_mm })];
    const L = s.length_mm, W = t.shape === "rect" ? s.width_mm : 6;
    // Rectangles sit centred on their point; a gauge starts at its point and runs along its heading.
    const x0 = t.shape === "rect" ? -L / 2 : 0;
    const parts = [el("rect", { x: x0, y: -W / 2, width: L, height: W })];
    for (const m of t.marks_mm) parts.push(el("line", { class: "template-mark", x1: x0 + m, y1: -W / 2 - (t.shape === "gauge" ? 4 : 0), x2: x0 + m, y2: W / 2 + (t.shape === "gauge" ? 4 : 0) }));
    return parts;
  }

  function drawTemplates() {
    tplLayer.replaceChildren();
    for (const p of placed) {
      const t = p.template;
      const g = el("g", { class: `placed-template ${t.shape}`, "data-template": t.name, "data-placed": p.id,
                          transform: `translate(${p.x} ${Y(p.y)}) rotate(${-p.heading})` });
      // The doubt: a band as wide as the table's own (2 sigma each side) round the outline.
      const band = el("g", { class: "template-doubt", "stroke-width": Math.max(4 * tableSigma, 0.5) }, ...shapeOf(t));
      const body = el("g", { class: "template-body" }, ...shapeOf(t));
      g.append(band, body, el("text", { class: "template-label", x: 0, y: -6, text: `${t.name} ${len(t.shape === "circle" ? t.size_mm.radius_mm : t.size_mm.length_mm)}` }));
      g.addEventListener("pointerdown", (ev) => startDrag(ev, p));
      tplLayer.append(g);
    }
    tplList.replaceChildren(...placed.map((p) => html("li", { "data-placed": p.id },
      html("span", { class: "template-name", text: `${p.template.name} (${p.template.size_text}) at (${p.x.toFixed(0)}, ${p.y.toFixed(0)}) mm, turned ${p.heading.toFixed(0)}° ` }),
      html("button", { type: "button", class: "quiet", "data-turn": "left", "aria-label": `turn ${p.template.name} 15° anticlockwise`, text: "⟲ 15°", onclick: () => turn(p, 15) }),
      html("button", { type: "button", class: "quiet", "data-turn": "right", "aria-label": `turn ${p.template.name} 15° clockwise`, text: "⟳ 15°", onclick: () => turn(p, -15) }),
      html("button", { type: "button", class: "quiet", "data-remove": "", text: "Remove", onclick: () => { placed = placed.filter((x) => x !== p); drawTemplates(); } }),
      html("p", { class: "dim template-rule", text: `${p.template.use}: ${p.template.rule}, "${p.template.quote}"` }))));
    toProjector();
  }

  function turn(p, deg) {
    p.heading = ((p.heading + deg + 540) % 360) - 180;
    drawTemplates();
  }

  function toTable(ev) {
    const pt = board.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    const at = pt.matrixTransform(board.getScreenCTM().inverse());
    return [at.x, Y(at.y)];
  }

  let drag = null;
  function startDrag(ev, p) {
    if (board.classList.contains("picking") || ev.button > 0) return;
    ev.stopPropagation();
    ev.preventDefault();
    const at = toTable(ev);
    drag = { p, pointer: ev.pointerId, dx: p.x - at[0], dy: p.y - at[1] };
    board.setPointerCapture(ev.pointerId);
  }
  board.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.pointer) return;
    const at = toTable(ev);
    drag.p.x = at[0] + drag.dx;
    drag.p.y = at[1] + drag.dy;
    const g = tplLayer.querySelector(`[data-placed="${drag.p.id}"]`);
    if (g) g.setAttribute("transform", `translate(${drag.p.x} ${Y(drag.p.y)}) rotate(${-drag.p.heading})`);
    toProjector();
  });
  const endDrag = (ev) => { if (drag && ev.pointerId === drag.pointer) { drag = null; drawTemplates(); } };
  board.addEventListener("pointerup", endDrag);
  board.addEventListener("pointercancel", endDrag);

  $("template-place").addEventListener("click", async () => {
    say("");
    const t = templates[Number(tplSelect.value)];
    if (!t) return;
    const [pt] = await pickPoints(1, `Tap where the ${t.name} goes (${t.shape === "gauge" ? "its start" : "its centre"})`);
    if (!pt) return;
    // Gauges point away from the near edge at first; turn them with the buttons.
    placed.push({ id: nextId++, template: t, x: pt[0], y: pt[1], heading: t.shape === "gauge" ? 90 : 0 });
    drawTemplates();
  });

  // --- the projector: this page's templates and ruler, drawn on the table too ------------------
  // Sent as outlines in table mm (companion/web/projector_api.py), each page under its own id so
  // two pages never erase each other's; an empty list clears them. One request at a time, so a
  // drag's positions cannot arrive out of order.
  const pageId = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
  const MAX_PROJECTED = 64;                          // the companion takes at most this many a page
  let projTimer = null, projSent = "[]", projBusy = false, projError = null;
  // A page that dies says nothing as it goes (a crash, a phone gone flat), so a page with tools
  // out says them again every resendMs, and the companion forgets a page it has not heard from
  // for a few of those. The companion's answer says how often (resend_s): this is only the
  // first wait, until it has.
  let resendMs = 5000, resendTimer = null, projSends = 0;
  const r1 = (v) => Math.round(v * 10) / 10;

  function outlines(p) {
    const t = p.template, h = (p.heading * Math.PI) / 180, c = Math.cos(h), s = Math.sin(h);
    const at = (u, v) => [r1(p.x + u * c - v * s), r1(p.y + u * s + v * c)];   // the template's frame to the table's
    const name = `${t.name} (${t.size_text})`;
    if (t.shape === "circle") {
      const r = t.size_mm.radius_mm;
      return [{ kind: "template", name, closed: true,
                points: Array.from({ length: 48 }, (_, k) => at(r * Math.cos((k * Math.PI) / 24), r * Math.sin((k * Math.PI) / 24))) }];
    }
    // As shapeOf draws it: a rectangle centred on its point, a gauge from its point along its heading.
    const L = t.size_mm.length_mm, W = t.shape === "rect" ? t.size_mm.width_mm : 6;
    const x0 = t.shape === "rect" ? -L / 2 : 0, tick = t.shape === "gauge" ? 4 : 0;
    return [{ kind: "template", name, closed: true, points: [at(x0, -W / 2), at(x0 + L, -W / 2), at(x0 + L, W / 2), at(x0, W / 2)] },
            ...t.marks_mm.map((m) => ({ kind: "template", name: `${name}: mark`, closed: false,
                                        points: [at(x0 + m, -W / 2 - tick), at(x0 + m, W / 2 + tick)] }))];
  }

  function projected() {
    const out = [];
    if (ruler && ruler.result) {
      const r = ruler.result;
      out.push({ kind: "ruler", name: `ruler: ${len(r.distance_mm)}`, closed: false, points: r.line.map(([x, y]) => [r1(x), r1(y)]) });
    }
    for (const p of placed) out.push(...outlines(p));
    return out.slice(0, MAX_PROJECTED);
  }

  function toProjector() {
    clearTimeout(projTimer);
    projTimer = setTimeout(sendToProjector, 150);
  }

  async function sendToProjector(again) {
    if (projBusy) { toProjector(); return; }
    // A read-only visitor's POSTs are refused (the table's PIN): its tools stay on its own screen.
    if (!state.canChange) return;
    const shapes = projected(), text = JSON.stringify(shapes);
    if (text === projSent && again !== true) return;
    projBusy = true;
    try {
      const answer = await api("projector/tools", { page: pageId, shapes });
      if (answer && answer.resend_s > 0) resendMs = answer.resend_s * 1000;
      projSent = text;
      projError = null;
      projSends += 1;
    } catch (e) {
      projError = e.message;                          // the projector is extra: the tools go on as they are
    } finally { projBusy = false; keepSaying(); }
  }
  // Said again while there are tools on the table (or a send failed: tried again), from the
  // last send: a drag's own sends count as being heard from.
  function keepSaying() {
    clearTimeout(resendTimer);
    resendTimer = projSent !== "[]" || projError !== null ? setTimeout(() => sendToProjector(true), resendMs) : null;
  }
  // A page hidden a while may have its timers slowed by the browser (and its tools forgotten):
  // back in view, it says them again at once.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && projSent !== "[]") sendToProjector(true);
  });
  // A page reloaded or closed takes its tools off the table at once (the api helper cannot
  // outlive the page: a keepalive request can).
  window.addEventListener("pagehide", () => {
    if (projSent === "[]" || !state.canChange) return;
    fetch("api/projector/tools", { method: "POST", keepalive: true, body: JSON.stringify({ page: pageId, shapes: [] }),
                                   headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf || "" } }).catch(() => {});
  });

  // --- put it back -----------------------------------------------------------------------------
  let backTimer = null;
  function showBack(s) {
    backLayer.replaceChildren();
    if (!s.active) { backCard.hidden = true; clearInterval(backTimer); backTimer = null; return; }
    backCard.hidden = false;
    $("putback-why").textContent = `Where the game has them: ${s.why}. A car is ticked off when the camera sees it within ` +
      `${s.tolerance_mm} mm and ${s.tolerance_deg}° of its place (beyond its own doubt).` + (s.done ? " All in place." : "");
    const sizes = new Map(liveCars().map((c) => [c.id, c]));
    for (const r of s.cars) {
      const c = sizes.get(r.marker), L = c ? c.length_mm : 75, W = c ? c.width_mm : 32;
      const [x, y, h] = r.target;
      backLayer.append(el("g", { class: `putback-target ${r.in_place ? "in-place" : ""}`, "data-target-for": r.marker,
                                 style: `--car: ${carColour(r.marker)}`, transform: `translate(${x} ${Y(y)}) rotate(${-h})` },
        el("rect", { x: -L / 2, y: -W / 2, width: L, height: W, rx: 4 }),
        el("path", { d: `M ${L / 2 - 14} ${-W / 2 + 5} L ${L / 2 - 3} 0 L ${L / 2 - 14} ${W / 2 - 5}` })));
    }
    $("putback-list").replaceChildren(...s.cars.map((r) => html("li", { "data-putback": r.marker, class: r.in_place ? "in-place" : "to-move" },
      html("span", { class: "tick", "aria-hidden": "true", text: r.in_place ? "✓" : "…" }),
      html("strong", { text: ` ${r.name}: ` }), html("span", { class: "putback-text", text: r.text }))));
  }

  // Each start or clear begins a new generation: a poll sent before it (still in flight on a busy
  // machine) must not bring back a card the player just closed, or an older list.
  let backGen = 0;
  async function pollBack() {
    const gen = backGen;
    try { const s = await api("putback"); if (gen === backGen) showBack(s); } catch (e) { say(e.message); }
  }

  async function startBack(from) {
    say("");
    try {
      const s = await api("putback", { from });
      backGen += 1;
      showBack(s);
      clearInterval(backTimer);
      backTimer = setInterval(pollBack, 500);
    } catch (e) { say(e.message); }
  }
  $("putback-knocked").addEventListener("click", () => startBack("activation"));
  $("putback-record").addEventListener("click", () => startBack("record"));
  $("putback-done").addEventListener("click", async () => {
    backGen += 1;
    clearInterval(backTimer); backTimer = null;
    try { const s = await api("putback/clear", {}); backGen += 1; showBack(s); } catch (e) { say(e.message); }
  });

  // --- following the game: its system's templates ---------------------------------------------
  P.onGame((g) => {
    const rules = g.game ? g.game.rules.name : null;
    if (rules !== templatesFor || templates.length === 0) {
      templatesFor = rules;
      placed = [];
      drawTemplates();
      loadTemplates(null);
    }
    // An undo's cars are asked back by the game itself (a placement for each, in the waiting
    // box and on the board): this card is for a knocked car and the record, not a second list.
    $("putback-knocked").disabled = $("putback-record").disabled = !g.game || !state.canChange;
  });
  pollBack();

  window.companionTools = { get placed() { return placed.map((p) => ({ name: p.template.name, x: p.x, y: p.y, heading: p.heading })); },
                            get ruler() { return ruler && ruler.result; },
                            get projector() { return { page: pageId, sent: JSON.parse(projSent), error: projError,
                                                   sends: projSends, resendMs, resending: resendTimer !== null }; } };
})();
