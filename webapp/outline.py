"""The kingdom's outline given by hand, in the web app (issue 16, point 2).

- ``POST /api/score`` form fields ``corners`` (``X1,Y1,...,X4,Y4``, the photo's stored pixels)
  and ``size`` (5 or 7): ``form_outline`` checks them (400 when wrong), ``fits_photo`` checks the
  outline against the photo's size before anything is read.
- ``POST /api/readings/<id>/outline`` with JSON ``{"corners": [[x, y] x 4] or "X1,Y1,...",
  "size": 5 | 7 | null}``: the result's stored photo read again inside that outline, given in
  the pixels of the photo the result page shows (``/r/<id>/photo.jpg``), stored as the result's
  new machine reading. Corrections made on the previous machine reading are kept in the store
  but no longer applied (the squares are elsewhere now): the answer's ``set_aside`` says how
  many. CSRF as for the other state-changing endpoints (the ``X-CSRF-Token`` header).

``READ_OUTLINE`` (app config): ``callable(photo_bytes, corners, size, rules, bonuses) -> dict``
(the contract's scored JSON); tests swap in a fake one.
"""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import BadRequest, Conflict, ServiceUnavailable, UnprocessableEntity

from engine.kingdom import SIZES
from vision.photo.files import PhotoBusy

from . import get_store, security

bp = Blueprint("outline", __name__)

OUTLINE_JSON = 'JSON {"corners": [[x, y], [x, y], [x, y], [x, y]], "size": 5}'
# a corner further than this from the photo is refused anyway (check_outline): bigger numbers
# are refused as numbers, before any arithmetic (a 400-digit integer overflows a float)
MAX_COORDINATE = 1e9


def parse_size(value) -> int | None:
    """``size`` of a form or JSON body: None (absent: decided from the photo), 5 or 7."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "auto")):
        return None
    try:
        size = int(str(value).strip())
    except ValueError:
        size = None
    if size not in SIZES or isinstance(value, bool) or (isinstance(value, float)
                                                          and value != size):
        raise BadRequest(f"size must be 5 or 7 (squares on a side of the kingdom), not "
                         f"{str(value)[:20]!r}; leave it out to let the reader decide")
    return size


def parse_outline(value):
    """Corners as text ``X1,Y1,...`` or a list of four ``[x, y]``; None when absent;
    ``BadRequest`` with the reason when they cannot be an outline."""
    from vision.find.by_hand import OutlineError, parse_corners

    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, list):
        flat = []
        for p in value:
            flat.extend(p if isinstance(p, list) else [p])
        if len(value) != 4 or len(flat) != 8 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
            raise BadRequest("corners must be four [x, y] pairs of numbers (the kingdom's outer "
                             "corners in the photo's pixels)")
        for v in flat:  # compared as they are: int and float compare exactly, at any size
            if not -MAX_COORDINATE <= v <= MAX_COORDINATE:
                raise BadRequest(f"corners: {str(v)[:20]}... is not a number of pixels: each "
                                 "corner is a finite number of pixels inside the photo")
        value = ",".join(repr(float(v)) for v in flat)
    if not isinstance(value, str):
        raise BadRequest("corners must be the text X1,Y1,X2,Y2,X3,Y3,X4,Y4 or four [x, y] pairs")
    try:
        return parse_corners(value)
    except OutlineError as exc:
        raise BadRequest(f"corners: {exc}")


def form_outline(form) -> tuple:
    """``(corners or None, size or None)`` from ``/api/score``'s form fields."""
    return parse_outline(form.get("corners")), parse_size(form.get("size"))


def fits_photo(data: bytes, corners) -> None:
    """``BadRequest`` when the outline lies far outside the photo (its stored pixels)."""
    from vision.photo import files as photo_io
    from vision.find.by_hand import OutlineError, check_outline

    if corners is None:
        return
    try:
        info = photo_io.check_photo(data)
    except ValueError:
        return  # the photo's own checks say what is wrong with it
    try:
        check_outline(corners, (info.height, info.width))
    except OutlineError as exc:
        raise BadRequest(f"corners: {exc}")


def reader_options(corners, size) -> dict:
    """Keyword arguments for the app's ``READER`` (only those given: a reader written before
    the outline existed still works without them)."""
    out = {}
    if corners is not None:
        out["corners"] = corners
    if size is not None:
        out["size"] = size
    return out


def default_read_outline(photo: bytes, corners, size, rules: str, bonuses=()) -> dict:
    from .reading import default_reader

    return default_reader(photo, rules, bonuses, corners=corners, size=size)


@bp.post("/api/readings/<rid>/outline")
def reread(rid):
    from vision.photo import files as photo_io

    from . import service

    rec = service.load(rid)
    # the app's JSON guard: 400 for a body nested too deeply (not a RecursionError), or no object
    data = service.json_body(OUTLINE_JSON)
    corners = parse_outline(data.get("corners"))
    if corners is None:
        raise BadRequest("corners are missing: give the kingdom's four outer corners")
    size = parse_size(data.get("size"))
    store = get_store()
    photo = store.photo(rid)
    if not photo:
        raise Conflict("this result has no stored photo to read again")
    fits_photo(photo, corners)
    read = current_app.config.get("READ_OUTLINE") or default_read_outline
    from kingdomino.service import reading_with

    from . import learned

    try:
        # its pixels count in the budget while it is read, with what corrections taught
        with security.hold_photo(photo), reading_with(learned.read_examples(store)):
            obj = read(photo, corners, size, rec["rules"], rec["bonuses"])
    except PhotoBusy as exc:
        raise ServiceUnavailable(str(exc))
    except ValueError as exc:
        raise UnprocessableEntity(str(exc) or "the kingdom inside this outline cannot be read")
    except Exception:  # a fault of the reader on this photo: logged, said in words
        current_app.logger.exception("reading result %s inside an outline failed", rid)
        raise UnprocessableEntity("the kingdom inside this outline could not be read: the reader "
                                  "failed on it (the fault was logged); try the outline again")
    info = photo_io.check_photo(photo)
    machine = dict(obj)
    machine["photo_size"] = [info.width, info.height]  # corners are in the stored copy's pixels
    taught = store.example_count(rid)  # cut with the old outline: forgotten with it
    set_aside = store.replace_machine(rid, machine)
    out = service.view(service.load(rid))
    out["set_aside"] = set_aside
    # the new reading teaches once it is corrected or confirmed (POST .../kingdom)
    out["learned"] = {"kind": "reread", "added": 0, "removed": taught,
                      "why": "a new outline: its reading teaches once it is corrected or "
                             "confirmed"}
    return jsonify(out)
