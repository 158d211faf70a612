// The outline given by hand on the result page: four draggable corners on the photo, a size,
// "Read again" -> POST /api/readings/<id>/outline (webapp/outline.py), then the page reloads
// to show the new reading and says at its top that the photo was read again (the sentence
// waits in sessionStorage across the reload). Corners are kept in the stored photo's own
// pixels; each corner is a touch target of at least TOUCH CSS pixels across, whatever the
// photo's size on the screen.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var _ = window.KDI18N._;  // the page's language (static/i18n.js)
  var data = JSON.parse(document.getElementById("reading-data").textContent);
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var img = document.getElementById("outline-photo");
  var svg = document.getElementById("outline-svg");
  var sizeSel = document.getElementById("outline-size");
  var button = document.getElementById("outline-read");
  var status = document.getElementById("outline-status");
  var AGAIN = "kd-read-again";  // sessionStorage: {id, text} said once after the reload
  var TOUCH = 44;  // CSS px: the least a finger can hit (WCAG 2.5.5)

  function sayReadAgain() {
    var saved = null;
    try {
      saved = JSON.parse(window.sessionStorage.getItem(AGAIN) || "null");
      window.sessionStorage.removeItem(AGAIN);
    } catch (e) { return; }  // storage off (a private window): the new total shows anyway
    if (!saved || saved.id !== data.id || !saved.text) { return; }
    var card = document.createElement("section");
    card.className = "card notice";
    card.id = "read-again-note";
    card.setAttribute("role", "status");
    card.textContent = saved.text;
    var summary = document.querySelector(".summary");
    if (summary && summary.parentNode) { summary.parentNode.insertBefore(card, summary.nextSibling); }
  }
  if (data.id) { sayReadAgain(); }
  if (!img || !svg || !data.id) { return; }

  var W = 0, H = 0, pts = [], handles = [], poly = null, drag = -1;

  function startCorners() {
    var g = data.grid;
    if (g && g.length > 1 && data.photo_size) {
      var k = W / data.photo_size[0], last = g.length - 1, lastc = g[0].length - 1;
      return [g[0][0], g[0][lastc], g[last][lastc], g[last][0]].map(function (p) {
        return [p[0] * k, p[1] * k];
      });
    }
    var mx = W * 0.25, my = H * 0.25;  // nothing found: a rectangle in the middle to start from
    return [[mx, my], [W - mx, my], [W - mx, H - my], [mx, H - my]];
  }

  function clamp(v, lo, hi) { return Math.max(lo, Math.min(hi, v)); }

  // a corner's radius in the photo's pixels: as drawn before (W / 60) or, where the photo is
  // shown small (a phone), TOUCH / 2 CSS pixels, so that a finger can still take it
  function handleRadius() {
    var shown = svg.getBoundingClientRect().width;
    var perCssPx = shown > 0 ? W / shown : 1;
    return Math.max(8, W / 60, (TOUCH / 2) * perCssPx);
  }

  function draw() {
    var radius = handleRadius();
    poly.setAttribute("points", pts.map(function (p) { return p[0] + "," + p[1]; }).join(" "));
    pts.forEach(function (p, i) {
      handles[i].setAttribute("r", radius);
      handles[i].setAttribute("cx", p[0]);
      handles[i].setAttribute("cy", p[1]);
      handles[i].setAttribute("aria-label", _("Outline corner %(i)s of 4 at %(x)s, %(y)s: arrows move it",
        { i: i + 1, x: Math.round(p[0]), y: Math.round(p[1]) }));
    });
  }

  function toPhoto(ev) {
    var r = svg.getBoundingClientRect();
    return [clamp((ev.clientX - r.left) * W / r.width, 0, W),
            clamp((ev.clientY - r.top) * H / r.height, 0, H)];
  }

  function build() {
    W = img.naturalWidth; H = img.naturalHeight;
    if (!W || !H) { return; }
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.innerHTML = "";
    svg.style.touchAction = "none";  // a finger drags the corner, not the page
    var stroke = Math.max(1.5, W / 400), radius = handleRadius();
    pts = startCorners();
    poly = document.createElementNS(SVGNS, "polygon");
    poly.setAttribute("fill", "rgba(255,140,0,0.12)");
    poly.setAttribute("stroke", "#ff8c00");
    poly.setAttribute("stroke-width", stroke);
    svg.appendChild(poly);
    handles = pts.map(function (p, i) {
      var c = document.createElementNS(SVGNS, "circle");
      c.setAttribute("r", radius);
      c.setAttribute("fill", "rgba(255,140,0,0.35)");
      c.setAttribute("stroke", "#fff");
      c.setAttribute("stroke-width", stroke);
      c.setAttribute("tabindex", "0");
      c.setAttribute("role", "button");
      c.setAttribute("class", "outline-corner");
      c.setAttribute("data-corner", String(i));
      c.addEventListener("pointerdown", function (ev) {
        drag = i;
        c.setPointerCapture(ev.pointerId);
        ev.preventDefault();
      });
      c.addEventListener("pointermove", function (ev) {
        if (drag !== i) { return; }
        pts[i] = toPhoto(ev);
        draw();
      });
      c.addEventListener("pointerup", function () { drag = -1; });
      c.addEventListener("keydown", function (ev) {
        var step = ev.shiftKey ? Math.max(10, W / 50) : 1;
        var d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[ev.key];
        if (!d) { return; }
        ev.preventDefault();
        pts[i] = [clamp(pts[i][0] + d[0], 0, W), clamp(pts[i][1] + d[1], 0, H)];
        draw();
      });
      svg.appendChild(c);
      return c;
    });
    draw();
  }

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", !!isError);
    if (isError) { sayInLanguage(text); }
  }

  // the server's refusal is English (the API's words: "no kingdom found in the photo: ...");
  // the page says it in its own language where the catalogs have it (POST /i18n/texts)
  function sayInLanguage(text) {
    var locale = window.KDI18N.locale;
    if (!text || !locale || locale === "en") { return; }
    fetch("/i18n/texts", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ texts: [text] })
    }).then(function (r) { return r.ok ? r.json() : null; }).then(function (body) {
      var said = body && body.texts && body.texts[text];
      if (said && status.textContent === text) { status.textContent = said; }
    }).catch(function () { return null; });  // the English sentence stays
  }

  button.addEventListener("click", function () {
    var body = { corners: pts.map(function (p) { return [Math.round(p[0] * 10) / 10, Math.round(p[1] * 10) / 10]; }) };
    if (sizeSel.value) { body.size = parseInt(sizeSel.value, 10); }
    button.disabled = true;
    say(_("Reading the kingdom inside the outline\u2026"));
    fetch("/api/readings/" + encodeURIComponent(data.id) + "/outline", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body)
    }).then(function (resp) {
      return resp.json().then(function (j) { return { ok: resp.ok, body: j }; });
    }).then(function (res) {
      if (!res.ok) {
        button.disabled = false;
        say(res.body.error || _("the photo could not be read again"), true);
        return;
      }
      var aside = res.body.set_aside ? " " + _("(earlier corrections set aside: %(n)s)", { n: res.body.set_aside }) : "";
      var text = _("Read again: total %(total)s", { total: res.body.score.total }) + aside;
      say(text);
      try { window.sessionStorage.setItem(AGAIN, JSON.stringify({ id: data.id, text: text })); } catch (e) { /* said above until the reload */ }
      window.location.reload();
    }).catch(function () {
      button.disabled = false;
      say(_("the server could not be reached: try again"), true);
    });
  });

  if (data.machine && data.machine.cells && (data.machine.cells.length === 5 || data.machine.cells.length === 7)) {
    sizeSel.value = String(data.machine.cells.length);
  }
  if (img.complete && img.naturalWidth) { build(); } else { img.addEventListener("load", build); }
  // the photo is shown at another size (a turned phone, a wider window, the details opened):
  // the corners keep their touch size
  window.addEventListener("resize", function () { if (poly) { draw(); } });
  var details = document.querySelector("#outline-tool details");
  if (details) { details.addEventListener("toggle", function () { if (poly) { draw(); } }); }
})();
