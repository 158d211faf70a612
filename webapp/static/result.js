// Result page and hand-built kingdoms: the grid editor, the photo overlay, the breakdown.
// Plain JS, no framework. Every change is sent to the server, which scores (and, for a stored
// reading, keeps) the corrected kingdom; the page then shows the new breakdown.
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("reading-data").textContent);
  var rulesMeta = JSON.parse(document.getElementById("rules-data").textContent);
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var SVGNS = "http://www.w3.org/2000/svg";
  // what a person reads is in the page's language: the catalog (static/i18n.js) and the names
  // of terrains, bonuses and rule sets the server put in the page
  var _ = window.KDI18N._;
  var names = JSON.parse(document.getElementById("names-data").textContent);
  // the engine's sentences (warnings, reasons) in the page's language: English -> translation,
  // from the server (the page's score in the page, a new score's from POST /i18n/texts)
  var texts = JSON.parse(document.getElementById("texts-data").textContent) || {};
  function say(text) {
    return Object.prototype.hasOwnProperty.call(texts, text) ? texts[text] : text;
  }
  function scoreTexts(s) {
    var out = (s.warnings || []).slice();
    (s.bonuses || []).forEach(function (b) { out.push(b.reason); });
    Object.keys(s).forEach(function (key) {
      var v = s[key];
      if (!v || typeof v !== "object" || Array.isArray(v)) { return; }
      out.push(v.reason);
      (Array.isArray(v.list) ? v.list : []).forEach(function (x) { out.push(x && x.reason); });
    });
    return out.filter(function (t) {
      return typeof t === "string" && t && !Object.prototype.hasOwnProperty.call(texts, t);
    });
  }
  function translateTexts(s) {  // then draw the breakdown again in the page's words
    var wanted = scoreTexts(s);
    if (!wanted.length || !window.KDI18N.locale || window.KDI18N.locale === "en") { return; }
    post("/i18n/texts", JSON.stringify({ texts: wanted.slice(0, 500), rules: state.rules }), false).then(function (res) {
      if (!res.ok || !res.body || !res.body.texts) { return; }
      Object.keys(res.body.texts).forEach(function (k) { texts[k] = res.body.texts[k]; });
      if (state.score === s) { renderBreakdown(); }
    }).catch(function () { return null; });  // the English sentences stay: nothing is lost
  }
  // a terrain's name in the words of the rule set's own rulebook where it has some (Domain's field)
  function tn(t) {
    var own = (names.terrains_of || {})[state.rules] || {};
    return own[t] || names.terrains[t] || t;
  }
  function rulebook() { return (names.rulebooks || {})[state.rules] || ""; }
  function bonusName(b) { return names.bonuses[b] || b; }

  // The game's words come with the rule sets (rules_meta): each terrain's key, the names a
  // piece is chosen from, The Court's tokens. A square may keep what another rule set put
  // there, so the letters and tokens of every rule set are known.
  function ofEveryRuleSet(field) {
    var out = {};
    rulesMeta.forEach(function (m) {
      var own = m[field] || {};
      Object.keys(own).forEach(function (k) { out[k] = own[k]; });
    });
    return out;
  }
  var LETTER_OF = ofEveryRuleSet("letters");  // terrain -> its key, e.g. field -> "F"
  // The Court: the token a square holds follows its terrain
  var TOKEN_OF = ofEveryRuleSet("tokens");
  function valuesOf(m, piece) { return (m.piece_values || {})[piece] || []; }

  var state = {
    kingdom: data.kingdom,
    rules: data.rules,
    bonuses: data.bonuses || [],
    score: data.score,
    dispute: data.dispute,
    sel: [0, 0],
    // what Undo goes back to; for a stored reading the server works it out from the stored
    // corrections, so Undo still works after a reload
    history: (data.history || []).map(function (h) {
      return { kingdom: h.kingdom, rules: h.rules, bonuses: h.bonuses || [] };
    }),
    highlight: null,
    showZero: false,  // the regions worth 0 points are shown one by one
    seq: 0,
    busy: false
  };
  var machineCells = data.machine ? data.machine.cells : null;
  var review = {};
  (data.review || []).forEach(function (rc) { review[rc[0] + "," + rc[1]] = true; });

  var el = function (id) { return document.getElementById(id); };
  function make(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
    function clone(o) { return JSON.parse(JSON.stringify(o)); }
  function meta() {
    for (var i = 0; i < rulesMeta.length; i++) {
      if (rulesMeta[i].name === state.rules) { return rulesMeta[i]; }
    }
    return rulesMeta[0];
  }
  function size() { return state.kingdom.cells.length; }
  function cell(r, c) { return state.kingdom.cells[r][c]; }

  // ------------------------------------------------------------------ server
  function setStatus(text, isError) {
    var s = el("status");
    s.textContent = text;
    s.className = isError ? "error-inline" : "hint";
  }

  // A stored reading's saves go one at a time, in the order they were made: two saves in
  // flight at once could reach the server out of order and leave an older kingdom stored.
  // Each save is sent with keepalive, so a reload or a closed tab does not cut it off.
  var saving = Promise.resolve();
  var waiting = 0;  // saves made but not yet sent
  var pendingBody = null;  // the latest of them

  function post(url, body, keepalive) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: body
    }).then(function (resp) {
      return resp.json().then(function (j) { return { ok: resp.ok, body: j }; });
    });
  }

  function send(previous) {
    var body = clone(state.kingdom);
    body.rules = state.rules;
    body.bonuses = state.bonuses;
    var url = data.id ? "/api/readings/" + encodeURIComponent(data.id) + "/kingdom" : "/api/score-grid";
    var text = JSON.stringify(body);
    state.busy = true;
    var mine = ++state.seq;  // only the answer to the latest change is shown
    setStatus(_("scoring\u2026"));
    var answer;
    if (data.id) {
      waiting++;
      pendingBody = text;
      answer = saving.then(function () {
        waiting--;
        return post(url, text, true);
      });
      saving = answer.catch(function () { return null; });
    } else {
      answer = post(url, text, false);
    }
    return answer.then(function (res) {
      if (mine !== state.seq) { return; }
      state.busy = false;
      if (!res.ok) {
        if (previous) { state.kingdom = previous.kingdom; state.rules = previous.rules; state.bonuses = previous.bonuses; state.history.pop(); }
        setStatus(res.body.error || _("the change was refused"), true);
        renderAll();
        return;
      }
      var b = res.body;
      state.score = b.score;
      translateTexts(b.score);
      if (data.id) {
        state.kingdom = b.kingdom;
        state.dispute = b.dispute;
        setStatus(b.corrections === 1 ? _("saved (1 correction)") : _("saved (%(n)s corrections)", { n: b.corrections }));
      } else {
        setStatus("");
      }
      renderAll(true);
    }).catch(function () {
      if (mine !== state.seq) { return; }
      state.busy = false;
      if (previous) { state.kingdom = previous.kingdom; state.history.pop(); }
      setStatus(_("the server cannot be reached: the change was not saved"), true);
      renderAll();
    });
  }

  // The page is left (reload, link, closed tab) while saves still wait their turn: send the
  // latest kingdom now (keepalive outlives the page), so the last correction is not lost.
  window.addEventListener("pagehide", function () {
    if (data.id && waiting > 0 && pendingBody) {
      waiting = 0;
      post("/api/readings/" + encodeURIComponent(data.id) + "/kingdom", pendingBody, true);
    }
  });

  function change(fn) {
    var previous = { kingdom: clone(state.kingdom), rules: state.rules, bonuses: state.bonuses.slice() };
    fn();
    state.history.push(previous);
    send(previous);
    renderAll();
  }

  function undo() {
    if (!state.history.length) { return; }
    var prev = state.history.pop();
    state.kingdom = prev.kingdom;
    state.rules = prev.rules;
    state.bonuses = prev.bonuses;
    send(null);
    renderAll();
  }

  // ------------------------------------------------------------------ grid
  function crownText(n) {
    if (!n) { return ""; }
    return n <= 3 ? new Array(n + 1).join("\u265B") : "\u265B" + n;
  }

  function regionCells() {
    var set = {};
    if (state.highlight === null || !state.score) { return set; }
    var region = state.score.regions[state.highlight];
    if (region) { region.cells.forEach(function (rc) { set[rc[0] + "," + rc[1]] = true; }); }
    return set;
  }

  function renderGrid() {
    var grid = el("grid");
    var n = size();
    grid.innerHTML = "";
    grid.style.gridTemplateColumns = "repeat(" + n + ", 1fr)";
    var hl = regionCells();
    for (var r = 0; r < n; r++) {
      for (var c = 0; c < n; c++) {
        var k = cell(r, c);
        var b = make("button", "sq t-" + k.terrain);
        b.type = "button";
        b.tabIndex = -1;
        b.setAttribute("data-r", r);
        b.setAttribute("data-c", c);
        b.setAttribute("role", "gridcell");
        var label = tn(k.terrain) + (k.crowns ? ", " + (k.crowns === 1 ? _("1 crown") : _("%(n)s crowns", { n: k.crowns })) : "");
        if (k.building) { label += ", " + _("building"); }
        if (k.fire_tokens) { label += ", " + _("fire token %(n)s", { n: k.fire_tokens }); }
        if (typeof k.resource === "string") { label += ", " + _(k.resource); }
        if (k.caveman) { label += ", " + _(k.caveman); }
        if (k.warrior) { label += ", " + _("warrior %(n)s", { n: k.warrior }); }
        if (k.giants) { label += ", " + (k.giants === 1 ? _("1 giant") : _("%(n)s giants", { n: k.giants })); }
        if (k.resource === true) { label += ", " + _("%(token)s token", { token: _(TOKEN_OF[k.terrain] || "resource") }); }
        if (k.court) { label += ", " + (k.court === "building" ? (k.building_crowns === 1 ? _("building with 1 crown") : _("building with %(n)s crowns", { n: k.building_crowns || 0 })) : _(k.court.replace(/-/g, " "))); }
        if (review[r + "," + c]) { b.classList.add("review"); label += ", " + _("to check"); }
        if (machineCells && machineCells[r] && machineCells[r][c] &&
            (machineCells[r][c].terrain !== k.terrain || (machineCells[r][c].crowns || 0) !== k.crowns)) {
          b.classList.add("changed");
          label += ", " + _("corrected");
        }
        if (hl[r + "," + c]) { b.classList.add("hl"); }
        if (r === state.sel[0] && c === state.sel[1]) { b.classList.add("sel"); b.setAttribute("aria-selected", "true"); }
        b.setAttribute("aria-label", _("row %(r)s column %(c)s: %(what)s", { r: r + 1, c: c + 1, what: label }));
        b.appendChild(make("span", "crowns", k.terrain === "castle" ? "\u2656" : k.terrain === "hut" ? "\u25B3" : crownText(k.crowns)));
        var marks = pieceMarks(k);
        if (marks) { b.appendChild(make("span", "pieces", marks)); }
        b.title = label;
        grid.appendChild(b);
      }
    }
  }

  function pieceMarks(k) {
    var out = "";
    if (k.building) { out += "\u2302" + (k.building.crowns ? k.building.crowns : ""); }
    if (k.fire_tokens) { out += "\u2668" + k.fire_tokens; }
    if (typeof k.resource === "string") { out += k.resource.charAt(0).toUpperCase(); }
    if (k.giants) { out += new Array(k.giants + 1).join("\u25B2"); }
    if (k.resource === true) { out += "\u25CF"; }
    if (k.court === "building") { out += "\u2302" + (k.building_crowns || ""); }
    else if (k.court) { out += k.court.split("-")[0].slice(0, 3); }
    if (k.caveman) { out += "\u263A"; }
    if (k.warrior) { out += "\u2694" + k.warrior; }
    return out;
  }

  function select(r, c) {
    var n = size();
    state.sel = [Math.max(0, Math.min(n - 1, r)), Math.max(0, Math.min(n - 1, c))];
    if (!state.pinned && state.score) {  // show which region the square belongs to
      state.highlight = null;
      state.score.regions.forEach(function (reg, i) {
        reg.cells.forEach(function (rc) { if (rc[0] === state.sel[0] && rc[1] === state.sel[1]) { state.highlight = i; } });
      });
      document.querySelectorAll("#breakdown tr.region").forEach(function (tr) {
        tr.classList.toggle("hl", Number(tr.getAttribute("data-index")) === state.highlight);
      });
    }
    renderGrid();
    renderEditor();
    renderOverlay();
  }

  // ------------------------------------------------------------------ editor
  function button(text, onClick, active, extraCls) {
    var b = make("button", "chip" + (active ? " on" : "") + (extraCls ? " " + extraCls : ""), text);
    b.type = "button";
    b.addEventListener("click", onClick);
    if (active) { b.setAttribute("aria-pressed", "true"); }
    return b;
  }

  function numberInput(label, value, min, max, onSet) {
    var l = make("label", "field", label + " ");
    var i = make("input");
    i.type = "number"; i.min = min; if (max !== null) { i.max = max; }
    i.value = value || 0;
    i.inputMode = "numeric";
    i.addEventListener("change", function () {
      var v = parseInt(i.value, 10);
      if (isNaN(v) || v < min) { v = min; }
      onSet(v);
    });
    l.appendChild(i);
    return l;
  }

  function selectInput(label, options, value, onSet) {
    var l = make("label", "field", label + " ");
    var s = make("select");
    options.forEach(function (o) {
      var opt = make("option", null, o[1]);
      opt.value = o[0];
      if (String(value) === o[0]) { opt.selected = true; }
      s.appendChild(opt);
    });
    s.addEventListener("change", function () { onSet(s.value); });
    l.appendChild(s);
    return l;
  }

  function setCell(fn) {
    var r = state.sel[0], c = state.sel[1];
    change(function () { fn(state.kingdom.cells[r][c]); });
  }

  function setTerrain(t) {
    setCell(function (k) {
      k.terrain = t;
      if (t === "empty" || t === "castle" || t === "hut" || t === "town") { k.crowns = 0; }
      if (t !== "town") { delete k.building; }
      if (t === "empty") { delete k.fire_tokens; delete k.resource; delete k.caveman; delete k.warrior; }
      fitExpansionPieces(k);
    });
  }

  // The expansions' pieces only lie where they can (docs/engine.md): keep a square valid
  // when its terrain or crowns change, so a correction is never refused for them.
  function fitExpansionPieces(k) {
    var land = ["empty", "castle", "hut", "town"].indexOf(k.terrain) < 0;
    if (k.resource === true && (!TOKEN_OF[k.terrain] || k.crowns || k.court)) { delete k.resource; }
    if (k.court && (!land || k.crowns || (k.court === "building" && k.terrain === "mine"))) {
      delete k.court; delete k.building_crowns;
    }
    if (k.building_crowns && k.court !== "building") { delete k.building_crowns; }
    var most = land ? (k.crowns || 0) + (k.building_crowns || 0) : 0;
    if (k.giants > most) { k.giants = most; }
    if (!k.giants) { delete k.giants; }
  }

  function setPiece(name, v) {
    setCell(function (x) {
      if (name === "giants") { x.giants = v; }
      if (name === "resource") {
        if (v) { x.resource = true; delete x.court; delete x.building_crowns; } else { delete x.resource; }
      }
      if (name === "court") {
        if (!v) { delete x.court; delete x.building_crowns; }
        else {
          x.court = v; delete x.resource;
          if (v === "building") { x.building_crowns = x.building_crowns || 1; } else { delete x.building_crowns; }
        }
      }
      if (name === "building_crowns") { x.building_crowns = v; }
      fitExpansionPieces(x);
    });
  }

  // The pieces the engine describes in piece_options (the expansions'): counts as chips,
  // a flag as a toggle, a choice as a list; all buttons and lists, so the keyboard reaches them.
  function expansionPieces(box, m, k) {
    var opts = m.piece_options || {};
    var names = ((m.pieces || {}).cell || []).filter(function (n) { return opts[n]; });
    if (!names.length) { return; }
    var land = ["empty", "castle", "hut", "town"].indexOf(k.terrain) < 0;
    var p = make("div", "pieces-row expansion-pieces");
    names.forEach(function (name) {
      var o = opts[name];
      if (!land) { return; }
      if (name === "giants" && !((k.crowns || 0) + (k.building_crowns || 0))) { return; }
      if (name === "resource" && (!TOKEN_OF[k.terrain] || k.crowns)) { return; }
      if (name === "court" && k.crowns) { return; }
      if (name === "building_crowns" && k.court !== "building") { return; }
      if (o.kind === "count") {
        var row = make("div", "chips");
        row.appendChild(make("span", "hint", _(o.label)));
        var top = name === "giants" ? (k.crowns || 0) + (k.building_crowns || 0) : o.max;
        for (var n = o.min; n <= top; n++) {
          (function (n) {
            var b = button(String(n), function () { setPiece(name, n); }, (k[name] || 0) === n);
            b.setAttribute("data-piece", name);
            b.setAttribute("data-value", n);
            row.appendChild(b);
          })(n);
        }
        if (o.hint) { row.title = _(o.hint); }
        p.appendChild(row);
      } else if (o.kind === "flag") {
        var on = k[name] === true;
        var token = { token: _(TOKEN_OF[k.terrain] || "resource") };
        var f = button(on ? _("Remove the %(token)s token", token) : _("Place a %(token)s token", token),
          function () { setPiece(name, !on); }, on);
        f.setAttribute("data-piece", name);
        if (o.hint) { f.title = _(o.hint); }
        p.appendChild(f);
      } else if (o.kind === "choice") {
        var values = o.values.filter(function (v) { return !(v === "building" && k.terrain === "mine"); });
        var sel = selectInput(_(o.label), [["", _("none")]].concat(values.map(function (v) { return [v, _(v.replace(/-/g, " "))]; })),
          k[name] || "", function (v) { setPiece(name, v); });
        sel.querySelector("select").setAttribute("data-piece", name);
        if (o.hint) { sel.title = _(o.hint); }
        p.appendChild(sel);
      }
    });
    if (p.childNodes.length) { box.appendChild(p); }
  }

  function renderEditor() {
    var box = el("editor");
    box.innerHTML = "";
    var m = meta();
    var r = state.sel[0], c = state.sel[1];
    var k = cell(r, c);
    box.appendChild(make("div", "editor-title", _("Square row %(r)s, column %(c)s", { r: r + 1, c: c + 1 }) +
      (machineCells && machineCells[r] && machineCells[r][c] && machineCells[r][c].confidence !== undefined
        ? " " + _("(read with %(p)s%% confidence)", { p: Math.round(machineCells[r][c].confidence * 100) }) : "")));
    var terr = make("div", "chips terrains");
    m.terrains.forEach(function (t) {
      var b = button((LETTER_OF[t] ? LETTER_OF[t] + " " : "") + tn(t), function () { setTerrain(t); },
        k.terrain === t, "t-" + t);
      b.setAttribute("data-terrain", t);
      terr.appendChild(b);
    });
    box.appendChild(terr);
    var land = ["empty", "castle", "hut", "town"].indexOf(k.terrain) < 0;
    if (land) {
      var cr = make("div", "chips crowns-row");
      cr.appendChild(make("span", "hint", m.start === "hut" ? _("Fire") : _("Crowns")));
      for (var n = 0; n <= 3; n++) {
        (function (n) {
          var b = button(String(n), function () { setCell(function (x) { x.crowns = n; fitExpansionPieces(x); }); }, (k.crowns || 0) === n);
          b.setAttribute("data-crowns", n);
          cr.appendChild(b);
        })(n);
      }
      box.appendChild(cr);
    }
    var pieces = m.pieces || { cell: [], kingdom: [] };
    var p = make("div", "pieces-row");
    if (pieces.cell.indexOf("building") >= 0 && k.terrain === "town") {
      if (k.building) {
        var bd = k.building;
        var set = function (key, v) { setCell(function (x) { x.building[key] = v; if (v === "" || v === 0) { delete x.building[key]; } }); };
        p.appendChild(numberInput(_("Building crowns"), bd.crowns, 0, 3, function (v) { set("crowns", v); }));
        p.appendChild(numberInput(_("points"), bd.points, 0, 20, function (v) { set("points", v); }));
        p.appendChild(selectInput(_("per"), [["", _("fixed")], ["region", _("per region of")], ["tower", _("per tower")], ["knight", _("per knight")]],
          bd.per || "", function (v) {
            setCell(function (x) {
              if (v) { x.building.per = v; } else { delete x.building.per; }
              if (v === "region") { x.building.terrain = x.building.terrain || "forest"; } else { delete x.building.terrain; }
            });
          }));
        if (bd.per === "region") {
          p.appendChild(selectInput(_("terrain"), m.terrains.filter(function (t) { return ["empty", "castle", "hut"].indexOf(t) < 0; })
            .map(function (t) { return [t, tn(t)]; }), bd.terrain, function (v) { set("terrain", v); }));
        }
        p.appendChild(numberInput(_("towers"), bd.towers, 0, 3, function (v) { set("towers", v); }));
        p.appendChild(button(_("Remove building"), function () { setCell(function (x) { delete x.building; }); }));
      } else {
        p.appendChild(button(_("Place a building"), function () { setCell(function (x) { x.building = { crowns: 0, points: 0 }; }); }));
      }
    }
    if (pieces.cell.indexOf("fire_tokens") >= 0 && k.terrain !== "empty") {
      p.appendChild(selectInput(_("Fire token"), [["0", _("none")], ["1", "1"], ["2", "2"], ["3", "3"]],
        String(k.fire_tokens || 0), function (v) { setCell(function (x) { v = parseInt(v, 10); if (v) { x.fire_tokens = v; } else { delete x.fire_tokens; } }); }));
    }
    if (pieces.cell.indexOf("resource") >= 0 && !(m.piece_options || {}).resource && k.terrain !== "empty") {
      p.appendChild(selectInput(_("Resource"), [["", _("none")]].concat(valuesOf(m, "resource").map(function (x) { return [x, _(x)]; })),
        k.resource || "", function (v) { setCell(function (x) { if (v) { x.resource = v; } else { delete x.resource; } }); }));
    }
    if (pieces.cell.indexOf("caveman") >= 0 && k.terrain !== "empty") {
      p.appendChild(selectInput(_("Caveman"), [["", _("none")]].concat(valuesOf(m, "caveman").map(function (x) { return [x, _(x)]; })),
        k.caveman || "", function (v) { setCell(function (x) { if (v) { x.caveman = v; delete x.warrior; } else { delete x.caveman; } }); }));
    }
    if (pieces.cell.indexOf("warrior") >= 0 && k.terrain !== "empty") {
      var warriors = valuesOf(m, "warrior").map(function (w) {  // [name, power]: "small (1)"
        var name = w[0] + " (" + w[1] + ")";
        return [String(w[1]), _(name)];
      });
      p.appendChild(selectInput(_("Warrior"), [["0", _("none")]].concat(warriors), String(k.warrior || 0), function (v) {
        setCell(function (x) { v = parseInt(v, 10); if (v) { x.warrior = v; delete x.caveman; } else { delete x.warrior; } });
      }));
    }
    if (p.childNodes.length) { box.appendChild(p); }
    expansionPieces(box, m, k);
    if (Object.keys(m.piece_options || {}).length) {
      box.appendChild(make("p", "hint expansion-note", _("The photo reader does not see giants or " +
        "Court tiles yet: add them here, square by square (keys: + and - giants, r token, " +
        "b building; or the buttons).")));
    }
  }

  // ------------------------------------------------------------------ rules, bonuses, kingdom pieces
  function renderChoices() {
    var box = el("choices");
    box.innerHTML = "";
    var rs = selectInput(_("Rules"), rulesMeta.map(function (m) { return [m.name, names.rules[m.name] || m.title || m.name]; }), state.rules, function (v) {
      change(function () {
        state.rules = v;
        var allowed = meta().bonuses;
        state.bonuses = state.bonuses.filter(function (b) { return allowed.indexOf(b) >= 0; });
      });
    });
    rs.querySelector("select").id = "rules-select";
    box.appendChild(rs);
    meta().bonuses.forEach(function (b) {
      var l = make("label", "field");
      var i = make("input");
      i.type = "checkbox";
      i.value = b;  // the bonus's name, whatever language its label is in
      i.checked = state.bonuses.indexOf(b) >= 0;
      i.addEventListener("change", function () {
        change(function () {
          if (i.checked) { state.bonuses = state.bonuses.concat([b]); }
          else { state.bonuses = state.bonuses.filter(function (x) { return x !== b; }); }
        });
      });
      l.appendChild(i);
      l.appendChild(document.createTextNode(" " + bonusName(b)));
      box.appendChild(l);
    });
    var kp = (meta().pieces || {}).kingdom || [];
    var setTop = function (key, v) { change(function () { if (v) { state.kingdom[key] = v; } else { delete state.kingdom[key]; } }); };
    if (kp.indexOf("coins") >= 0) { box.appendChild(numberInput(_("Coins"), state.kingdom.coins, 0, null, function (v) { setTop("coins", v); })); }
    if (kp.indexOf("knights") >= 0) { box.appendChild(numberInput(_("Knights"), state.kingdom.knights, 0, null, function (v) { setTop("knights", v); })); }
    if (kp.indexOf("queen") >= 0) {
      var ql = make("label", "field");
      var q = make("input");
      q.type = "checkbox";
      q.checked = !!state.kingdom.queen;
      q.addEventListener("change", function () { setTop("queen", q.checked); });
      ql.appendChild(q);
      ql.appendChild(document.createTextNode(" " + _("hosts the queen")));
      box.appendChild(ql);
    }
    if (kp.indexOf("totems") >= 0) {
      valuesOf(meta(), "totems").forEach(function (res) {
        var tl = make("label", "field");
        var t = make("input");
        t.type = "checkbox";
        t.checked = (state.kingdom.totems || []).indexOf(res) >= 0;
        t.addEventListener("change", function () {
          change(function () {
            var list = (state.kingdom.totems || []).filter(function (x) { return x !== res; });
            if (t.checked) { list.push(res); }
            if (list.length) { state.kingdom.totems = list; } else { delete state.kingdom.totems; }
          });
        });
        tl.appendChild(t);
        tl.appendChild(document.createTextNode(" " + _("%(resource)s totem", { resource: _(res) })));
        box.appendChild(tl);
      });
    }
  }

  // ------------------------------------------------------------------ breakdown
  function renderBreakdown() {
    var t = el("breakdown");
    t.innerHTML = "";
    var s = state.score;
    el("total").textContent = s ? s.total : "-";
    if (!s) { return; }
    var head = make("tr");
    ["", _("Terrain"), _("Squares"), meta().start === "hut" ? _("Fire") : _("Crowns"), _("Points")].forEach(function (h) { head.appendChild(make("th", null, h)); });
    var thead = make("thead"); thead.appendChild(head); t.appendChild(thead);
    var tb = make("tbody");
    var suspects = {};
    if (state.dispute) { state.dispute.suspects.forEach(function (x) { suspects[x.index] = true; }); }
    var zero = [];  // the rows of regions worth 0 points, folded under one row
    s.regions.forEach(function (reg, i) {
      var tr = make("tr", "region" + (state.highlight === i ? " hl" : "") + (suspects[i] ? " suspect" : ""));
      tr.tabIndex = 0;
      tr.setAttribute("data-index", i);
      var sw = make("td"); sw.appendChild(make("span", "swatch t-" + reg.terrain)); tr.appendChild(sw);
      tr.appendChild(make("td", null, tn(reg.terrain) + (reg.queen ? " " + _("(queen)") : "")));
      tr.appendChild(make("td", "num", reg.squares));
      tr.appendChild(make("td", "num", reg.crowns));
      tr.appendChild(make("td", "num", reg.points));
      var on = function () { highlight(i); };
      tr.addEventListener("mouseenter", on);
      tr.addEventListener("focus", on);
      tr.addEventListener("click", function () { highlight(state.highlight === i ? null : i, true); });
      tr.addEventListener("mouseleave", function () { if (!state.pinned) { highlight(null); } });
      if (reg.points) { tb.appendChild(tr); return; }
      tr.classList.add("zero");
      tr.hidden = !state.showZero;
      zero.push(tr);
    });
    if (zero.length) {
      var group = make("tr", "zero-group");
      group.appendChild(make("td"));
      var label = make("td");
      var fold = make("button", "fold", (state.showZero ? "\u25BE " : "\u25B8 ") +
        (meta().start === "hut"
          ? (zero.length === 1 ? _("1 region without fire") : _("%(n)s regions without fire", { n: zero.length }))
          : (zero.length === 1 ? window.KDI18N.p_(rulebook(), "1 region without crowns")
            : window.KDI18N.p_(rulebook(), "%(n)s regions without crowns", { n: zero.length }))));
      fold.type = "button";
      fold.setAttribute("aria-expanded", state.showZero ? "true" : "false");
      fold.title = state.showZero ? _("hide them") : _("show them one by one");
      fold.addEventListener("click", function () { state.showZero = !state.showZero; renderBreakdown(); });
      label.appendChild(fold);
      group.appendChild(label);
      group.appendChild(make("td", "num", zero.reduce(function (n, tr) {
        return n + s.regions[Number(tr.getAttribute("data-index"))].squares; }, 0)));
      group.appendChild(make("td", "num", 0));
      group.appendChild(make("td", "num", 0));
      tb.appendChild(group);
      zero.forEach(function (tr) { tb.appendChild(tr); });
    }
    (s.bonuses || []).forEach(function (b) {
      var tr = make("tr", "bonus");
      tr.appendChild(make("td"));
      tr.appendChild(make("td", null, bonusName(b.name) + " \u2014 " + say(b.reason)));
      tr.appendChild(make("td")); tr.appendChild(make("td"));
      tr.appendChild(make("td", "num", b.points));
      tb.appendChild(tr);
    });
    Object.keys(s).forEach(function (key) {
      if (["total", "rules", "regions", "bonuses", "tiebreak", "warnings"].indexOf(key) >= 0) { return; }
      var v = s[key];
      if (key === "courtiers" && v && v.list) {  // every courtier its own line, with the arithmetic
        v.list.forEach(function (x) {
          var row = make("tr", "extra courtier");
          row.appendChild(make("td"));
          row.appendChild(make("td", null, say(x.reason)));
          row.appendChild(make("td")); row.appendChild(make("td"));
          row.appendChild(make("td", "num", x.points));
          tb.appendChild(row);
        });
        return;
      }
      var pts = (typeof v === "number") ? v : (v && typeof v.points === "number" ? v.points : null);
      if (pts === null) { return; }
      var tr = make("tr", "extra");
      tr.appendChild(make("td"));
      tr.appendChild(make("td", null, _(key.replace(/_/g, " ")) + (v && v.reason ? " \u2014 " + say(v.reason) : "")));
      tr.appendChild(make("td")); tr.appendChild(make("td"));
      tr.appendChild(make("td", "num", pts));
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    var tf = make("tfoot"); var tr = make("tr", "total-row");
    tr.appendChild(make("td")); tr.appendChild(make("td", null, _("Total")));
    tr.appendChild(make("td")); tr.appendChild(make("td"));
    tr.appendChild(make("td", "num", s.total));
    tf.appendChild(tr); t.appendChild(tf);
    var tie = s.tiebreak || {};
    // "largest region %(n)s", "crowns %(n)s", "fire %(n)s": kingdomino.i18n.TIEBREAKS
    el("tiebreak").textContent = Object.keys(tie).length ? _("Tie-break: %(order)s", { order: Object.keys(tie).map(function (k) {
      return window.KDI18N.p_(rulebook(), k.replace(/_/g, " ") + " %(n)s", { n: tie[k] });
    }).join(_(", then ")) }) : "";
    var w = el("warnings");
    w.innerHTML = "";
    (s.warnings || []).forEach(function (x) { w.appendChild(make("li", null, say(x))); });
  }

  function highlight(i, pin) {
    state.highlight = i;
    if (pin !== undefined) { state.pinned = i !== null; }
    document.querySelectorAll("#breakdown tr.region").forEach(function (tr) {
      tr.classList.toggle("hl", Number(tr.getAttribute("data-index")) === i);
    });
    renderGrid();
    renderOverlay();
  }

  // ------------------------------------------------------------------ dispute
  function renderDispute() {
    var box = el("dispute");
    var d = state.dispute;
    if (!d) { box.hidden = true; return; }
    box.hidden = false;
    box.innerHTML = "";
    box.className = "card dispute" + (d.difference === 0 ? " ok" : " off");
    box.appendChild(make("h2", null, _("Claimed %(claimed)s, scored %(total)s", { claimed: d.claimed, total: d.total }) +
      (d.difference ? " (" + (d.difference > 0 ? "+" : "") + d.difference + ")" : "")));
    var gap = { n: Math.abs(d.difference) };
    // the server's message is English (the API's); other languages say it from the catalog
    box.appendChild(make("p", null, window.KDI18N.locale === "en" || !window.KDI18N.locale ? d.message
      : d.difference === 0 ? _("The claimed score matches.") : d.suspects.length
      ? (d.difference > 0 ? _("The claim is %(n)s point(s) above the score. Check the highlighted regions: they hold squares the reader was unsure of.", gap)
        : _("The claim is %(n)s point(s) below the score. Check the highlighted regions: they hold squares the reader was unsure of.", gap))
      : (d.difference > 0 ? _("The claim is %(n)s point(s) above the score, and the reader was sure of every square: recount the regions with the player.", gap)
        : _("The claim is %(n)s point(s) below the score, and the reader was sure of every square: recount the regions with the player.", gap))));
    if (d.suspects.length) {
      var ul = make("ul");
      d.suspects.forEach(function (x) {
        var li = make("li", "suspect-item", _("%(terrain)s: %(squares)s squares \u00D7 %(crowns)s crowns = %(points)s points (squares to check: %(doubtful)s)",
          { terrain: tn(x.terrain), squares: x.squares, crowns: x.crowns, points: x.points, doubtful: x.doubtful.length }));
        li.tabIndex = 0;
        li.addEventListener("mouseenter", function () { highlight(x.index); });
        li.addEventListener("click", function () { highlight(x.index, true); select(x.doubtful[0][0], x.doubtful[0][1]); });
        ul.appendChild(li);
      });
      box.appendChild(ul);
    }
  }

  // ------------------------------------------------------------------ photo overlay
  function renderOverlay() {
    var svg = el("overlay");
    if (!svg || !data.grid || !data.photo_size) { return; }
    var g = data.grid;
    svg.setAttribute("viewBox", "0 0 " + data.photo_size[0] + " " + data.photo_size[1]);
    svg.setAttribute("preserveAspectRatio", "none");
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var rows = g.length - 1, cols = g[0].length - 1;
    var stroke = Math.max(1.5, data.photo_size[0] / 500);
    function poly(points, cls) {
      var p = document.createElementNS(SVGNS, "polygon");
      p.setAttribute("points", points.map(function (q) { return q[0] + "," + q[1]; }).join(" "));
      p.setAttribute("class", cls);
      p.setAttribute("stroke-width", stroke);
      svg.appendChild(p);
      return p;
    }
    function quad(r, c) { return [g[r][c], g[r][c + 1], g[r + 1][c + 1], g[r + 1][c]]; }
    var hl = regionCells();
    for (var r = 0; r < rows; r++) {
      for (var c = 0; c < cols; c++) {
        var cls = "cellpoly";
        if (review[r + "," + c]) { cls += " review"; }
        if (hl[r + "," + c]) { cls += " hl"; }
        if (r === state.sel[0] && c === state.sel[1]) { cls += " sel"; }
        var p = poly(quad(r, c), cls);
        p.setAttribute("data-r", r);
        p.setAttribute("data-c", c);
      }
    }
    poly([g[0][0], g[0][cols], g[rows][cols], g[rows][0]], "outline").setAttribute("stroke-width", stroke * 2.5);
  }

  // ------------------------------------------------------------------ events
  el("grid").addEventListener("click", function (e) {
    var b = e.target.closest(".sq");
    if (!b) { return; }
    select(Number(b.getAttribute("data-r")), Number(b.getAttribute("data-c")));
    el("grid").focus();
  });
  var svg = el("overlay");
  if (svg) {
    svg.addEventListener("click", function (e) {
      var p = e.target.closest("polygon[data-r]");
      if (p) { select(Number(p.getAttribute("data-r")), Number(p.getAttribute("data-c"))); }
    });
  }
  el("grid").addEventListener("keydown", function (e) {
    var r = state.sel[0], c = state.sel[1];
    var key = e.key;
    if ((e.ctrlKey || e.metaKey) && key.toLowerCase() === "z") { e.preventDefault(); undo(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    var moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[key]) { e.preventDefault(); select(r + moves[key][0], c + moves[key][1]); return; }
    if (key === "Delete" || key === "Backspace") { e.preventDefault(); setTerrain("empty"); return; }
    var letters = meta().letters || {};
    var t = meta().terrains.filter(function (x) { return letters[x] === key.toUpperCase(); })[0];
    if (t) { e.preventDefault(); setTerrain(t); return; }
    var opts = meta().piece_options || {};
    var here = cell(r, c);
    if ((key === "+" || key === "-") && opts.giants) {
      var most = (here.crowns || 0) + (here.building_crowns || 0);
      var g = (here.giants || 0) + (key === "+" ? 1 : -1);
      if (g >= 0 && g <= most) { e.preventDefault(); setPiece("giants", g); }
      return;
    }
    if (key === "r" && opts.resource && TOKEN_OF[here.terrain] && !here.crowns) {
      e.preventDefault(); setPiece("resource", here.resource !== true); return;
    }
    if (key === "b" && opts.court && !here.crowns && here.terrain !== "mine" && LETTER_OF[here.terrain] &&
        ["castle", "hut", "empty", "town"].indexOf(here.terrain) < 0) {
      e.preventDefault();  // none -> building of 1 crown -> of 2 crowns -> none
      if (here.court !== "building") { setPiece("court", "building"); }
      else if ((here.building_crowns || 1) < 2) { setPiece("building_crowns", 2); }
      else { setPiece("court", ""); }
      return;
    }
    if (/^[0-9]$/.test(key)) {
      var k = cell(r, c);
      if (["empty", "castle", "hut", "town"].indexOf(k.terrain) < 0) {
        e.preventDefault();
        setCell(function (x) { x.crowns = Number(key); fitExpansionPieces(x); });
      }
    }
  });
  el("undo").addEventListener("click", undo);
  // "Looks right": the kingdom posted as it stands confirms it, and every square teaches the
  // reader (webapp/learned.py); it waits its turn behind the saves, as a save does
  function learnedStatus(text, takeBack) {
    var box = el("learned-status");
    box.textContent = text;
    if (takeBack) {
      var b = make("button", null, _("Take back"));
      b.type = "button";
      b.addEventListener("click", function () {
        b.disabled = true;
        post("/api/readings/" + encodeURIComponent(data.id) + "/learned/forget",
             JSON.stringify({ correction: takeBack }), false).then(function (res) {
          learnedStatus(res.ok ? _("Taken back") : (res.body.error || _("the change was refused")));
        }).catch(function () { learnedStatus(_("the server cannot be reached")); });
      });
      box.appendChild(document.createTextNode(" "));
      box.appendChild(b);
    }
  }
  if (el("looks-right")) {
    el("looks-right").addEventListener("click", function () {
      var body = clone(state.kingdom);
      body.rules = state.rules;
      body.bonuses = state.bonuses;
      var text = JSON.stringify(body);
      var url = "/api/readings/" + encodeURIComponent(data.id) + "/kingdom";
      var answer = saving.then(function () { return post(url, text, true); });
      saving = answer.catch(function () { return null; });
      answer.then(function (res) {
        var got = res.body.learned || {};
        if (!res.ok) { learnedStatus(res.body.error || _("the change was refused")); return; }
        if (got.added > 0) {
          learnedStatus(got.added === 1 ? _("Thanks: 1 square learned") :
            _("Thanks: %(n)s squares learned", { n: got.added }), got.correction);
        } else {
          learnedStatus(_("Thanks: %(n)s squares learned", { n: 0 }) + (got.why ? " (" + got.why + ")" : ""));
        }
      }).catch(function () { learnedStatus(_("the server cannot be reached")); });
    });
  }
  if (el("size")) {
    el("size").value = String(size());
    el("size").addEventListener("change", function () {
      window.location.href = "/new?size=" + el("size").value + "&rules=" + encodeURIComponent(state.rules);
    });
  }
  if (el("save")) {
    el("save").addEventListener("click", function () {
      var body = clone(state.kingdom);
      body.rules = state.rules;
      body.bonuses = state.bonuses;
      fetch("/api/readings", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify(body)
      }).then(function (resp) { return resp.json().then(function (j) { return { ok: resp.ok, body: j }; }); })
        .then(function (res) {
          if (res.ok) { window.location.href = "/r/" + encodeURIComponent(res.body.id); }
          else { setStatus(res.body.error || _("could not save"), true); }
        }).catch(function () { setStatus(_("the server cannot be reached"), true); });
    });
  }

  function editing() {
    // a field of the editor has the focus: the person may be typing into it
    var a = document.activeElement;
    return !!(a && el("editor").contains(a) && (a.tagName === "INPUT" || a.tagName === "SELECT"));
  }

  function renderAll(fromServer) {
    renderGrid();
    // an answer from the server must not rebuild the field being typed into (the typing is lost)
    if (!(fromServer && editing())) { renderEditor(); }
    renderChoices();
    renderBreakdown();
    renderDispute();
    renderOverlay();
    el("undo").disabled = state.history.length === 0;
  }
  renderAll();
})();
