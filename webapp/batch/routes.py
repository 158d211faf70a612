"""The batch page's routes (blueprint ``batch``, under ``/batch``); the jobs, their uploads and
the queue that reads them are ``webapp.batch.jobs``.

Flow (``batch.js`` drives it; without JavaScript the form posts everything at once):

- ``GET /batch/``: the form (photos or zips, optional manifest CSV, rules, bonuses).
- ``POST /batch/``: makes a job (rules, bonuses, manifest checked first). Files sent with it are
  added; ``start=1`` (the plain form) starts it at once and redirects to the job page, else the
  answer is JSON ``{"id", "upload", "start", "page"}``.
- ``POST /batch/<id>/photos``: adds files (field ``photos``, repeatable) to a job not started yet,
  so a page can send hundreds of photos one request at a time, each under the upload limit.
- ``POST /batch/<id>/start``: queues the job; its photos are read in the background (worker
  processes when ``BATCH_JOBS`` > 1; results go into the store as they come).
- ``GET /batch/<id>/progress``: ``{"state", "done", "total", "errors", "review", "message"}``.
- ``GET /batch/<id>``: progress, then the standings, the review queue (links to ``/r/<id>``, the
  permalink where a square can be corrected) and the downloads ``results.csv`` /
  ``standings.csv``, built from the store on each request, so corrections count at once.
"""
from __future__ import annotations

import secrets

from flask import (Blueprint, Response, abort, current_app, jsonify, redirect, render_template,
                   request, url_for)
from werkzeug.exceptions import BadRequest, HTTPException, RequestEntityTooLarge

from kingdomino import batch as core
from kingdomino import standings as standings_mod
from kingdomino.store import Store

from .. import service
from . import jobs
from .jobs import Job

bp = Blueprint("batch", __name__, url_prefix="/batch")

MANIFEST_MAX_BYTES = 2 * 2**20


def _wants_json() -> bool:
    return request.accept_mimetypes.best == "application/json" or request.headers.get(
        "X-Requested-With") == "fetch"


def _plain_form() -> bool:
    """Whether a POST came from the page's form without its script (it gets a page back, the
    script and other programs JSON). Never reads a body that cannot be read again."""
    if _wants_json():
        return False
    try:
        return bool(request.form.get("start"))
    except HTTPException:  # the body was refused (too large): go by what the client reads
        return request.accept_mimetypes.best_match(["application/json",
                                                    "text/html"]) == "text/html"


def _form_page(error, code: int):
    return render_template("batch.html", choices=service.all_rules_meta(), error=error), code


@bp.errorhandler(HTTPException)
def _error(exc: HTTPException):
    message = exc.description or exc.name
    if exc.code == 413 and message == RequestEntityTooLarge.description:  # the request's limit
        limit = jobs.readable_size(current_app.config["MAX_CONTENT_LENGTH"])
        message = (f"the upload is too large: at most {limit} in one request; send fewer photos "
                   "at a time (the page does so by itself when JavaScript is on), or use "
                   "`kingdomino batch` on the command line")
    if request.method == "GET" and not _wants_json():
        return render_template("error.html", code=exc.code, name=exc.name,
                               message=message), exc.code
    if not _plain_form():
        return jsonify(error=message), exc.code
    if request.endpoint == "batch.create":  # the form again, with the reason
        return _form_page(message, exc.code)
    return render_template("error.html", code=exc.code, name=exc.name,
                           message=message), exc.code


@bp.record_once
def _sweep_at_start(state) -> None:
    jobs.sweep_at_start(state.app)


def _job(job_id: str) -> Job:
    job = jobs.find(job_id)
    if job is None:
        abort(404, description="no such batch on this server (batches are kept until the server "
                               "restarts; the readings themselves stay in the store)")
    return job


def _uploads():
    return request.files.getlist("photos")


def _urls(job: Job) -> dict:
    return {"id": job.id, "upload": url_for("batch.photos", job_id=job.id),
            "start": url_for("batch.start", job_id=job.id),
            "progress": url_for("batch.progress", job_id=job.id),
            "page": url_for("batch.page", job_id=job.id)}


def _manifest():
    """The manifest sent with a new batch, read and checked; None when none was sent."""
    upload = request.files.get("manifest")
    if upload is None or not upload.filename:
        return None
    raw = upload.read(MANIFEST_MAX_BYTES + 1)
    if len(raw) > MANIFEST_MAX_BYTES:
        raise BadRequest("the manifest is larger than 2 MB: is it the right file?")
    try:
        return standings_mod.read_manifest(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise BadRequest("the manifest is not a UTF-8 text CSV file")
    except standings_mod.ManifestError as exc:
        raise BadRequest(f"manifest: {exc}")


@bp.get("/")
def index():
    return _form_page(None, 200)


@bp.post("/")
def create():
    form = request.form
    try:
        rules, bonuses = service.check_choice(form.get("rules"), form.getlist("bonus"))
        job = Job(id=secrets.token_urlsafe(12), rules=rules, bonuses=bonuses,
                  manifest=_manifest())
        jobs.admit(job, request.remote_addr or "")
        try:
            jobs.add_files(job, _uploads)
        except BaseException:
            jobs.forget(job)
            raise
        if form.get("start"):
            jobs.start(job)
            return redirect(url_for("batch.page", job_id=job.id), code=303)
    except BadRequest as exc:
        if form.get("start") and not _wants_json():
            return _form_page(exc.description, 400)
        raise
    return jsonify(_urls(job)), 201


@bp.post("/<job_id>/photos")
def photos(job_id):
    job = _job(job_id)
    added = jobs.add_files(job, _uploads)
    if not added:
        raise BadRequest("no files: send them in a multipart field named \"photos\"")
    return jsonify(added=added, files=len(job.files))


@bp.post("/<job_id>/start")
def start(job_id):
    job = _job(job_id)
    jobs.start(job)
    return jsonify(_urls(job) | job.progress()), 202


@bp.get("/<job_id>/progress")
def progress(job_id):
    resp = jsonify(_job(job_id).progress())
    resp.headers["Cache-Control"] = "no-store"
    return resp


def _results(job: Job, with_manifest: bool = True):
    """The batch's rows from the store (corrections count at once) and, with a manifest, its
    standings."""
    manifest = job.manifest if with_manifest else None
    store = Store(current_app.config["DATABASE"])
    try:
        rows = core.build_rows(store, job.outcomes or [], rules=job.rules, bonuses=job.bonuses,
                               manifest=manifest)
    finally:
        store.close()
    return rows, (core.standings_for(rows) if manifest else None)


@bp.get("/<job_id>")
def page(job_id):
    job = _job(job_id)
    rows, table, error = [], None, None
    # one look at the state: the reading thread may finish while this page is being built, and
    # a page that saw "running" for the rows but "done" for the layout showed an empty queue
    state = job.state
    if state == "done":
        try:
            rows, table = _results(job)
        except standings_mod.ManifestError as exc:
            error = f"manifest: {exc}"
            rows, table = _results(job, with_manifest=False)
    looks = [r for r in rows if r["status"] != "ok"]
    return render_template("batch_job.html", job=job, state=state, urls=_urls(job), rows=rows,
                           looks=looks, standings=table, error=error,
                           tiebreaks=core.tiebreak_columns(rows))


def _download(job_id: str, which: str) -> Response:
    job = _job(job_id)
    if job.state != "done":
        raise BadRequest("the batch is not finished yet: wait for the progress bar to end")
    try:
        rows, table = _results(job)
    except standings_mod.ManifestError as exc:
        raise BadRequest(f"manifest: {exc}")
    if which == "results":
        text = core.rows_to_csv(rows, rules=job.rules, bonuses=job.bonuses)
    elif table is None:
        abort(404, description="this batch has no manifest, so no standings")
    else:
        text = standings_mod.to_csv(table)
    from ..pages import csv_text  # the pages' links ask for a byte order mark (spreadsheets)

    resp = Response(csv_text(text), mimetype="text/csv; charset=utf-8")
    resp.headers["Content-Disposition"] = f'attachment; filename="batch-{job.id}-{which}.csv"'
    return resp


@bp.get("/<job_id>/results.csv")
def results_csv(job_id):
    return _download(job_id, "results")


@bp.get("/<job_id>/standings.csv")
def standings_csv(job_id):
    return _download(job_id, "standings")
