"""HTML pages: upload, result permalink (``/r/<id>``), photo, exports, build-from-scratch."""
from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

from flask import Blueprint, Response, abort, redirect, render_template, request, url_for
from werkzeug.exceptions import BadRequest, UnprocessableEntity

from engine.kingdom import SIZES
from kingdomino import i18n
from kingdomino.i18n import N_

from . import get_store, service, stored_jpeg, table, terms

bp = Blueprint("pages", __name__)


@bp.get("/")
def index():
    return render_template("index.html", choices=service.all_rules_meta(), error=None, form={},
                           chosen=[])


@bp.post("/upload")
def upload():
    """The upload form: read, store, then show the permalink (or the form again, with why)."""
    form = request.form
    try:
        if table.wants_all(form):  # "whole table": every kingdom, then the game page
            return table.upload_table()
        rules, bonuses = service.form_choice(form)
        claimed = service.parse_claimed(form.get("claimed"))
        upload = request.files.get("photo")
        if upload is None or not upload.filename:
            raise BadRequest(N_("choose a photo of the kingdom first"))
        rid, _ = service.read_photo(upload, rules, bonuses, player=service.parse_player(form.get("player")),
                                claimed=claimed)
    except (BadRequest, UnprocessableEntity) as exc:
        if getattr(exc, "reading_id", None):  # no kingdom found: place its outline by hand
            return redirect(url_for("pages.result", rid=exc.reading_id), code=303)
        error, detail = terms.error_text(exc.code, exc.description)  # in the page's language
        return render_template("index.html", choices=service.all_rules_meta(), error=error,
                               detail=detail, form=form, chosen=form.getlist("bonus")), exc.code
    return redirect(url_for("pages.result", rid=rid), code=303)


@bp.get("/r/<rid>")
def result(rid):
    rec = service.load(rid)
    data = service.view(rec)
    return render_template("result.html", data=data, meta=service.all_rules_meta(), mode="reading")


@bp.get("/new")
def new():
    rules = request.args.get("rules", "kingdomino")
    rules, _ = service.check_choice(rules, [])
    try:
        size = int(request.args.get("size", 5))
    except ValueError:
        size = 5
    if size not in SIZES:
        raise BadRequest("size must be 5 or 7")
    centre = size // 2
    start = service.rules_meta(rules)["start"]
    cells = [[{"terrain": start if (r, c) == (centre, centre) else "empty", "crowns": 0}
              for c in range(size)] for r in range(size)]
    kingdom = {"rules": rules, "size": size, "cells": cells}
    scored = service.score_kingdom(kingdom, rules=rules)
    data = {"id": None, "rules": rules, "bonuses": [], "player": None, "claimed": None,
            "kingdom": service.kingdom_of(scored), "score": scored["score"], "machine": None,
            "review": [], "grid": None, "photo": None, "dispute": None, "corrections": 0}
    return render_template("result.html", data=data, meta=service.all_rules_meta(), mode="new")


@bp.get("/favicon.ico")
def favicon():
    """The site's icon (``webapp.favicon``), which browsers ask for on every site."""
    from .favicon import ico

    resp = Response(ico(), mimetype="image/vnd.microsoft.icon")
    resp.headers["Cache-Control"] = "public, max-age=604800"
    return resp


@bp.get("/r/<rid>/photo.jpg")
def photo(rid):
    return stored_jpeg(get_store().photo(rid), "this result has no photo")


@bp.get("/r/<rid>.json")
def export_json(rid):
    rec = service.load(rid)
    data = service.view(rec)
    full = {"id": rid, "rules": data["rules"], "bonuses": data["bonuses"],
            "player": data["player"], "claimed": data["claimed"], "source": data["source"],
            "kingdom": data["kingdom"], "score": data["score"], "dispute": data["dispute"],
            "machine": rec["machine"], "corrections": get_store().corrections(rid),
            "error": rec["error"]}
    resp = Response(json.dumps(full, indent=1), mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="kingdom-{rid}.json"'
    return resp


def csv_text(text: str) -> str:
    """A CSV download as sent: with ``?bom=1`` (the pages' download links) it starts with a
    UTF-8 byte order mark, so spreadsheet apps read Chinese or Korean names right; without it
    (what scripts fetch) it is plain UTF-8, as it always was."""
    return ("\ufeff" + text) if request.args.get("bom") == "1" else text


@bp.get("/r/<rid>.csv")
def export_csv(rid):
    resp = Response(csv_text(service.export_csv(rid)), mimetype="text/csv; charset=utf-8")
    resp.headers["Content-Disposition"] = f'attachment; filename="kingdom-{rid}.csv"'
    return resp


LANGUAGE_COOKIE_DAYS = 365


def _local_path(target: str | None) -> str:
    """Where to go back to after choosing a language: a path of this site only, else the index.

    Browsers drop tabs and line breaks anywhere in an address, trim spaces and control
    characters at its ends and read a backslash as a slash, so ``/<tab>/host`` or ``/\\host`` is
    ``//host``: another site. Hence no control character, space or backslash at all (a line
    break could not be sent in a header anyway), one slash first and not two, and the path is
    written out again from its parts, so nothing but a path, query and fragment comes back."""
    if not target or not target.startswith("/") or target[1:2] == "/":
        return url_for("pages.index")
    if any(ch == "\\" or ch.isspace() or not ch.isprintable() for ch in target):
        return url_for("pages.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/") or parts.path.startswith("//"):
        return url_for("pages.index")
    return urlunsplit(("", "", parts.path, parts.query, parts.fragment))


@bp.get("/lang/<locale>")
def choose_language(locale):
    """The language menu of every page: remember the choice in a cookie, go back to the page."""
    if locale not in i18n.available():
        abort(404, description="no such language: choose one from the menu at the top of the page")
    resp = redirect(_local_path(request.args.get("next")), code=303)
    resp.set_cookie(i18n.COOKIE, locale, max_age=LANGUAGE_COOKIE_DAYS * 86400, samesite="Lax",
                    httponly=True)
    return resp


@bp.get("/i18n/<locale>.js")
def script_catalog(locale):
    """The page scripts' messages in ``locale`` (``window.KDI18N``, read by static/i18n.js)."""
    if locale not in i18n.available():
        abort(404, description="no such language")
    body = "window.KDI18N = " + json.dumps(
        {"locale": locale, "lang": i18n.html_lang(locale), "messages": i18n.script_catalog(locale)},
        ensure_ascii=False, sort_keys=True) + ";\n"
    resp = Response(body, mimetype="text/javascript")
    resp.headers["Cache-Control"] = "public, max-age=300"
    return resp


@bp.post("/i18n/texts")
def engine_texts():
    """The engine's sentences (warnings, reasons) of a score the page shows, in the page's
    language: ``{"texts": [english, ...]}`` -> ``{"texts": {english: translated}}``; with
    ``"rules"`` (a rule set's name) in the words of its rulebook."""
    what = '{"texts": ["...", ...]} (a list of the score\'s sentences)'
    body = service.json_body(what)  # JSON nested too deeply is a 400 there
    texts = body.get("texts")
    rules = body.get("rules") if isinstance(body.get("rules"), str) else None
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadRequest(f"send {what}")
    if len(texts) > terms.MAX_TEXTS:
        raise BadRequest(f"at most {terms.MAX_TEXTS} sentences at once; send them in parts")
    longest = max(texts, key=len, default="")
    if len(longest) > terms.MAX_TEXT_CHARS:
        raise BadRequest(f"a sentence of {len(longest)} characters is too long: at most "
                         f"{terms.MAX_TEXT_CHARS} characters each")
    total = sum(map(len, texts))
    if total > terms.MAX_TEXTS_CHARS:
        raise BadRequest(f"the sentences have {total} characters in all; at most "
                         f"{terms.MAX_TEXTS_CHARS} at once: send them in parts")
    return {"texts": terms.engine_texts(texts, rules)}
