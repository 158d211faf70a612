"""Batch page of the web app: many photos (or zips) -> standings, review queue, CSV downloads.

Flow (``batch.js`` drives it; without JavaScript the form posts everything at once):

- ``GET /batch/``: the form (photos or zips, optional manifest CSV, rules, bonuses).
- ``POST /batch/``: makes a job (rules, bonuses, manifest checked first). Files sent with it are
  added; ``start=1`` (the plain form) starts it at once and redirects to the job page, else the
  answer is JSON ``{"id", "upload", "start", "page"}``.
- ``POST /batch/<id>/photos``: adds files (field ``photos``, repeatable) to a job not started yet,
  so a page can send hundreds of photos one request at a time, each under the upload limit.
- ``POST /batch/<id>/start``: reads the photos in a background thread (worker processes when
  ``BATCH_JOBS`` > 1; results go into the store as they come, like ``kingdomino batch``).
- ``GET /batch/<id>/progress``: ``{"state", "done", "total", "errors", "review", "message"}``.
- ``GET /batch/<id>``: progress, then the standings, the review queue (links to ``/r/<id>``, the
  permalink where a square can be corrected) and the downloads ``results.csv`` /
  ``standings.csv``, built from the store on each request, so corrections count at once.

Jobs live in this server process (the readings themselves are in the store); a job id is random
and unguessable, and its page is the only way to it. Uploaded file names are labels only.

Limits (app config; one client must not fill the server's memory or disk, docs/webapp.md):

- Uploads go to disk at once, never kept in memory: ``BATCH_UPLOAD_DIR`` (default
  ``<instance>/batch-uploads``; folders 0700, files 0600, named by number, not by the upload).
- ``BATCH_MAX_WAITING`` (20) batches not started yet at once; a new one past that is 503 until
  one starts or expires. ``BATCH_WAITING_TTL`` (3600 s): a batch not started and not added to
  for that long is dropped with its files. ``BATCH_CLOCK`` (``time.monotonic``) tells the time.
- Started batches wait in one queue (``BATCH_MAX_QUEUED``, 10; more is 503) read by one worker
  thread: one batch at a time (with ``BATCH_JOBS`` worker processes), never a pool per batch
  running side by side. A batch is read ``BATCH_CHUNK_BYTES`` (256 MB) of uploads at a time.
"""
from __future__ import annotations

import os
import pickle
import queue
import secrets
import shutil
import threading
import time
from pathlib import Path
from collections import OrderedDict
from dataclasses import dataclass, field

from flask import (Blueprint, Response, abort, current_app, jsonify, redirect, render_template,
                   request, url_for)
from werkzeug.exceptions import BadRequest, HTTPException, ServiceUnavailable

from kingdomino import batch as core
from kingdomino import standings as standings_mod
from kingdomino.store import Store

from . import service

bp = Blueprint("batch", __name__, url_prefix="/batch")

MAX_JOBS_KEPT = 50
DEFAULT_MAX_FILES = 2000
DEFAULT_MAX_BYTES = 2 * 2**30
DEFAULT_MAX_WAITING = 20
DEFAULT_WAITING_TTL = 3600.0
DEFAULT_MAX_QUEUED = 10
DEFAULT_CHUNK_BYTES = 256 * 2**20


@dataclass
class Job:
    id: str
    rules: str
    bonuses: list
    manifest: list | None
    files: list = field(default_factory=list)  # (label, path on disk) until read
    folder: str | None = None  # where its uploads are kept until read (private to this user)
    nbytes: int = 0
    state: str = "uploading"  # uploading, running (queued or reading), done, failed
    total: int = 0
    done: int = 0
    errors: int = 0
    review: int = 0
    message: str = ""
    outcomes: list | None = None
    skipped: int = 0
    created: float = field(default_factory=time.time)
    touched: float = 0.0  # the app clock's time of the last upload (expiry of unstarted jobs)
    lock: threading.Lock = field(default_factory=threading.Lock)
    finished: threading.Event = field(default_factory=threading.Event)
    app: object = None

    def progress(self) -> dict:
        return {"id": self.id, "state": self.state, "done": self.done, "total": self.total,
                "errors": self.errors, "review": self.review, "message": self.message,
                "files": len(self.files) if self.state == "uploading" else self.total}

    def discard_files(self) -> None:
        """Delete this job's uploads from disk (read, expired or refused)."""
        self.files = []
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


_JOBS: "OrderedDict[str, Job]" = OrderedDict()
_JOBS_LOCK = threading.Lock()
# started jobs wait here for the one worker thread (created on first use)
_QUEUE: "queue.Queue[Job]" = queue.Queue()
_WORKER: threading.Thread | None = None


def _wants_json() -> bool:
    return request.accept_mimetypes.best == "application/json" or request.headers.get(
        "X-Requested-With") == "fetch"


@bp.errorhandler(HTTPException)
def _error(exc: HTTPException):
    if _wants_json() or request.method != "GET" and not request.form.get("start"):
        return jsonify(error=exc.description or exc.name), exc.code
    return render_template("error.html", code=exc.code, name=exc.name,
                           message=exc.description or exc.name), exc.code


def _job(job_id: str) -> Job:
    with _JOBS_LOCK:
        job = _JOBS.get(job_id)
    if job is None:
        abort(404, description="no such batch on this server (batches are kept until the server "
                               "restarts; the readings themselves stay in the store)")
    return job


def _config(name: str, default):
    value = current_app.config.get(name)
    return default if value is None else value


def _now() -> float:
    return _config("BATCH_CLOCK", time.monotonic)()


def expire_waiting(now: float | None = None) -> int:
    """Drop the batches nobody started nor added to within ``BATCH_WAITING_TTL``; their files
    are deleted. Returns how many were dropped."""
    now = _now() if now is None else now
    ttl = float(_config("BATCH_WAITING_TTL", DEFAULT_WAITING_TTL))
    with _JOBS_LOCK:
        old = [j for j in _JOBS.values() if j.state == "uploading" and now - j.touched > ttl]
        for job in old:
            del _JOBS[job.id]
    for job in old:
        with job.lock:
            job.state = "failed"
            job.message = "this batch was never started and has expired; make a new one"
            job.discard_files()
    return len(old)


def _admit(job: Job) -> None:
    """Register a new job; 503 when too many batches wait to be started (after expiring the
    old ones)."""
    job.touched = _now()
    expire_waiting(job.touched)
    limit = int(_config("BATCH_MAX_WAITING", DEFAULT_MAX_WAITING))
    with _JOBS_LOCK:
        waiting = sum(j.state == "uploading" for j in _JOBS.values())
    if waiting >= limit:
        raise ServiceUnavailable(
            f"{waiting} batches are waiting to be started on this server, the most it keeps: "
            "start one (or wait for one to expire) and try again")
    _keep(job)


def _keep(job: Job) -> None:
    with _JOBS_LOCK:
        _JOBS[job.id] = job
        while len(_JOBS) > MAX_JOBS_KEPT:
            oldest = next((k for k, j in _JOBS.items() if j.state in ("done", "failed")), None)
            if oldest is None:
                break
            del _JOBS[oldest]


def _forget(job: Job) -> None:
    with _JOBS_LOCK:
        _JOBS.pop(job.id, None)
    job.discard_files()


def _upload_dir() -> Path:
    folder = current_app.config.get("BATCH_UPLOAD_DIR") or os.path.join(
        current_app.instance_path, "batch-uploads")
    path = Path(folder)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _save_upload(job: Job, upload, limit_bytes: int) -> int:
    """Stream one upload to the job's private folder; its size. Nothing of it stays in memory."""
    if job.folder is None:
        job.folder = str(_upload_dir() / job.id)
        os.mkdir(job.folder, 0o700)
    suffix = Path(_label(upload.filename, 0)).suffix.lower()
    suffix = suffix if suffix.isascii() and suffix[1:].isalnum() and len(suffix) <= 6 else ""
    path = os.path.join(job.folder, f"{len(job.files):05d}{suffix}")
    size = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            while True:
                block = upload.stream.read(1 << 20)
                if not block:
                    break
                size += len(block)
                if job.nbytes + size > limit_bytes:
                    raise BadRequest(f"a batch takes at most {limit_bytes // 2**20} MB of photos: "
                                     "make another batch for the rest")
                fh.write(block)
    except BaseException:
        os.unlink(path)
        raise
    if not size:
        os.unlink(path)
        return 0
    job.files.append((_label(upload.filename, len(job.files) + 1), path))
    return size


def _label(name: str | None, n: int) -> str:
    """An uploaded file's name as a label: base name only, printable, at most 200 characters."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    name = (name or f"photo-{n}")[-200:]
    if name[0] in "=+-@":  # a spreadsheet would run it as a formula when the CSV is opened
        name = "_" + name
    return name


def _add_files(job: Job) -> int:
    limit_files = current_app.config.get("BATCH_MAX_FILES", DEFAULT_MAX_FILES)
    limit_bytes = current_app.config.get("BATCH_MAX_BYTES", DEFAULT_MAX_BYTES)
    added = 0
    with job.lock:
        if job.state != "uploading":
            raise BadRequest("this batch has already started: make a new batch for more photos")
        for upload in request.files.getlist("photos"):
            if upload is None or not upload.filename:
                continue
            if len(job.files) >= limit_files:
                raise BadRequest(f"a batch takes at most {limit_files} files: make another batch "
                                 "for the rest, or use `kingdomino batch` on the command line")
            size = _save_upload(job, upload, limit_bytes)
            if size:
                job.nbytes += size
                added += 1
        job.touched = _now()
    return added


def _chunks(files, limit: int):
    """The uploads as ``(label, bytes)`` lists of at most ``limit`` bytes (one file at least)."""
    chunk, size = [], 0
    for label, path in files:
        n = os.path.getsize(path)
        if chunk and size + n > limit:
            yield chunk
            chunk, size = [], 0
        with open(path, "rb") as fh:
            chunk.append((label, fh.read()))
        size += n
    if chunk:
        yield chunk


def _run_job(app, job: Job, files) -> None:
    """Read everything into the store, counting as it goes (on the one worker thread)."""
    store = None
    try:
        store = Store(app.config["DATABASE"])
        job.message = ""
        reader = app.config.get("READER") or core.score_photo_bytes
        jobs = int(app.config.get("BATCH_JOBS") or os.cpu_count() or 1)
        if jobs > 1:
            try:
                pickle.dumps(reader)
            except Exception:  # a reader that cannot go to another process: read here
                jobs = 1

        def tick(outcome: core.Outcome) -> None:
            job.done += 1

        ctx = None
        if jobs > 1:
            import multiprocessing

            ctx = multiprocessing.get_context("forkserver")
        runner = core.Batch(store, rules=job.rules, bonuses=job.bonuses, batch_id=f"web-{job.id}",
                            score_fn=reader, jobs=jobs, mp_context=ctx, progress=tick)
        chunk_bytes = int(app.config.get("BATCH_CHUNK_BYTES") or DEFAULT_CHUNK_BYTES)
        outcomes, total, skipped = [], 0, 0
        for chunk in _chunks(files, chunk_bytes):
            coll = core.collect_uploads(chunk)
            del chunk
            total += len(coll.items)
            skipped += coll.skipped
            job.total = max(job.total, total)
            try:
                done = runner.run(coll.items)
            finally:
                coll.close()
            for outcome in done:  # the photos are in the store now: free the memory
                outcome.item.data = outcome.item.archive = outcome.item.member = None
            outcomes += done
        job.outcomes, job.total, job.skipped = outcomes, total, skipped
        rows = core.build_rows(store, job.outcomes, rules=job.rules, bonuses=job.bonuses)
        job.errors = sum(r["status"].startswith("error") for r in rows)
        job.review = sum(r["status"] == "review" for r in rows)
        job.message = f"{job.total} photo(s) read: {job.errors} error(s), {job.review} to review"
        job.state = "done"
    except Exception as exc:  # keep the server alive; say what happened on the page
        app.logger.exception("batch %s failed", job.id)
        job.message = f"the batch stopped: {type(exc).__name__}: {exc}"
        job.state = "failed"
    finally:
        if store is not None:
            store.close()
        job.discard_files()


def _work_queue() -> None:
    """The one worker thread: started batches are read one after the other."""
    while True:
        job = _QUEUE.get()
        try:
            _run_job(job.app, job, list(job.files))
        finally:
            job.app = None
            job.finished.set()
            _QUEUE.task_done()


def _ensure_worker() -> None:
    global _WORKER
    with _JOBS_LOCK:
        if _WORKER is None or not _WORKER.is_alive():
            _WORKER = threading.Thread(target=_work_queue, name="batch-queue", daemon=True)
            _WORKER.start()


def _start(job: Job) -> None:
    limit = int(_config("BATCH_MAX_QUEUED", DEFAULT_MAX_QUEUED))
    with job.lock:
        if job.state != "uploading":
            return
        if not job.files:
            raise BadRequest("add some photos (or a zip of photos) first")
        if _QUEUE.qsize() >= limit:
            raise ServiceUnavailable(f"{limit} batches are already waiting to be read: start "
                                     "this one again when the others are done")
        job.total = len(job.files)
        job.state = "running"  # to the page: it may still wait in the queue (the message says)
        job.message = "waiting for the batches started before it"
        job.app = current_app._get_current_object()
    _ensure_worker()
    _QUEUE.put(job)
    if current_app.config.get("BATCH_WAIT"):  # tests: finish before answering
        job.finished.wait()


def _urls(job: Job) -> dict:
    return {"id": job.id, "upload": url_for("batch.photos", job_id=job.id),
            "start": url_for("batch.start", job_id=job.id),
            "progress": url_for("batch.progress", job_id=job.id),
            "page": url_for("batch.page", job_id=job.id)}


# ---------------------------------------------------------------- routes


@bp.get("/")
def index():
    return render_template("batch.html", choices=service.all_rules_meta(), error=None)


@bp.post("/")
def create():
    form = request.form
    try:
        rules, bonuses = service.check_choice(form.get("rules"), form.getlist("bonus"))
        manifest = None
        upload = request.files.get("manifest")
        if upload is not None and upload.filename:
            raw = upload.read(2 * 2**20 + 1)
            if len(raw) > 2 * 2**20:
                raise BadRequest("the manifest is larger than 2 MB: is it the right file?")
            try:
                manifest = standings_mod.read_manifest(raw.decode("utf-8-sig"))
            except UnicodeDecodeError:
                raise BadRequest("the manifest is not a UTF-8 text CSV file")
            except standings_mod.ManifestError as exc:
                raise BadRequest(f"manifest: {exc}")
        job = Job(id=secrets.token_urlsafe(12), rules=rules, bonuses=bonuses, manifest=manifest)
        _admit(job)
        try:
            _add_files(job)
        except BaseException:
            _forget(job)
            raise
        if form.get("start"):
            _start(job)
            return redirect(url_for("batch.page", job_id=job.id), code=303)
    except BadRequest as exc:
        if form.get("start") and not _wants_json():
            return render_template("batch.html", choices=service.all_rules_meta(),
                                   error=exc.description), 400
        raise
    return jsonify(_urls(job)), 201


@bp.post("/<job_id>/photos")
def photos(job_id):
    job = _job(job_id)
    added = _add_files(job)
    if not added:
        raise BadRequest("no files: send them in a multipart field named \"photos\"")
    return jsonify(added=added, files=len(job.files))


@bp.post("/<job_id>/start")
def start(job_id):
    job = _job(job_id)
    _start(job)
    return jsonify(_urls(job) | job.progress()), 202


@bp.get("/<job_id>/progress")
def progress(job_id):
    resp = jsonify(_job(job_id).progress())
    resp.headers["Cache-Control"] = "no-store"
    return resp


def _results(job: Job, with_manifest: bool = True):
    manifest = job.manifest if with_manifest else None
    store = Store(current_app.config["DATABASE"])
    try:
        rows = core.build_rows(store, job.outcomes or [], rules=job.rules, bonuses=job.bonuses,
                               manifest=manifest)
    finally:
        store.close()
    table = core.standings_for(rows) if manifest else None
    return rows, table


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
    return render_template("batch_job.html", job=job, state=state, urls=_urls(job), rows=rows, looks=looks,
                           standings=table, error=error,
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
    else:
        if table is None:
            abort(404, description="this batch has no manifest, so no standings")
        text = standings_mod.to_csv(table)
    from .pages import csv_text  # the pages' links ask for a byte order mark (spreadsheets)

    resp = Response(csv_text(text), mimetype="text/csv; charset=utf-8")
    resp.headers["Content-Disposition"] = f'attachment; filename="batch-{job.id}-{which}.csv"'
    return resp


@bp.get("/<job_id>/results.csv")
def results_csv(job_id):
    return _download(job_id, "results")


@bp.get("/<job_id>/standings.csv")
def standings_csv(job_id):
    return _download(job_id, "standings")
