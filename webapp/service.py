"""The web app's service layer: what the pages, the API and the batch page do with rule sets,
kingdoms, photos and stored readings. No routes here (those are in ``api``, ``pages`` and
``batch``); every refusal is a werkzeug ``HTTPException`` (400, 404, 422) whose description says
what is wrong and how to fix it.

Every value a client sends is checked here, type and range, before it is scored or stored
(``check_kingdom``, ``check_choice``, ``parse_player``, ``parse_claimed``): a wrong type is a 400,
never a 500, and nothing that cannot be shown again is ever stored.
"""
from __future__ import annotations

import contextlib

from flask import current_app, request, url_for
from werkzeug.exceptions import BadRequest, NotFound, ServiceUnavailable, UnprocessableEntity

import engine
from engine.kingdom import CAVEMEN, LETTER_OF, RESOURCES, SIZES, TOKEN_OF, WARRIORS
from kingdomino import learning, service
from kingdomino.store import content_hash
from vision.photo import files as photo_io
from vision.photo import scale as photo_scale
from vision.photo.files import PhotoBusy

from . import get_store, learned, outline
from .reading import (breakdown_csv, copy_scale, dispute, grid_points, scale_points,
                      shrink_photo, state_key, undo_states)
from .security import ImageRejected, check_image, hold_photo, pixel_budget

# keys a reading carries that are not part of the kingdom itself
READER_KEYS = ("review", "corners", "homography", "score", "source", "id", "permalink", "rows",
               "cols", "warnings", "photo_size", "error", "bonuses")
CELL_READER_KEYS = ("confidence",)

# Bounds on what a client may send (all far above any real kingdom).
MAX_CROWNS = 3            # printed crowns on a square, in every rule set (volcano craters: 1..3)
MAX_SIDE = max(SIZES)     # squares per row and rows per kingdom (7x7 = Mighty Duel, Neolithic)
MAX_NAME = 80             # a player's name
MAX_TEXT = 100            # any other text value (terrain, rule set, bonus, piece names)
MAX_NUMBER = 10_000       # any other number (building points, coins, knights...)
MAX_ITEMS = 50            # items of any list or object inside a kingdom
MAX_DEPTH = 6             # nesting of lists and objects inside a kingdom
MAX_BONUSES = 10
MAX_CLAIMED = 10_000

# Undo steps a reading's JSON carries, the newest (``view``): every correction stays stored, and
# a reload after undoing these offers the ones before them
HISTORY_SHOWN = 50        # the result page and GET /api/readings/<id>
HISTORY_ANSWER = 10       # the answer to a correction (the page keeps its own; see result.js)


# ---------------------------------------------------------------- rule sets


def rule_names() -> list[str]:
    return list(engine.rule_names())


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_choice(rules, bonuses) -> tuple[str, list[str]]:
    """Validated ``(rules, bonuses)``; ``BadRequest`` naming the choices when unknown."""
    names = rule_names()
    if rules is None or rules == "":
        rules = "kingdomino"
    if not isinstance(rules, str):
        raise BadRequest(f"\"rules\" must be the name of a rule set (text), one of {', '.join(names)}")
    rules = rules.strip()
    if rules not in names:
        raise BadRequest(f"unknown rule set {rules[:MAX_TEXT]!r}: choose one of {', '.join(names)}")
    allowed = list(engine.bonus_names(rules))
    if not isinstance(bonuses, (list, tuple)):
        raise BadRequest("\"bonuses\" must be a list of bonus names, e.g. [\"harmony\"]")
    if len(bonuses) > MAX_BONUSES:
        raise BadRequest(f"at most {MAX_BONUSES} bonuses: choose from "
                         f"{', '.join(allowed) or '(this rule set has none)'}")
    for b in bonuses:
        if not isinstance(b, str):
            raise BadRequest(f"each bonus must be a name (text), not {type(b).__name__}: choose "
                             f"from {', '.join(allowed) or '(this rule set has none)'}")
    bonuses = [b.strip() for b in bonuses if b.strip()]
    for b in bonuses:
        if b not in allowed:
            raise BadRequest(f"unknown bonus {b[:MAX_TEXT]!r} for rules {rules!r}: choose from "
                             f"{', '.join(allowed) or '(this rule set has none)'}")
    return rules, sorted(set(bonuses))


def pieces_of(name: str) -> dict:
    """Which extra pieces the editor offers for a rule set: the engine says (docs/engine.md)."""
    rules = engine.get_rules(name)
    return {"cell": list(rules.cell_pieces), "kingdom": list(rules.kingdom_pieces)}


# the pieces chosen by name, and the engine's names (a warrior: its name and power)
PIECE_VALUES = {"resource": list(RESOURCES), "caveman": list(CAVEMEN),
                "warrior": [[name, power] for name, power in WARRIORS.items()],
                "totems": list(RESOURCES)}


def rules_meta(name: str) -> dict:
    """What the editor needs about a rule set: terrains, bonuses, extra pieces."""
    rules = engine.get_rules(name)
    start = rules.start_terrain
    meta = {"name": name, "bonuses": list(engine.bonus_names(name))}
    meta["terrains"] = [t for t in rules.terrains if t not in (start, "empty")] + [start, "empty"]
    meta["start"] = start
    meta["title"] = rules.title or name
    meta["pieces"] = pieces_of(name)
    # how the editor offers the pieces it has no form of its own for (the expansions')
    meta["piece_options"] = dict(getattr(rules, "piece_options", {}) or {})
    # the game's words the editor offers, as the engine knows them: each terrain's key (the
    # text grid's letter), the names a piece is chosen from, The Court's token per terrain
    meta["letters"] = {t: LETTER_OF[t] for t in meta["terrains"] if t in LETTER_OF}
    pieces = (*rules.cell_pieces, *rules.kingdom_pieces)
    meta["piece_values"] = {piece: values for piece, values in PIECE_VALUES.items()
                            if piece in pieces and piece not in meta["piece_options"]}
    if "resource" in meta["piece_options"]:
        meta["tokens"] = dict(TOKEN_OF)
    return meta


def all_rules_meta() -> list[dict]:
    return [rules_meta(n) for n in rule_names()]


# ---------------------------------------------------------------- checking a kingdom


def _check_value(value, where: str, depth: int = 0) -> None:
    """Any value inside a kingdom: bounded text, numbers, lists and objects."""
    if depth > MAX_DEPTH:
        raise BadRequest(f"{where}: nested too deeply; see docs/engine.md for Kingdom JSON")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) > MAX_NUMBER:
            raise BadRequest(f"{where}: {str(value)[:12]}... is out of range: numbers in a "
                             f"kingdom are between -{MAX_NUMBER} and {MAX_NUMBER}")
        return
    if isinstance(value, float):
        if not abs(value) <= MAX_NUMBER:  # also NaN and infinities
            raise BadRequest(f"{where}: a number out of range: numbers in a kingdom are between "
                             f"-{MAX_NUMBER} and {MAX_NUMBER}")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise BadRequest(f"{where}: a text of {len(value)} characters; at most {MAX_TEXT}")
        return
    if isinstance(value, (list, dict)):
        if len(value) > MAX_ITEMS:
            raise BadRequest(f"{where}: {len(value)} items; at most {MAX_ITEMS}")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and len(key) > MAX_TEXT:
                raise BadRequest(f"{where}: a field name of {len(key)} characters; at most "
                                 f"{MAX_TEXT}")
            _check_value(item, f"{where}, {str(key)[:MAX_TEXT]}", depth + 1)
        return
    raise BadRequest(f"{where}: unexpected value of type {type(value).__name__}")


def _check_cell(cell, r: int, c: int) -> None:
    where = f"square (row {r}, col {c})"
    if not isinstance(cell, dict):
        return  # the engine names the square and says what a square looks like
    terrain = cell.get("terrain")
    if terrain is not None and (not isinstance(terrain, str) or len(terrain) > MAX_TEXT):
        raise BadRequest(f"{where}: \"terrain\" must be a terrain name such as \"field\"")
    crowns = cell.get("crowns", 0)
    if not _is_int(crowns) or not 0 <= crowns <= MAX_CROWNS:
        shown = str(crowns)[:12] if _is_int(crowns) else repr(crowns)[:20]
        raise BadRequest(f"{where}: \"crowns\" must be a whole number from 0 to {MAX_CROWNS}, "
                         f"not {shown}")
    for key, value in cell.items():
        _check_value(value, f"{where}, {str(key)[:MAX_TEXT]}", 1)


def check_kingdom(obj) -> None:
    """Check the types and ranges of Kingdom JSON before it is scored or stored.

    The engine then checks the meaning (terrains of the rule set, pieces, sizes); this makes
    sure nothing it is handed is huge, deeply nested or of a type it does not expect.
    """
    if not isinstance(obj, dict):
        raise BadRequest("the kingdom must be a JSON object with \"size\" and \"cells\"")
    if len(obj) > MAX_ITEMS:
        raise BadRequest(f"the kingdom has {len(obj)} fields; at most {MAX_ITEMS}")
    size = obj.get("size")
    if size is not None and (not _is_int(size) or size not in SIZES):
        raise BadRequest(f"\"size\" must be 5 or 7 (a number), not {repr(size)[:20]}")
    cells = obj.get("cells")
    if isinstance(cells, list):
        if len(cells) > MAX_SIDE:
            raise BadRequest(f"\"cells\" has {len(cells)} rows; a kingdom has at most {MAX_SIDE}")
        for r, row in enumerate(cells):
            if not isinstance(row, list):
                raise BadRequest(f"\"cells\" row {r} must be a list of squares")
            if len(row) > MAX_SIDE:
                raise BadRequest(f"\"cells\" row {r} has {len(row)} squares; a kingdom has at "
                                 f"most {MAX_SIDE} per row")
            for c, cell in enumerate(row):
                _check_cell(cell, r, c)
    for key, value in obj.items():
        if key in ("cells", "size"):
            continue
        if key == "rules" and value is not None and not isinstance(value, str):
            raise BadRequest("\"rules\" must be the name of a rule set (text), one of "
                             f"{', '.join(rule_names())}")
        _check_value(value, f"field {str(key)[:MAX_TEXT]!r}", 1)


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
    obj = kingdom_of(kingdom)
    check_kingdom(obj)
    try:
        return service.score_grid(obj, rules=rules, bonuses=bonuses)
    except ValueError as exc:
        raise BadRequest(f"this kingdom cannot be scored: {exc}")
    except (TypeError, KeyError, AttributeError, IndexError) as exc:
        raise BadRequest(f"this kingdom is not valid Kingdom JSON ({type(exc).__name__}: {exc})")


def json_body(what: str = "Kingdom JSON") -> dict:
    """The request's JSON object; ``BadRequest`` saying what is wrong with it (``what``: the
    object the endpoint expects, named in the messages)."""
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        raise BadRequest("the request body is not valid JSON here: it is nested too deeply")
    if data is None:
        if not request.get_data(cache=True):
            raise BadRequest(f"send {what} in the request body (Content-Type: application/json)")
        raise BadRequest("the request body is not valid JSON: check quotes, commas and brackets")
    if not isinstance(data, dict):
        raise BadRequest(f"the request body must be a JSON object: send {what}")
    return data


def parse_claimed(value) -> int | None:
    """A claimed score: a whole number (or its text) from 0 to 10000, or nothing."""
    if value is None or isinstance(value, str) and value.strip() == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise BadRequest("the claimed score must be a whole number, e.g. 42")
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 6 or not text.isascii() or not text.lstrip("-").isdigit():
            raise BadRequest(f"the claimed score must be a whole number, not {text[:20]!r}")
        value = int(text)
    if not 0 <= value <= MAX_CLAIMED:
        raise BadRequest(f"the claimed score must be between 0 and {MAX_CLAIMED}")
    return value


def clean_name(text: str) -> str:
    """A name as it may be stored and shown: printable characters only (no NUL, no control or
    format characters such as U+202E, which reverses the text after it), without outer spaces.
    The one cleaning of players' names: ``player=`` and each name of ``players=``."""
    return "".join(ch for ch in text if ch.isprintable()).strip()


def parse_player(value) -> str | None:
    """A player's name: text of at most 80 characters, or nothing."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest("the player must be a name (text), e.g. \"Ada\"")
    value = clean_name(value)
    if len(value) > MAX_NAME:
        raise BadRequest(f"the player's name is {len(value)} characters long; at most {MAX_NAME}")
    return value or None


# ---------------------------------------------------------------- photos


def decode_upload(upload, share: contextlib.ExitStack | None = None
                  ) -> tuple[bytes, bytes, tuple[int, int]]:
    """An uploaded photo checked and decoded: ``(its bytes, a small JPEG copy, (width,
    height))``. ``BadRequest`` (400) for no file or one that is not a photo this server reads,
    ``ServiceUnavailable`` (503) when every decoding turn is taken. ``share``: the photo is
    decoded as its reading will decode it, and that decode is kept for the reading until the
    stack closes (``vision.photo.files.decode_once``): one decode an upload, not two."""
    if upload is None:
        raise BadRequest("no photo: send the image in a multipart form field named \"photo\"")
    data = upload.read()
    try:
        check_image(data, current_app.config["MAX_PIXELS"])
        if share is not None:
            share.enter_context(photo_io.decode_once(data, photo_scale.reading_reduction(data)))
        with hold_photo(data):  # its pixels count in the budget (held on inside keep())
            small, size = shrink_photo(data)
    except PhotoBusy as exc:  # every decoding turn taken: the photo is fine, the server busy
        raise ServiceUnavailable(str(exc))
    except ImageRejected as exc:
        raise BadRequest(str(exc))
    except ValueError as exc:  # undecodable after all (vision.PhotoError is a ValueError)
        raise BadRequest(f"the image cannot be read: {exc}")
    except MemoryError:
        raise BadRequest("the image is too large to decode: send a smaller photo")
    except Exception:
        current_app.logger.exception("decoding an upload failed")
        raise BadRequest("the image cannot be decoded: it is damaged or in a form this server "
                         "does not read; send it again as a JPEG or PNG")
    return data, small, size


def upload_name(upload, longest: int) -> str:
    """The upload's file name as a label only (base name, printable, at most the last
    ``longest`` characters; "photo" when none is left): never a path we open."""
    name = (upload.filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(ch for ch in name if ch.isprintable()).strip()[-longest:] or "photo"


def read_photo(upload, rules: str, bonuses, player: str | None = None,
               claimed: int | None = None, corners=None, size=None) -> tuple[str, dict]:
    """Check, read, score and store an uploaded photo. Returns ``(id, scored JSON)``.

    Refusals (``BadRequest`` 400 for a bad file, 422 for a photo with no readable kingdom)
    happen before anything heavy: the header is checked before any pixel is decoded. Whatever
    goes wrong while reading one photo is that photo's error, never a server error.
    """
    # the photo's pixels are held in the budget from its decoding until it is read (security);
    # its one decode serves its copy and its reading (share)
    with pixel_budget().keep(), contextlib.ExitStack() as share:
        return _read_photo(upload, rules, bonuses, player, claimed, corners, size, share)


def _read_photo(upload, rules, bonuses, player, claimed, corners, size, share
                ) -> tuple[str, dict]:
    data, small, (width, height) = decode_upload(upload, share)
    outline.fits_photo(data, corners)  # 400 when the outline given lies outside the photo
    name = upload_name(upload, 200)
    reader = current_app.config["READER"]
    store = get_store()
    try:
        with service.reading_with(learned.read_examples(store)):  # what corrections taught
            obj = reader(data, rules, bonuses, **outline.reader_options(corners, size))
    except PhotoBusy as exc:
        raise ServiceUnavailable(str(exc))
    except Exception as exc:
        if isinstance(exc, ValueError):
            message = str(exc) or "no kingdom could be read in this photo"
        else:  # a fault of the reader on this photo: log it, tell the person in words
            current_app.logger.exception("reading upload %r failed", name)
            message = ("this photo could not be read: the reader failed on it (the fault was "
                       "logged); try another photo, taken from above in even light")
        rid = store.add_reading(rules=rules, bonuses=bonuses, error=message, source=name,
                                content_hash=content_hash(data), player=player,
                                claimed=claimed, photo=small)
        refused = UnprocessableEntity(message)
        refused.reading_id = rid  # the upload page offers the outline by hand on it
        raise refused
    machine = dict(obj)
    machine["photo_size"] = [width, height]
    rid = store.add_reading(rules=rules, bonuses=bonuses, machine=machine, source=name,
                            content_hash=content_hash(data), player=player, claimed=claimed,
                            photo=small)
    return rid, obj


def form_choice(form) -> tuple[str, list[str]]:
    return check_choice(form.get("rules"), form.getlist("bonus"))


# ---------------------------------------------------------------- stored readings


def load(rid: str) -> dict:
    rec = get_store().get(rid)
    if rec is None:
        raise NotFound(f"no result with id {rid[:40]!r}: check the link")
    return rec


def current(rec: dict) -> tuple[dict | None, list[str]]:
    """The kingdom as it stands now (latest correction, else the machine's), and its bonuses."""
    if rec.get("corrected"):
        k = dict(rec["corrected"])
        return kingdom_of(k), list(rec["corrected"].get("bonuses", rec["bonuses"]))
    if rec.get("machine"):
        return kingdom_of(rec["machine"]), list(rec["bonuses"])
    return None, list(rec["bonuses"])


def view(rec: dict, history: int = HISTORY_SHOWN) -> dict:
    """Everything the result page shows, as one JSON object.

    A record that cannot be scored (stored before a rule or a check changed) is shown with its
    error, so a person can fix it; it never makes the page fail. ``history``: how many undo
    steps it carries at most (the newest); ``history_total`` says how many there are, and
    ``history_truncated`` whether some were left out. Its size and its work do not grow with
    the number of corrections.
    """
    try:
        kingdom, bonuses = current(rec)
    except (BadRequest, TypeError, ValueError, AttributeError):
        kingdom, bonuses = None, []
    machine = rec.get("machine") if isinstance(rec.get("machine"), dict) else None
    # corrections set aside by a re-read (a new outline) were made on other squares: not undone
    store = get_store()
    steps, total = store.undo_history(rec["id"], history, key=state_key(rec["rules"],
                                                                        rec["bonuses"]))
    out = {"id": rec["id"], "rules": rec["rules"], "bonuses": bonuses, "player": rec["player"],
           "claimed": rec["claimed"], "source": rec["source"], "error": rec["error"],
           "created": rec["created"],
           "corrections": store.correction_count(rec["id"], live_only=True),
           # the states Undo goes back to, so it still works after a reload (result.js)
           "history": undo_states(steps, rec["rules"], rec["bonuses"]),
           "history_total": total, "history_truncated": total > len(steps),
           "kingdom": None, "score": None, "machine": None, "review": [], "grid": None,
           "photo": url_for("pages.photo", rid=rec["id"]) if rec["has_photo"] else None,
           "photo_size": None, "dispute": None}
    if machine:
        out["machine"] = {"cells": machine.get("cells"), "score": machine.get("score"),
                          # how many learned examples it was read with (kingdomino.learning)
                          "learned": learning.count(machine)}
        out["review"] = machine.get("review") or []
        size = machine.get("photo_size")
        try:
            if size and max(size) > 0:
                factor, out["photo_size"] = copy_scale(size)
                out["grid"] = scale_points(grid_points(machine), factor)
        except (TypeError, ValueError, IndexError):
            out["photo_size"] = out["grid"] = None
    if kingdom is not None:
        try:
            if not isinstance(bonuses, list):
                raise BadRequest("the stored bonuses are not a list of names")
            check_kingdom(kingdom)
            scored = score_kingdom(kingdom, rules=kingdom.get("rules") or rec["rules"],
                                   bonuses=bonuses)
        except BadRequest as exc:  # stored before a rule changed: show it, let a person fix it
            out["kingdom"] = kingdom if _storable(kingdom) else None
            out["error"] = exc.description
            return out
        out["kingdom"] = kingdom_of(scored)
        out["score"] = scored["score"]
        out["rules"] = scored.get("rules", out["rules"])
        out["dispute"] = dispute(rec["claimed"], scored["score"], machine, bool(rec["corrected"]))
    return out


def _storable(kingdom: dict) -> bool:
    """True when a kingdom passes the checks (so it can be sent back to a page as it is)."""
    try:
        check_kingdom(kingdom)
    except BadRequest:
        return False
    return True


def correct(rid: str, data: dict) -> dict:
    """Store a person's corrected kingdom for reading ``rid`` after checking it can be scored,
    then learn from it (``webapp.learned``): returns what it taught (the answer's
    ``learned``). The correction is stored first: whatever learning meets, it is kept."""
    rec = load(rid)
    rules = data.get("rules") or rec["rules"]
    bonuses = data.get("bonuses", rec["bonuses"])
    rules, bonuses = check_choice(rules, bonuses)
    kingdom = kingdom_of(data)
    kingdom["rules"] = rules
    score_kingdom(kingdom, rules=rules, bonuses=bonuses)  # refuse what cannot be scored
    saved = get_store().add_correction(rid, {**kingdom, "bonuses": bonuses},
                                       key=state_key(rec["rules"], rec["bonuses"]))
    return learned.learn_from(rec, saved, kingdom)


def create(data: dict) -> str:
    """Store a kingdom built by hand (no photo); returns its id."""
    rules, bonuses = check_choice(data.get("rules"), data.get("bonuses") or [])
    player = parse_player(data.get("player"))
    claimed = parse_claimed(data.get("claimed"))
    kingdom = kingdom_of(data)
    kingdom["rules"] = rules
    score_kingdom(kingdom, rules=rules, bonuses=bonuses)
    store = get_store()
    rid = store.add_reading(rules=rules, bonuses=bonuses, source="built by hand",
                            player=player, claimed=claimed)
    store.add_correction(rid, {**kingdom, "bonuses": bonuses})
    return rid


def export_csv(rid: str) -> str:
    v = view(load(rid))
    if v["score"] is None:
        raise NotFound("this result has no kingdom to export (the photo could not be read)")
    return breakdown_csv(rid, v["rules"], v["score"])
