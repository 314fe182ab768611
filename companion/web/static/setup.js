// Setup: the rule system, its options in words with the rule each reads, and the rosters as a
// form (the table's cars to pick from; the JSON stays, for import and export). Anything that
// ends a game in progress (a new game, another table file) asks first.

// An option's box, as text and back: pure, so node can check every system's every default
// round-trips (tests/test_wr_setup_options.py). An option without choices holds what its
// default holds: a list (of numbers, or of names: Wasteland Rally's finishing points and
// exploding terrain), a number (or none, where a number may be given), or text.
(function (root) {
  "use strict";
  const isNumber = (x) => typeof x === "number" && Number.isFinite(x);
  function optionKind(o) {
    const d = o.default;
    if (Array.isArray(d)) return d.length && d.every(isNumber) ? "numbers" : "names";
    if (typeof d === "string") return "text";
    return "number";
  }
  function optionText(o, value) {
    if (value === null || value === undefined) return "";
    return Array.isArray(value) ? value.join(", ") : String(value);
  }
  // {value} to send, {} to leave the option at its default (an empty number box), or {error}
  // in players' words.
  function readOption(o, text) {
    const kind = optionKind(o);
    const t = String(text).trim();
    if (kind === "text") return { value: String(text) };
    if (kind === "number") {
      if (t === "") return {};
      const n = Number(t);
      return isNumber(n) ? { value: n } : { error: `${t} is not a number` };
    }
    const parts = t.split(",").map((x) => x.trim()).filter((x) => x !== "");
    if (kind === "names") return { value: parts };
    const bad = parts.find((x) => !isNumber(Number(x)));
    return bad !== undefined ? { error: `${bad} is not a number (give numbers separated by commas)` }
      : { value: parts.map(Number) };
  }
  const form = { optionKind, optionText, readOption };
  if (typeof module === "object" && module.exports) module.exports = form;
  else root.companionOptionForm = form;
})(this);

(() => {
  "use strict";
  const P = typeof window === "object" ? window.companionPage : null;      // none under node's tests
  if (!P) return;
  const { optionKind, optionText, readOption } = window.companionOptionForm;
  const { api, act, html, fmt, state, showTab } = P;
  const $ = (id) => document.getElementById(id);

  // Keys whose value is a car's roof marker: picked from the table's cars, not typed.
  const MARKER_KEYS = new Set(["marker", "aboard", "vehicle"]);
  const words = (key) => key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
  const copy = (v) => JSON.parse(JSON.stringify(v));

  // --- the page's parts, made once -------------------------------------------------------------
  const tab = $("tab-setup");
  const textarea = $("setup-rosters");
  const formBox = html("div", { id: "roster-form", class: "roster-form" });
  const jsonBox = html("details", { id: "roster-json", class: "roster-json" },
    html("summary", { text: "Rosters as JSON (import, export)" }),
    html("p", { class: "dim", text: "The form above, as JSON: copy it out to keep a roster, or paste one in and press Import." }));
  const importButton = html("button", { type: "button", id: "roster-import", text: "Import into the form" });
  textarea.replaceWith(formBox);
  jsonBox.append(textarea, html("p", {}, importButton));
  formBox.after(jsonBox);
  // The hint about JSON above the old text box now describes the form.
  const hint = formBox.previousElementSibling;
  if (hint && hint.classList.contains("dim")) hint.textContent = "One roster per player: choose each car from the table's cars, and what the rules ask of it.";

  const confirmBox = html("div", { id: "confirm-end", class: "card confirm", role: "alertdialog", "aria-modal": "false",
                                   "aria-labelledby": "confirm-end-text", hidden: true },
    html("p", { id: "confirm-end-text" }),
    html("p", {}, html("button", { type: "button", id: "confirm-end-yes", class: "danger" }), " ",
         html("button", { type: "button", id: "confirm-end-no", text: "Keep playing" })));
  tab.prepend(confirmBox);

  // Ask before anything that ends or changes the game in progress; resolves true to go on.
  function confirmEnd(what, yes, consequence, near) {
    const g = state.game;
    if (!g || !g.game) return Promise.resolve(true);
    const done = (g.log || []).filter((e) => !e.undone).length;
    const game = `the ${g.game.rules.title} game in progress` + (done ? ` (${done} event${done === 1 ? "" : "s"} played)` : "");
    $("confirm-end-text").textContent = consequence ? `${what} ${consequence(game)}`
      : `${what} ends ${game}. Its record stays, but it cannot be played on from this page.`;
    $("confirm-end-yes").textContent = yes;
    // Beside what asked it, in view: on a phone the top of a long Setup is far away.
    if (near) near.after(confirmBox);
    confirmBox.hidden = false;
    confirmBox.scrollIntoView({ block: "nearest" });
    $("confirm-end-no").focus({ preventScroll: true });
    return new Promise((resolve) => {
      const answer = (v) => () => { confirmBox.hidden = true; $("confirm-end-yes").onclick = $("confirm-end-no").onclick = null; resolve(v); };
      $("confirm-end-yes").onclick = answer(true);
      $("confirm-end-no").onclick = answer(false);
    });
  }

  // --- the rosters, as a form over a model ---------------------------------------------------------
  let model = [];            // the rosters being built (what POST api/game takes)
  const samples = {};        // key -> an item like those a list under that key holds (to add one)

  function tableCars() {
    const s = state.last;
    return (s && s.table && s.table.cars) || [];
  }

  function syncJson() { textarea.value = JSON.stringify(model, null, 1); }

  function setModel(rosters) {
    model = Array.isArray(rosters) ? copy(rosters) : [];
    learnSamples(model, null);
    renderForm();
  }

  function learnSamples(v, key) {
    if (Array.isArray(v)) {
      for (const item of v) if (item && typeof item === "object" && !Array.isArray(item)) { if (key && !samples[key]) samples[key] = copy(item); learnSamples(item, null); }
    } else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) learnSamples(x, k);
    }
  }

  // A fresh item for the list under `key`: like the others, on a car not used yet.
  function freshItem(key, list) {
    const item = copy(samples[key] || list[list.length - 1] || {});
    const used = new Set();
    const walk = (v) => { if (Array.isArray(v)) v.forEach(walk); else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) { if (MARKER_KEYS.has(k) && Number.isInteger(x)) used.add(x); walk(x); } };
    walk(model);
    const free = tableCars().find((c) => !used.has(c.id));
    if ("marker" in item && free) { item.marker = free.id; if ("name" in item) item.name = free.name; }
    for (const [k, x] of Object.entries(item)) if (Array.isArray(x) && x.length && typeof x[0] === "object") item[k] = [];
    return item;
  }

  function field(obj, key, label) {
    const v = obj[key];
    const id = `rf-${Math.random().toString(36).slice(2, 9)}`;
    let input;
    if (MARKER_KEYS.has(key) && (Number.isInteger(v) || v === null)) {
      const cars = tableCars();
      input = html("select", { id, "data-roster-key": key },
        ...cars.map((c) => html("option", { value: String(c.id), text: `${c.name} (marker ${c.id})` })));
      if (v !== null && !cars.some((c) => c.id === v)) input.append(html("option", { value: String(v), text: `marker ${v} (not on this table)` }));
      input.value = String(v);
      input.addEventListener("change", () => {
        obj[key] = Number(input.value);
        // A car's name follows the car chosen, unless a player has written their own.
        const car = tableCars().find((c) => c.id === obj[key]);
        if (key === "marker" && car && "name" in obj && (obj.name === "" || tableCars().some((c) => c.name === obj.name))) {
          obj.name = car.name;
          renderForm();
        }
        syncJson();
      });
    } else if (typeof v === "boolean") {
      input = html("input", { id, type: "checkbox", "data-roster-key": key });
      input.checked = v;
      input.addEventListener("change", () => { obj[key] = input.checked; syncJson(); });
    } else if (typeof v === "number") {
      input = html("input", { id, type: "number", step: "any", value: String(v), "data-roster-key": key, class: "num-input" });
      input.addEventListener("input", () => { const n = Number(input.value); if (input.value.trim() !== "" && !Number.isNaN(n)) { obj[key] = n; syncJson(); } });
    } else if (Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null)) {
      const numbers = v.length > 0 && v.every((x) => typeof x === "number");
      input = html("input", { id, value: v.join(", "), "data-roster-key": key, placeholder: "none (separate several with commas)" });
      input.addEventListener("input", () => {
        const parts = input.value.split(",").map((x) => x.trim()).filter((x) => x !== "");
        obj[key] = numbers ? parts.map(Number) : parts;
        syncJson();
      });
    } else {
      input = html("input", { id, value: v === null ? "" : String(v), "data-roster-key": key, placeholder: v === null ? "none" : "" });
      input.addEventListener("input", () => { obj[key] = input.value === "" && v === null ? null : input.value; syncJson(); });
    }
    return html("div", { class: "roster-field" }, html("label", { for: id, text: label || words(key) }), input);
  }

  // Who and what first (a player's name, a car's marker and name), then the rest, lists last.
  const FIRST = ["player", "marker", "name"];
  function order(obj) {
    const rank = (k) => {
      const v = obj[k], f = FIRST.indexOf(k);
      if (f >= 0) return f;
      if (Array.isArray(v) && v.some((x) => x && typeof x === "object")) return 20;
      return v && typeof v === "object" && !Array.isArray(v) ? 10 : 5;
    };
    return Object.keys(obj).sort((a, b) => rank(a) - rank(b));
  }

  function renderObject(obj, box) {
    for (const key of order(obj)) {
      const v = obj[key];
      if (Array.isArray(v) && (v.length ? v.every((x) => x && typeof x === "object" && !Array.isArray(x)) : samples[key])) {
        box.append(renderList(obj, key));
      } else if (v && typeof v === "object" && !Array.isArray(v)) {
        const sub = html("fieldset", { class: "roster-sub" }, html("legend", { text: words(key) }));
        renderObject(v, sub);
        box.append(sub);
      } else {
        box.append(field(obj, key));
      }
    }
  }

  function renderList(obj, key) {
    const list = obj[key];
    const box = html("fieldset", { class: "roster-list", "data-roster-list": key }, html("legend", { text: words(key) }));
    list.forEach((item, k) => {
      const one = html("div", { class: "roster-item" });
      renderObject(item, one);
      one.append(html("button", { type: "button", class: "quiet", text: `Remove this one`,
                                  onclick: () => { list.splice(k, 1); renderForm(); syncJson(); } }));
      box.append(one);
    });
    box.append(html("button", { type: "button", "data-add": key, text: `Add to ${words(key).toLowerCase()}`,
                                onclick: () => { list.push(freshItem(key, list)); renderForm(); syncJson(); } }));
    return box;
  }

  function renderForm() {
    formBox.replaceChildren(...model.map((roster, k) => {
      const box = html("fieldset", { class: "roster", "data-roster": k },
        html("legend", { text: roster.player ? `${roster.player}'s roster` : `Roster ${k + 1}` }));
      renderObject(roster, box);
      box.append(html("button", { type: "button", class: "quiet", text: "Remove this player",
                                  onclick: () => { model.splice(k, 1); renderForm(); syncJson(); } }));
      return box;
    }), html("p", {}, html("button", { type: "button", id: "roster-add-player", text: "Add a player", onclick: () => {
      const last = model[model.length - 1];
      const fresh = last ? copy(last) : { player: "" };
      if ("player" in fresh) fresh.player = `Player ${model.length + 1}`;
      for (const [k, x] of Object.entries(fresh)) if (Array.isArray(x) && x.length && typeof x[0] === "object") fresh[k] = [];
      model.push(fresh);
      renderForm();
      syncJson();
    } })));
    syncJson();
  }

  importButton.addEventListener("click", () => {
    $("setup-error").textContent = "";
    let rosters;
    try { rosters = JSON.parse(textarea.value); } catch (e) {
      $("setup-error").textContent = `the rosters are not valid JSON: ${e.message}`; return;
    }
    if (!Array.isArray(rosters)) { $("setup-error").textContent = "the rosters are a list, one per player ([{...}, {...}])"; return; }
    setModel(rosters);
  });

  function loadStarter(rules) {
    return api(`rosters/starter?rules=${encodeURIComponent(rules)}`).then(setModel)
      .catch((e) => { $("setup-error").textContent = e.message; });
  }

  // --- rule system and options -------------------------------------------------------------------
  function optionValueWords(v) {
    if (v === null) return "none";
    if (Array.isArray(v)) return v.length ? v.map(optionValueWords).join(", ") : "none";
    if (v === true) return "yes";
    if (v === false) return "no";
    return String(v).replace(/_/g, " ");
  }

  function showOptions(system) {
    const box = $("setup-options");
    box.replaceChildren(...system.options.map((o) => {
      let input;
      const value = o.value !== undefined ? o.value : o.default;
      const id = `opt-${o.name}`;
      if (o.choices) {
        input = html("select", { id, "data-option": o.name },
          ...o.choices.map((c) => html("option", { value: JSON.stringify(c),
                                                   text: optionValueWords(c) + (JSON.stringify(c) === JSON.stringify(o.default) ? " (the default)" : "") })));
        input.value = JSON.stringify(value);
      } else if (optionKind(o) === "number") {
        input = html("input", { id, "data-option": o.name, value: optionText(o, value), inputmode: "decimal",
                                placeholder: "none", class: "num-input" });
      } else {
        // A list (numbers or names, separated by commas) or text: a plain text box.
        input = html("input", { id, "data-option": o.name, value: optionText(o, value),
                                placeholder: optionKind(o) === "text" ? "" : "none (separate several with commas)" });
      }
      const changed = o.value !== undefined && JSON.stringify(o.value) !== JSON.stringify(o.default);
      return html("div", { class: "option", "data-option-box": o.name },
        html("p", { class: "option-doc", text: o.doc }),
        html("p", {}, html("label", { for: id, text: `${words(o.name)}: ` }), input,
             changed ? html("span", { class: "dim", text: ` (default ${optionValueWords(o.default)})` }) : null),
        html("p", { class: "dim option-rule", text: `The rule it reads: ${o.rule}` }));
    }));
  }

  let filled = false;
  function showSetup(g) {
    const sel = $("setup-rules");
    if (!sel.options.length) {
      for (const r of g.rule_systems) sel.append(html("option", { value: r.name, text: r.title }));
      sel.addEventListener("change", () => {
        showOptions(state.game.rule_systems.find((r) => r.name === sel.value));
        loadStarter(sel.value);
      });
    }
    if (!filled) {
      filled = true;
      // No game: the demo's rules if it was started with some (its game may have failed to start).
      const demo = g.rule_systems.find((r) => r.name === g.demo_rules);
      const current = g.game ? g.game.rules.name : (demo || g.rule_systems[0]).name;
      sel.value = current;
      showOptions(g.game ? g.game.rules : g.rule_systems.find((r) => r.name === current));
      if (g.game && g.game.setup) setModel(g.game.setup.rosters);
      else loadStarter(current);
    }
    $("setup-start").disabled = !state.canChange;
    $("setup-start").textContent = g.game ? "Start a new game (this one ends)" : "Start the game";
  }

  $("setup-start").addEventListener("click", async () => {
    $("setup-error").textContent = "";
    const options = {};
    for (const input of $("setup-options").querySelectorAll("[data-option]")) {
      const name = input.dataset.option;
      if (input.tagName === "SELECT") { options[name] = JSON.parse(input.value); continue; }
      const system = state.game.rule_systems.find((r) => r.name === $("setup-rules").value);
      const o = system && system.options.find((x) => x.name === name);
      const read = readOption(o || { default: null }, input.value);
      if (read.error) { $("setup-error").textContent = `${words(name)}: ${read.error}`; return; }
      if ("value" in read) options[name] = read.value;
    }
    if (!model.length) { $("setup-error").textContent = "add a player's roster first"; return; }
    if (!(await confirmEnd("Starting a new game", "End it and start the new game", null, $("setup-start").parentElement))) return;
    const g = await act("game", { rules: $("setup-rules").value, options, rosters: copy(model) }, $("setup-error"));
    if (g) showTab("car");
  });

  $("setup-table-file").addEventListener("change", async (ev) => {
    const input = ev.target;
    const file = input.files[0];
    if (!file) return;
    const out = $("setup-table-result");
    if (!(await confirmEnd(`Loading ${file.name}`, "Load it", (game) => `changes the table the camera reads during ${game}: ` +
        "taken (and recorded) only if it keeps the game's table (its size, terrain, gates and cars), refused otherwise.", input))) {
      input.value = "";
      out.className = "dim";
      out.textContent = "Not loaded: the game goes on.";
      return;
    }
    try {
      const r = await api("table", { text: await file.text() });
      out.className = "dim";
      out.textContent = `Loaded: ${fmt(r.table.width_mm, 0)} × ${fmt(r.table.depth_mm, 0)} mm, anchors ${r.table.anchors.join(", ")}, cars ${r.table.cars.join(", ")}. Reloading the page…`;
      setTimeout(() => location.reload(), 1200);
    } catch (e) { out.className = "error"; out.textContent = e.message; }
  });

  // --- the projector: what it shows, its calibration and check (their words from the companion) ---
  let projectorTimer = null;
  let refusedAt = -Infinity;          // a press refused: its reason stays a while over the status's older one
  function projectorWords(st) {
    if (st.busy) return `Working: ${st.step || "the camera watches the projector's pattern"}…`;
    if (!st.calibrated) return "Not calibrated yet: press “Calibrate projector” with the projector page open full screen.";
    const parts = [`Calibrated${st.rms_mm != null ? `, within ${fmt(st.rms_mm, 1)} mm` : ""}`];
    if (st.coverage) parts.push(st.coverage);
    if (st.check) parts.push(st.check);
    return parts.map((t) => t.charAt(0).toUpperCase() + t.slice(1).replace(/\.$/, "")).join(". ") + ".";
  }
  // The file the companion actually reads and saves (serve --projector FILE's, else the one
  // beside the table file), as its status names it: never a name guessed here.
  function projectorFileWords(st) {
    // No full stop after a file's name: it would read as part of the name.
    const file = st.file ? `Calibration file: ${st.file}`
      : "Calibration file: none (the table has no file to keep it beside): a calibration lasts until the companion stops";
    // Where the last calibration went says something only beside a file (saved, or why not).
    return st.file && st.saved ? `${file} · Last calibration ${st.saved}` : file;
  }
  async function refreshProjector() {
    clearTimeout(projectorTimer);
    projectorTimer = null;
    try {
      const st = await api("projector/status");
      $("projector-status").textContent = projectorWords(st);
      $("projector-file").textContent = projectorFileWords(st);
      if (performance.now() - refusedAt > 10000) $("projector-error").textContent = st.error || "";
      $("projector-calibrate").disabled = $("projector-check").disabled = !!st.busy;
      if (st.busy) projectorTimer = setTimeout(refreshProjector, 1000);      // followed while it works
    } catch (e) {
      $("projector-status").textContent = $("projector-file").textContent = "";
      $("projector-error").textContent = `The projector's state is not known: ${e.message}`;
    }
  }
  async function refreshProjectorMode() {
    try { $("projector-mode").value = (await api("projector/frame")).mode; } catch (e) { /* said by the status */ }
  }
  $("projector-mode").addEventListener("change", async (ev) => {
    const select = ev.target;
    try {
      await api("projector/mode", { mode: select.value });
      $("projector-error").textContent = "";
    } catch (e) {
      $("projector-error").textContent = `The projector's choice was not changed: ${e.message}`;
      refreshProjectorMode();
    }
  });
  for (const [id, path, what] of [["projector-calibrate", "projector/calibrate", "Calibrating the projector"],
                                  ["projector-check", "projector/check", "Checking the projector"]]) {
    $(id).addEventListener("click", async () => {
      $("projector-error").textContent = "";
      try { await api(path, {}); } catch (e) {
        // The refusal is the answer to this press: the status's older error must not replace it.
        $("projector-error").textContent = `${what} did not start: ${e.message}`;
        refusedAt = performance.now();
        refreshProjector();
        return;
      }
      refreshProjector();
    });
  }
  // Followed while Setup shows (another page may change the mode; a knock has it checked again).
  setInterval(() => {
    if ($("projector-box").offsetParent !== null && !projectorTimer) {
      refreshProjector();
      if (document.activeElement !== $("projector-mode")) refreshProjectorMode();
    }
  }, 5000);
  const setupTabButton = document.querySelector('#tabs button[data-tab="setup"]');
  if (setupTabButton) setupTabButton.addEventListener("click", () => { refreshProjector(); refreshProjectorMode(); });
  refreshProjectorMode();

  // For the tests and for people poking at the page.
  window.companionSetup = { get rosters() { return copy(model); }, confirmEnd };
  P.onGame(showSetup);
})();
