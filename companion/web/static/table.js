// The table page: follows the live table's snapshots (server-sent events) and
// glides each car to its newest pose, so the page moves smoothly however
// irregularly frames arrive.
(() => {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const board = document.getElementById("board");
  const depth = parseFloat(board.dataset.depthMm);
  const carLayer = document.getElementById("cars");
  const labelLayer = document.getElementById("labels");
  const rows = document.getElementById("car-rows");
  const cars = new Map();   // id -> {group, label, row, shown, target, size}
  const state = { updates: 0, last: null, connected: false };
  window.companion = state;   // for people poking at the page, and for the tests

  const fmt = (v, d = 1) => Number(v).toFixed(d);
  const el = (tag, attrs = {}, ns = SVG) => {
    const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  };

  const carColour = (id) => `hsl(${((id * 137.508) % 360).toFixed(0)} 70% 58%)`;

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
      || labelLayer.appendChild(Object.assign(el("text", { class: "car-label", "data-label-for": c.id }),
                                              { textContent: c.name }));
    let row = rows.querySelector(`[data-row-for="${c.id}"]`);
    if (!row) {
      row = el("tr", { "data-row-for": c.id, style: `--car: ${carColour(c.id)}` }, null);
      for (let i = 0; i < 6; i++) row.append(el("td", {}, null));
      row.children[0].append(el("span", { class: "swatch" }, null), document.createTextNode(""));
      rows.append(row);
    }
    car = { group, label, row, shown: null, target: null, width: c.width_mm };
    cars.set(c.id, car);
    return car;
  }

  function onSnapshot(s) {
    state.updates += 1;
    state.last = s;
    const present = new Set();
    for (const c of s.cars) {
      present.add(c.id);
      const car = ensureCar(c);
      car.target = { x: c.x_mm, y: c.y_mm, h: c.heading_deg };
      if (!car.shown) car.shown = { ...car.target };
      car.group.classList.toggle("stale", c.stale);
      car.label.classList.toggle("stale", c.stale);
      car.row.classList.toggle("stale", c.stale);
      const cells = car.row.children;
      cells[0].lastChild.textContent = c.name;
      cells[1].textContent = fmt(c.x_mm);
      cells[2].textContent = fmt(c.y_mm);
      cells[3].textContent = `${fmt(c.heading_deg)}°`;
      cells[4].textContent = `${fmt(c.sigma_mm)} mm`;
      cells[5].textContent = c.stale ? `unseen ${fmt(c.age_s)} s` : "seen";
    }
    for (const [id, car] of cars) {
      if (!present.has(id)) { car.group.remove(); car.label.remove(); car.row.remove(); cars.delete(id); }
    }
    document.getElementById("source").textContent = `${s.source.description}: ${s.source.status}`;
    document.getElementById("camera").textContent = s.camera
      ? `camera ${s.camera.calibrated ? "calibrated" : "estimated"}, anchors ±${fmt(s.camera.reprojection_mm, 2)} mm`
      : "looking for the anchors…";
    document.getElementById("missing").textContent =
      s.missing.length ? `Not seen yet: ${s.missing.join(", ")}` : "";
    document.getElementById("error").textContent = s.error || "";
  }

  // Glide towards the newest pose; a big jump (a car lifted and put down) snaps.
  let lastTick = performance.now();
  function tick(now) {
    const k = 1 - Math.exp(-(now - lastTick) / 60);
    lastTick = now;
    for (const car of cars.values()) {
      if (!car.target) continue;
      const s = car.shown, t = car.target;
      if (Math.hypot(t.x - s.x, t.y - s.y) > 150) Object.assign(s, t);
      s.x += (t.x - s.x) * k;
      s.y += (t.y - s.y) * k;
      const dh = ((t.h - s.h + 540) % 360) - 180;   // the short way round
      s.h += dh * k;
      car.group.setAttribute("transform", `translate(${s.x} ${depth - s.y}) rotate(${-s.h})`);
      car.label.setAttribute("x", s.x);
      car.label.setAttribute("y", depth - s.y - car.width / 2 - 14);
    }
    requestAnimationFrame(tick);
  }

  // Updates per second, measured on the page, not claimed by the server.
  let counted = 0;
  setInterval(() => {
    document.getElementById("rate").textContent =
      state.connected ? `${state.updates - counted} updates/s` : "reconnecting…";
    counted = state.updates;
  }, 1000);

  onSnapshot(JSON.parse(document.getElementById("initial-state").textContent));
  state.updates = 0;
  const stream = new EventSource("api/stream");
  stream.onopen = () => { state.connected = true; };
  stream.onmessage = (e) => { state.connected = true; onSnapshot(JSON.parse(e.data)); };
  stream.onerror = () => { state.connected = false; };
  requestAnimationFrame(tick);
})();
