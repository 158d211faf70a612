"""JSON API: the contract's two endpoints (``/api/score``, ``/api/score-grid``) and the ones the
result page uses (a reading's data, corrections, kingdoms built by hand, rule sets).

Every error is a 4xx ``{"error": "..."}`` that says what is wrong and how to fix it.
"""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request, url_for
from werkzeug.exceptions import BadRequest, NotFound, UnprocessableEntity

from kingdomino import service
from kingdomino.store import content_hash

from . import get_store
from .reading import (breakdown_csv, dispute, grid_points, scale_points, shrink_photo,
                      undo_stack)
from .security import ImageRejected, check_image

bp = Blueprint("api", __name__, url_prefix="/api")

# keys a reading carries that are not part of the kingdom itself
READER_KEYS = ("review", "corners", "homography", "score", "source", "id", "permalink", "rows",
               "cols", "warnings", "photo_size", "error", "bonuses")
CELL_READER_KEYS = ("confidence",)


# ---------------------------------------------------------------- rule sets


def rule_names() -> list[str]:
    import engine

    return list(engine.rule_names())


def check_choice(rules: str | None, bonuses) -> tuple[str, list[str]]:
    """Validated ``(rules, bonuses)``; ``BadRequest`` naming the choices when unknown."""
    import engine

    rules = (rules or "kingdomino").strip()
    names = rule_names()
    if rules not in names:
        raise BadRequest(f"unknown rule set {rules!r}: choose one of {', '.join(names)}")
    allowed = list(engine.bonus_names(rules))
    bonuses = [b.strip() for b in bonuses if b and b.strip()]
    for b in bonuses:
        if b not in allowed:
            raise BadRequest(f"unknown bonus {b!r} for rules {rules!r}: choose from "
                             f"{', '.join(allowed) or '(this rule set has none)'}")
    return rules, sorted(set(bonuses))


DEFAULT_TERRAINS = {
    "kingdomino": ["field", "forest", "lake", "grassland", "swamp", "mine", "castle", "empty"],
    "queendomino": ["field", "forest", "lake", "grassland", "swamp", "mine", "town", "castle",
                    "empty"],
    "origins": ["desert", "grassland", "lake", "forest", "quarry", "volcano", "hut", "empty"],
}


def pieces_of(name: str, start: str) -> dict:
    """Which extra pieces the editor offers for a rule set (see docs/engine.md)."""
    cell, kingdom = [], []
    if name.startswith("queendomino"):
        cell, kingdom = ["building"], ["coins", "knights", "queen"]
    elif name.startswith("origins") or start == "hut":
        cell = ["fire_tokens"]
        if "totem" in name:
            cell.append("resource")
            kingdom.append("totems")
        if "tribe" in name:
            cell += ["resource", "caveman", "warrior"]
    return {"cell": cell, "kingdom": kingdom}


def rules_meta(name: str) -> dict:
    """What the editor needs about a rule set: terrains, bonuses, extra pieces."""
    import engine

    meta = {"name": name, "bonuses": list(engine.bonus_names(name))}
    try:
        rules = engine.get_rules(name)
    except Exception:  # an engine without get_rules: fall back on the known terrain lists
        rules = None
    start = getattr(rules, "start_terrain", None) or ("hut" if "origins" in name else "castle")
    terrains = list(getattr(rules, "terrains", None) or ())
    if not terrains:
        base = name.split("-")[0].split(":")[0]
        terrains = DEFAULT_TERRAINS.get(base, DEFAULT_TERRAINS["kingdomino"])
    meta["terrains"] = [t for t in terrains if t not in (start, "empty")] + [start, "empty"]
    meta["start"] = start
    meta["title"] = getattr(rules, "title", "") or name
    meta["pieces"] = pieces_of(name, start)
    return meta


@bp.get("/rules")
def rules():
    return jsonify(rules=[rules_meta(n) for n in rule_names()])


# ---------------------------------------------------------------- kingdoms


def kingdom_of(obj: dict) -> dict:
    """The kingdom itself (Kingdom JSON + rule-set extras) out of a reading or a request."""
    if not isinstance(obj, dict):
        raise BadRequest("the kingdom must be a JSON object with \"size\" and \"cells\"")
    out = {k: v for k, v in obj.items() if k not in READER_KEYS}
    cells = out.get("cells")
    if isinstance(cells, list):
        out["cells"] = [
            [({k: v for k, v in cell.items() if k not in CELL_READER_KEYS}
              if isinstance(cell, dict) else cell) for cell in row] if isinstance(row, list) else row
            for row in cells
        ]
    return out


def score_kingdom(kingdom: dict, rules: str | None = None, bonuses=()) -> dict:
    """Scored JSON of a kingdom; ``BadRequest`` with the engine's message when it is wrong."""
    try:
        return service.score_grid(kingdom_of(kingdom), rules=rules, bonuses=bonuses)
    except ValueError as exc:
        raise BadRequest(f"this kingdom cannot be scored: {exc}")
    except (TypeError, KeyError, AttributeError, IndexError) as exc:
        raise BadRequest(f"this kingdom is not valid Kingdom JSON ({type(exc).__name__}: {exc})")


def json_body() -> dict:
    data = request.get_json(silent=True)
    if data is None:
        if not request.get_data(cache=True):
            raise BadRequest("send Kingdom JSON in the request body (Content-Type: application/json)")
        raise BadRequest("the request body is not valid JSON: check quotes, commas and brackets")
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object (Kingdom JSON)")
    return data


@bp.post("/score-grid")
def score_grid():
    data = json_body()
    rules = request.args.get("rules") or data.get("rules") or "kingdomino"
    bonuses = request.args.getlist("bonus") or data.get("bonuses") or []
    if not isinstance(bonuses, list):
        raise BadRequest("\"bonuses\" must be a list of bonus names")
    rules, bonuses = check_choice(rules, bonuses)
    return jsonify(score_kingdom(data, rules=rules, bonuses=bonuses))


# ---------------------------------------------------------------- photos


def read_photo(upload, rules: str, bonuses, player: str | None = None,
               claimed: int | None = None) -> tuple[str, dict]:
    """Check, read, score and store an uploaded photo. Returns ``(id, scored JSON)``.

    Refusals (``BadRequest`` 400 for a bad file, 422 for a photo with no readable kingdom)
    happen before anything heavy: the header is checked before any pixel is decoded.
    """
    if upload is None:
        raise BadRequest("no photo: send the image in a multipart form field named \"photo\"")
    data = upload.read()
    try:
        check_image(data, current_app.config["MAX_PIXELS"])
        small, (width, height) = shrink_photo(data)
    except ImageRejected as exc:
        raise BadRequest(str(exc))
    except ValueError as exc:  # undecodable after all (vision.PhotoError is a ValueError)
        raise BadRequest(f"the image cannot be read: {exc}")
    # the file name is a label only (base name, printable); never a path we open
    name = (upload.filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()[-200:] or "photo"
    reader = current_app.config["READER"]
    store = get_store()
    try:
        obj = reader(data, rules, bonuses)
    except ValueError as exc:
        message = str(exc) or "no kingdom could be read in this photo"
        store.add_reading(rules=rules, bonuses=bonuses, error=message, source=name,
                          content_hash=content_hash(data), player=player, claimed=claimed,
                          photo=small)
        raise UnprocessableEntity(message)
    machine = dict(obj)
    machine["photo_size"] = [width, height]
    rid = store.add_reading(rules=rules, bonuses=bonuses, machine=machine, source=name,
                            content_hash=content_hash(data), player=player, claimed=claimed,
                            photo=small)
    return rid, obj


def form_choice(form) -> tuple[str, list[str]]:
    return check_choice(form.get("rules"), form.getlist("bonus"))


def parse_claimed(value) -> int | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        claimed = int(str(value).strip())
    except ValueError:
        raise BadRequest(f"the claimed score must be a whole number, not {str(value)[:20]!r}")
    if not 0 <= claimed <= 10000:
        raise BadRequest("the claimed score must be between 0 and 10000")
    return claimed


def parse_player(value) -> str | None:
    value = (value or "").strip()
    return value[:80] or None


@bp.post("/score")
def score():
    if "photo" not in request.files:
        raise BadRequest("no photo: send the image in a multipart form field named \"photo\"")
    rules, bonuses = form_choice(request.form)
    rid, obj = read_photo(request.files["photo"], rules, bonuses,
                          player=parse_player(request.form.get("player")),
                          claimed=parse_claimed(request.form.get("claimed")))
    source = get_store().get(rid)["source"]
    out = {"source": source, **obj}  # as `kingdomino score --json`
    out["id"] = rid
    out["permalink"] = url_for("pages.result", rid=rid, _external=True)
    return jsonify(out)


# ---------------------------------------------------------------- stored readings


def load(rid: str) -> dict:
    rec = get_store().get(rid)
    if rec is None:
        raise NotFound(f"no result with id {rid!r}: check the link")
    return rec


def current(rec: dict) -> tuple[dict | None, list[str]]:
    """The kingdom as it stands now (latest correction, else the machine's), and its bonuses."""
    if rec.get("corrected"):
        k = dict(rec["corrected"])
        return kingdom_of(k), list(rec["corrected"].get("bonuses", rec["bonuses"]))
    if rec.get("machine"):
        return kingdom_of(rec["machine"]), list(rec["bonuses"])
    return None, list(rec["bonuses"])


def view(rec: dict) -> dict:
    """Everything the result page shows, as one JSON object."""
    kingdom, bonuses = current(rec)
    machine = rec.get("machine") or None
    corrections = [c["kingdom"] for c in get_store().corrections(rec["id"])]
    out = {"id": rec["id"], "rules": rec["rules"], "bonuses": bonuses, "player": rec["player"],
           "claimed": rec["claimed"], "source": rec["source"], "error": rec["error"],
           "created": rec["created"], "corrections": len(corrections),
           # the states Undo goes back to, so it still works after a reload (result.js)
           "history": undo_stack(machine, rec["rules"], rec["bonuses"], corrections),
           "kingdom": None, "score": None, "machine": None, "review": [], "grid": None,
           "photo": url_for("pages.photo", rid=rec["id"]) if rec["has_photo"] else None,
           "photo_size": None, "dispute": None}
    if machine:
        out["machine"] = {"cells": machine.get("cells"), "score": machine.get("score")}
        out["review"] = machine.get("review") or []
        size = machine.get("photo_size")
        if size and max(size) > 0:
            factor = min(1.0, 1600 / max(size))
            out["photo_size"] = [round(size[0] * factor), round(size[1] * factor)]
            out["grid"] = scale_points(grid_points(machine), factor)
    if kingdom is not None:
        try:
            scored = score_kingdom(kingdom, rules=kingdom.get("rules") or rec["rules"],
                                   bonuses=bonuses)
        except BadRequest as exc:  # stored before a rule changed: show it, let a person fix it
            out["kingdom"] = kingdom
            out["error"] = exc.description
            return out
        out["kingdom"] = kingdom_of(scored)
        out["score"] = scored["score"]
        out["rules"] = scored.get("rules", out["rules"])
        out["dispute"] = dispute(rec["claimed"], scored["score"], machine, bool(rec["corrected"]))
    return out


@bp.get("/readings/<rid>")
def reading(rid):
    return jsonify(view(load(rid)))


@bp.post("/readings/<rid>/kingdom")
def correct(rid):
    """Store a person's corrected kingdom (the machine's reading is kept) and re-score it."""
    rec = load(rid)
    data = json_body()
    rules = data.get("rules") or rec["rules"]
    bonuses = data.get("bonuses", rec["bonuses"])
    if not isinstance(bonuses, list):
        raise BadRequest("\"bonuses\" must be a list of bonus names")
    rules, bonuses = check_choice(rules, bonuses)
    kingdom = kingdom_of(data)
    kingdom["rules"] = rules
    score_kingdom(kingdom, rules=rules, bonuses=bonuses)  # refuse what cannot be scored
    get_store().add_correction(rid, {**kingdom, "bonuses": bonuses})
    return jsonify(view(load(rid)))


@bp.post("/readings")
def create():
    """Store a kingdom built by hand (no photo); returns its id and permalink."""
    data = json_body()
    rules, bonuses = check_choice(data.get("rules"), data.get("bonuses") or [])
    kingdom = kingdom_of(data)
    kingdom["rules"] = rules
    score_kingdom(kingdom, rules=rules, bonuses=bonuses)
    store = get_store()
    rid = store.add_reading(rules=rules, bonuses=bonuses, source="built by hand",
                            player=parse_player(data.get("player")),
                            claimed=parse_claimed(data.get("claimed")))
    store.add_correction(rid, {**kingdom, "bonuses": bonuses})
    return jsonify(id=rid, permalink=url_for("pages.result", rid=rid, _external=True)), 201


def export_csv(rid: str) -> str:
    v = view(load(rid))
    if v["score"] is None:
        raise NotFound("this result has no kingdom to export (the photo could not be read)")
    return breakdown_csv(rid, v["rules"], v["score"])
