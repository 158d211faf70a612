"""What corrections taught, in the web app (``kingdomino.learning``; docs/webapp.md, "Learning
from corrections").

- Reading: every photo this server reads into its store (an upload, a whole-table photo, a
  re-read inside an outline given by hand, a web batch) is read with the store's examples
  (``read_examples``), loaded again when they change: no restart. ``LEARNING`` (app config,
  default True; ``kingdomino serve --no-learning`` sets it False) turns it off.
- Learning: a correction saved through ``POST /api/readings/<id>/kingdom`` (the result page's
  editor and its "Looks right" button, which posts the kingdom unchanged: a confirmation)
  teaches (``learn_from``); the answer's ``learned`` says what, or why nothing. ``LEARNER``
  (app config): ``callable(image, corners, rows, cols, cells) -> examples`` in place of
  ``vision.read.learned.examples_from_photo`` (tests swap in a fake one).
- Seeing and undoing: the page ``/learned`` lists the examples (thumbnail, label, from which
  reading, when) with delete one and delete all (forms with the CSRF token);
  ``GET /api/learned``, ``POST /api/learned/forget`` (``{"id": N}`` or ``{"all": true}``) and
  ``POST /api/readings/<id>/learned/forget`` (``{"correction": N}``: what one correction or
  confirmation of that reading taught) do the same for scripts and the result page.
"""
from __future__ import annotations

import time

from flask import (Blueprint, current_app, jsonify, redirect, render_template, request,
                   url_for)
from werkzeug.exceptions import BadRequest, NotFound

from kingdomino import learning

from . import get_store, stored_jpeg

bp = Blueprint("learned", __name__)

PAGE_SIZE = 200  # examples listed on the page, the newest (the count says how many in all)
MAX_LIST = 5000  # examples GET /api/learned gives at most


def learning_on() -> bool:
    return bool(current_app.config.get("LEARNING", True))


def read_examples(store):
    """The examples a photo read now into ``store`` is read with (None: none, or learning
    off). Learning never stops a photo from being read: a fault here is logged and the photo
    is read without."""
    if not learning_on():
        return None
    try:
        return learning.examples_of(store)
    except Exception:
        current_app.logger.exception("loading the learned examples failed; reading without")
        return None


def learn_from(rec: dict, saved: dict, kingdom: dict) -> dict:
    """What a stored correction teaches (``kingdomino.learning.after_correction``); the
    correction is already stored, so a fault here is said in the answer, never a 500."""
    try:
        return learning.after_correction(get_store(), rec, saved, kingdom, enabled=learning_on(),
                                         cutter=current_app.config.get("LEARNER"))
    except Exception:
        current_app.logger.exception("learning from a correction of %s failed", rec.get("id"))
        return {"kind": "correction", "added": 0, "removed": 0,
                "why": "learning from this correction failed (the fault was logged); the "
                       "correction itself is saved"}


def _listed(row: dict) -> dict:
    """One example as the page and the API show it."""
    return {"id": row["id"], "terrain": row["terrain"], "crowns": row["crowns"],
            "square": [row["row"], row["col"]], "reading_id": row["reading_id"],
            "source": row["source"], "kind": row["kind"], "correction": row["correction_id"],
            "scope": row["scope"], "created": row["created"],
            "when": time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created"])),
            "iso": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(row["created"])),
            "thumbnail": url_for("learned.thumbnail", eid=row["id"])
            if row["has_thumbnail"] else None}


def _example_id(value, what: str = "the learned square's id") -> int:
    """An id (an example's, a correction's) from a form or JSON: a whole number, else 400."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 18:
        value = int(value.strip())
    if not isinstance(value, int) or not 0 < value < 2**63:
        raise BadRequest(f"give {what}: a whole number, as the list shows it")
    return value


@bp.get("/learned")
def page():
    store = get_store()
    rows = [_listed(r) for r in store.examples(limit=PAGE_SIZE)]
    forgot = request.args.get("forgot", "")
    return render_template("learned.html", examples=rows, total=store.example_count(),
                           learning=learning_on(),
                           forgot=int(forgot) if forgot.isdigit() and len(forgot) < 10 else None)


@bp.get("/learned/<int:eid>.jpg")
def thumbnail(eid):
    return stored_jpeg(get_store().example_thumbnail(eid),
                       "no learned square with this id (it was deleted?)")


@bp.post("/learned/forget")
def forget_form():
    """The page's delete button: one example, then the list again."""
    eid = _example_id(request.form.get("id"))
    removed = int(get_store().forget_example(eid))  # already gone (a second click): 0
    return redirect(url_for("learned.page", forgot=removed), code=303)


@bp.post("/learned/forget-all")
def forget_all_form():
    """The page's delete-all form: every example, once its box is ticked."""
    if request.form.get("confirm") != "yes":
        raise BadRequest("tick the box to confirm that every learned square is to be deleted")
    removed = get_store().forget_examples()
    return redirect(url_for("learned.page", forgot=removed), code=303)


@bp.get("/api/learned")
def api_list():
    store = get_store()
    scope = request.args.get("scope")
    try:
        limit = min(MAX_LIST, max(0, int(request.args.get("limit", MAX_LIST))))
    except ValueError:
        raise BadRequest("limit must be a whole number of examples, e.g. 100")
    rows = store.examples(scope=scope, limit=limit)
    return jsonify(examples=[_listed(r) for r in rows], total=store.example_count(),
                   learning=learning_on())


@bp.post("/api/learned/forget")
def api_forget():
    from . import service

    data = service.json_body('{"id": N} or {"all": true}')
    store = get_store()
    if data.get("all") is True:
        return jsonify(removed=store.forget_examples())
    eid = _example_id(data.get("id"))
    if not store.forget_example(eid):
        raise NotFound(f"no learned square with id {eid}: it was deleted already, or never was")
    return jsonify(removed=1)


@bp.post("/api/readings/<rid>/learned/forget")
def api_forget_correction(rid):
    """Take back what one correction or confirmation of this reading taught (the result
    page's "Take back" after "Looks right")."""
    from . import service

    service.load(rid)  # 404 for an unknown reading
    correction = _example_id(service.json_body('{"correction": N}').get("correction"),
                             "the correction's number (the answer's learned.correction)")
    return jsonify(removed=get_store().forget_correction_examples(correction, reading_id=rid))
