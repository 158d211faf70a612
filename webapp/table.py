"""Whole-table photos in the web app: ``POST /api/score`` with ``all=1`` and the upload page's
"whole table" choice read every kingdom of one photo (``kingdomino.table``). Each kingdom is
stored as its own reading (its own permalink ``/r/<id>``, corrected as any other); the game's
permalink ``/game/<id>.<id>...`` lists them in kingdom order and shows the photo with every
outline and its number, a name field per kingdom (the names travel in the link: ``?name=Ann&
name=Bob``) and the game's standings from the current (corrected) scores: one standings list
per rule set when the kingdoms were scored under several (the engine ranks one rule set at a
time). ``players=`` (names in kingdom order) is cleaned as ``player=`` is (``service.
clean_name``); ``size=`` (5 or 7) goes to the reader, any other value is a 400.
"""
from __future__ import annotations

import contextlib
import re

from flask import Blueprint, current_app, jsonify, redirect, render_template, request, url_for
from werkzeug.exceptions import BadRequest, NotFound, ServiceUnavailable, UnprocessableEntity

import engine
from vision.photo.files import PhotoBusy

from . import get_store, outline, security, service
from .reading import READ_LOCK, copy_scale

bp = Blueprint("table", __name__)

MAX_KINGDOMS = 8                     # ids in one game link (a table holds at most 4 players)
_ID = re.compile(r"^[A-Za-z0-9_-]{4,40}$")
MAX_PLAYERS_TEXT = MAX_KINGDOMS * (service.MAX_NAME + 1)  # the players field, in characters


def default_table_reader(photo: bytes, rules: str, bonuses=(), size=None) -> list[dict]:
    """The real whole-table reader: one scored object per kingdom (``kingdomino.table``), one
    photo at a time (the networks are not safe to run concurrently)."""
    from kingdomino import table

    with READ_LOCK:
        return table.score_table(photo, rules=rules, bonuses=bonuses, size=size)


def wants_all(form) -> bool:
    return str(form.get("all", "")).strip().lower() in ("1", "true", "on", "yes")


def _players(form) -> list[str]:
    """``players=``: the names in kingdom order, each cleaned as ``player=`` is
    (``service.clean_name``) before the checks; 400 when too long, empty or given twice."""
    from kingdomino.table import PlayersError, parse_players

    text = form.get("players")
    if text is None:
        return []
    if len(text) > MAX_PLAYERS_TEXT:
        raise BadRequest(f"the players field is {len(text)} characters long; at most "
                         f"{MAX_PLAYERS_TEXT}: at most {MAX_KINGDOMS} names of at most "
                         f"{service.MAX_NAME} characters, separated by commas")
    try:
        names = parse_players(",".join(service.clean_name(n) for n in text.split(",")))
    except PlayersError as exc:
        raise BadRequest(str(exc))
    if len(names) > MAX_KINGDOMS:
        raise BadRequest(f"{len(names)} players: a game has at most {MAX_KINGDOMS} kingdoms")
    return names


def read_table_photo(upload, rules: str, bonuses, players=(), size=None
                     ) -> list[tuple[str, str, dict]]:
    """Check, read, score and store every kingdom of an uploaded table photo: ``[(id, source as
    stored, scored object with "kingdom" and "corners"), ...]`` in kingdom order. 400 for a bad file, 422 when
    the photo holds no kingdom (nothing is stored then), 503 when the server is busy. ``size``
    (5 or 7, every kingdom's; None: the reader decides) goes to the reader only when given.
    The photo's pixels are held in the budget (``security``) until every kingdom is read."""
    with security.pixel_budget().keep(), contextlib.ExitStack() as share:
        return _read_table_photo(upload, rules, bonuses, players, size, share)


def _read_table_photo(upload, rules, bonuses, players, size, share
                      ) -> list[tuple[str, str, dict]]:
    data, small, (width, height) = service.decode_upload(upload, share)  # one decode: copy, reading
    name = service.upload_name(upload, 180)
    reader = current_app.config.get("TABLE_READER") or default_table_reader
    from kingdomino.service import reading_with

    from . import learned

    try:
        with reading_with(learned.read_examples(get_store())):  # what corrections taught
            objs = reader(data, rules, bonuses, **({} if size is None else {"size": size}))
    except PhotoBusy as exc:
        raise ServiceUnavailable(str(exc))
    except Exception as exc:
        if isinstance(exc, ValueError):
            raise UnprocessableEntity(str(exc) or "no kingdom could be read in this photo")
        current_app.logger.exception("reading table upload %r failed", name)
        raise UnprocessableEntity("this photo could not be read: the reader failed on it (the "
                                  "fault was logged); try another photo, taken from above")
    if not objs:
        raise UnprocessableEntity("no kingdom found in the photo: take it from above with every "
                                  "kingdom whole in view")
    store = get_store()
    out = []
    for k, obj in enumerate(objs):
        obj = dict(obj)
        obj["kingdom"] = int(obj.get("kingdom", k))
        machine = dict(obj)
        machine["photo_size"] = [width, height]
        source = f"{name} #{obj['kingdom'] + 1}"  # people count from 1 (the JSON from 0)
        rid = store.add_reading(rules=rules, bonuses=bonuses, machine=machine, source=source,
                                player=players[k] if k < len(players) else None, photo=small)
        out.append((rid, source, obj))
    return out


def game_link(ids, names=(), external: bool = False) -> str:
    return url_for("table.game", ids=".".join(ids), name=[n for n in names] or None,
                   _external=external)


def api_score_all():
    """``POST /api/score`` with ``all=1``: ``{"kingdoms": [...], "game": permalink}``."""
    rules, bonuses = service.form_choice(request.form)
    if request.form.get("corners"):
        raise BadRequest("corners give one kingdom's outline and all=1 reads every kingdom: "
                         "send one or the other")
    players = _players(request.form)
    size = outline.parse_size(request.form.get("size"))  # 400 for 9: never silently ignored
    stored = read_table_photo(request.files.get("photo"), rules, bonuses, players, size)
    kingdoms = [{"source": source, **obj, "id": rid,
                 "permalink": url_for("pages.result", rid=rid, _external=True)}
                for rid, source, obj in stored]
    return jsonify(kingdoms=kingdoms, game=game_link([k["id"] for k in kingdoms], players,
                                                     external=True))


def upload_table():
    """The upload page's "whole table" choice: read, store, then show the game page."""
    rules, bonuses = service.form_choice(request.form)
    players = _players(request.form)
    size = outline.parse_size(request.form.get("size"))
    upload = request.files.get("photo")
    if upload is None or not upload.filename:
        raise BadRequest("choose a photo of the table first")
    stored = read_table_photo(upload, rules, bonuses, players, size)
    return redirect(game_link([rid for rid, _source, _obj in stored], players), code=303)


def _ids(text: str) -> list[str]:
    ids = text.split(".")
    if not 1 <= len(ids) <= MAX_KINGDOMS or not all(_ID.match(i) for i in ids) \
            or len(set(ids)) != len(ids):
        raise NotFound("no such game: check the link")
    return ids


def game_view(ids: list[str], names: list[str]) -> dict:
    """What the game page shows: each kingdom (number, name, id, total, outline on the photo)
    and the standings."""
    kingdoms, photo_size = [], None
    for k, rid in enumerate(ids):
        rec = service.load(rid)
        data = service.view(rec)
        machine = rec.get("machine") if isinstance(rec.get("machine"), dict) else {}
        number = machine.get("kingdom", k)
        # "number": the kingdom as people count it, from 1 ("kingdom" stays the JSON's, from 0)
        shown = number + 1 if isinstance(number, int) and not isinstance(number, bool) else k + 1
        name = names[k] if k < len(names) and names[k] else (rec.get("player") or f"kingdom {shown}")
        outline = centre = None
        size = machine.get("photo_size")
        try:
            factor, copy_size = copy_scale(size)
            photo_size = photo_size or copy_size
            outline = [[round(float(x) * factor, 1), round(float(y) * factor, 1)]
                       for x, y in machine["corners"]][:4]
            centre = [round(sum(p[0] for p in outline) / 4, 1),
                      round(sum(p[1] for p in outline) / 4, 1)]
        except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError):
            outline = centre = None
        kingdoms.append({"kingdom": number, "number": shown, "id": rid, "name": name, "outline": outline, "centre": centre,
                         "rules": data.get("rules") or rec.get("rules"),
                         "score": data.get("score"), "cut": bool(machine.get("cut")),
                         "review": len(data.get("review") or []), "error": data.get("error"),
                         "photo": data.get("photo"), "corrected": data.get("corrections", 0) > 0})
    _distinct_names(kingdoms)
    groups = _standings_by_rules(kingdoms)
    photo = next((k["photo"] for k in kingdoms if k["photo"]), None)
    # one rule set: "standings" is the game's; several: each rule set is ranked on its own
    # ("groups"), as the engine cannot rank scores of different rule sets together
    return {"kingdoms": kingdoms, "standings": groups[0]["rows"] if len(groups) == 1 else [],
            "groups": groups, "mixed_rules": len(groups) > 1, "photo": photo,
            "photo_size": photo_size, "ids": ids}


def _distinct_names(kingdoms: list[dict]) -> None:
    """Give every kingdom its own label: a name already used (from the link, a stored player or
    "kingdom N") gets its place in the game added, "Ann (1)"."""
    used: set[str] = set()
    for i, k in enumerate(kingdoms):
        name, extra = k["name"], i
        while name in used:
            name, extra = f"{k['name']} ({extra})", extra + 1
        k["name"] = name
        used.add(name)


def _standings_by_rules(kingdoms: list[dict]) -> list[dict]:
    """``[{"rules": name, "rows": standings}, ...]``, one per rule set of the scored kingdoms
    (in kingdom order of their first kingdom). Kingdoms are ranked by their place in the game,
    never by their label, so two kingdoms never share a row."""
    members: dict[str, list[int]] = {}
    for i, k in enumerate(kingdoms):
        if k["score"]:
            members.setdefault(str(k["score"].get("rules") or k["rules"]), []).append(i)
    groups = []
    for rules, idx in members.items():
        try:
            rows = engine.rank([(str(i), kingdoms[i]["score"]) for i in idx])
        except ValueError:  # a stored score the engine no longer ranks: totals still shown
            rows = []
        for row in rows:
            k = kingdoms[int(row["player"])]
            row.update(player=k["name"], kingdom=k["kingdom"], number=k["number"], cut=k["cut"])
        groups.append({"rules": rules, "rows": rows})
    return groups


@bp.get("/game/<ids>")
def game(ids):
    id_list = _ids(ids)
    # cleaned as any player's name; two kingdoms never share one (game_view)
    names = [service.clean_name(n)[:service.MAX_NAME]
             for n in request.args.getlist("name")[:len(id_list)]]
    data = game_view(id_list, names)
    return render_template("game.html", game=data,
                           link=game_link(id_list, [k["name"] for k in data["kingdoms"]],
                                          external=True))
