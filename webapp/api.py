"""JSON API: the contract's two endpoints (``/api/score``, ``/api/score-grid``) and the ones the
result page uses (a reading's data, corrections, kingdoms built by hand, rule sets).

Routes only: what they do is in ``webapp.service`` (shared with the pages and the batch page).
Every error is a 4xx ``{"error": "..."}`` that says what is wrong and how to fix it.
"""
from __future__ import annotations

from flask import Blueprint, jsonify, request, url_for
from werkzeug.exceptions import BadRequest

from . import get_store, outline, service, table

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.get("/rules")
def rules():
    return jsonify(rules=service.all_rules_meta())


@bp.post("/score-grid")
def score_grid():
    data = service.json_body()
    rules = request.args.get("rules") or data.get("rules") or "kingdomino"
    bonuses = request.args.getlist("bonus") or data.get("bonuses") or []
    rules, bonuses = service.check_choice(rules, bonuses)
    return jsonify(service.score_kingdom(data, rules=rules, bonuses=bonuses))


@bp.post("/score")
def score():
    if "photo" not in request.files:
        raise BadRequest("no photo: send the image in a multipart form field named \"photo\"")
    if table.wants_all(request.form):  # whole-table photo: every kingdom (webapp.table)
        return table.api_score_all()
    rules, bonuses = service.form_choice(request.form)
    corners, size = outline.form_outline(request.form)
    rid, obj = service.read_photo(request.files["photo"], rules, bonuses,
                                  player=service.parse_player(request.form.get("player")),
                                  claimed=service.parse_claimed(request.form.get("claimed")),
                                  corners=corners, size=size)
    source = get_store().get(rid)["source"]
    out = {"source": source, **obj}  # as `kingdomino score --json`
    out["id"] = rid
    out["permalink"] = url_for("pages.result", rid=rid, _external=True)
    return jsonify(out)


@bp.get("/readings/<rid>")
def reading(rid):
    return jsonify(service.view(service.load(rid)))


@bp.post("/readings/<rid>/kingdom")
def correct(rid):
    """Store a person's corrected kingdom (the machine's reading is kept) and re-score it."""
    service.load(rid)  # 404 before looking at the body
    taught = service.correct(rid, service.json_body())
    # the new state and the newest undo steps: an answer's size does not grow with the history
    out = service.view(service.load(rid), history=service.HISTORY_ANSWER)
    out["learned"] = taught  # what it taught the reader (webapp.learned)
    return jsonify(out)


@bp.post("/readings")
def create():
    """Store a kingdom built by hand (no photo); returns its id and permalink."""
    rid = service.create(service.json_body())
    return jsonify(id=rid, permalink=url_for("pages.result", rid=rid, _external=True)), 201
