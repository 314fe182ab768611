// The projector's page: the frame the companion makes (shapes already in the projector's
// pixels, through its calibration) drawn full screen on black, followed live. It says nothing
// on the table but, before a calibration, a dim hint; and a small note when the window is not
// the size the projector was calibrated at (full screen it is).
(() => {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const POLL_MS = 120;
  const $ = (id) => document.getElementById(id);
  const svg = $("throw"), layer = $("shapes");
  // For tests and for people poking at the page: frames drawn, and the shapes of the last.
  const state = window.projector = { frames: 0, polls: 0, shapes: [], frame: null, error: null };
  let csrf = "", drawnKey = null, helloKey = null;

  const windowSize = () => [Math.round(window.innerWidth), Math.round(window.innerHeight)];

  async function hello() {
    const [width, height] = windowSize(), key = `${width}x${height}`;
    if (key === helloKey) return;
    helloKey = key;
    try {
      if (!csrf) csrf = (await (await fetch("api/session")).json()).csrf || "";
      await fetch("api/projector/hello", { method: "POST", body: JSON.stringify({ width, height }),
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf } });
    } catch (e) { helloKey = null; }           // said again on the next resize
  }

  function shapeNode(s) {
    const node = document.createElementNS(SVG, s.closed ? "polygon" : "polyline");
    node.setAttribute("points", s.points.map(([x, y]) => `${x},${y}`).join(" "));
    if (s.filled) {
      node.setAttribute("fill", s.colour);
      node.setAttribute("stroke", "none");
    } else {
      node.setAttribute("fill", "none");
      node.setAttribute("stroke", s.colour);
      node.setAttribute("stroke-width", String(s.width));
    }
    node.dataset.role = s.role;
    if (s.label) node.dataset.label = s.label;
    return node;
  }

  function draw(f) {
    const [w, h] = f.size_px || windowSize();
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    // Masks last, black, over everything else: no marker is ever lit.
    const shapes = [...f.shapes.filter((s) => s.role !== "mask"), ...f.shapes.filter((s) => s.role === "mask")];
    layer.replaceChildren(...shapes.map(shapeNode));
    const hint = $("hint");
    hint.hidden = f.calibrated || !!f.pattern;
    hint.textContent = "Projector not calibrated: Setup → Calibrate projector";
    const [ww, wh] = windowSize(), note = $("note");
    note.hidden = !f.size_px || (f.size_px[0] === ww && f.size_px[1] === wh);
    note.textContent = note.hidden ? "" : `This window is ${ww} × ${wh}; the projector was calibrated at ` +
      `${f.size_px[0]} × ${f.size_px[1]}: make it full screen (F11) on the projector.`;
    state.shapes = shapes;
    state.frame = f;
    state.frames += 1;
  }

  // The companion gone quiet (stopped, crashed, the network lost): a template or "put it here"
  // left lit on the table would be believed, so after LOST_MS without an answer the projector
  // throws black and says only that it waits.
  const LOST_MS = 1500;
  let lastAnswer = performance.now();
  function lost() {
    if (drawnKey === "lost") return;
    drawnKey = "lost";
    layer.replaceChildren();
    state.shapes = [];
    const hint = $("hint");
    hint.hidden = false;
    hint.textContent = "The companion does not answer: nothing is drawn until it does";
  }

  async function poll() {
    try {
      // A request the network swallows must not stall the page: it is given up after a while.
      const r = await fetch("api/projector/frame", { cache: "no-store", signal: AbortSignal.timeout(4000) });
      const text = await r.text();
      state.polls += 1;
      if (!r.ok) throw new Error(`the companion answered ${r.status}`);
      state.error = null;
      lastAnswer = performance.now();
      state.lastAnswer = lastAnswer;
      // Redrawn only when the frame changed (or the window did: the note and a hint's viewBox).
      const key = text + windowSize().join("x");
      if (key !== drawnKey) { drawnKey = key; draw(JSON.parse(text)); }
    } catch (e) {
      state.error = e.message;                 // the companion stopped or restarted: keep asking
      if (performance.now() - lastAnswer > LOST_MS) lost();
    }
    setTimeout(poll, POLL_MS);
  }

  // Watched apart from the polls, so a request that hangs still darkens the table in time.
  setInterval(() => { if (performance.now() - lastAnswer > LOST_MS) lost(); }, 250);
  window.addEventListener("resize", () => { hello(); });
  hello();
  poll();
})();
