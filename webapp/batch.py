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
- ``BATCH_MAX_WAITING`` (20) batches with photos and not started yet at once, at most
  ``BATCH_MAX_WAITING_PER_CLIENT`` (5) of them from one address (``request.remote_addr``); past
  that a new one (or an empty one's first photo) is 503 until one starts or expires. A batch
  with no photo yet holds no place: one address keeps ``BATCH_MAX_EMPTY_PER_CLIENT`` (3) of
  them, all addresses ``BATCH_MAX_EMPTY`` (50); a new one drops the oldest past that.
  ``BATCH_WAITING_TTL`` (3600 s): a batch not started and not added to for that long is
  dropped with its files. ``BATCH_CLOCK`` (``time.monotonic``) tells the time.
- Disk: one batch holds at most ``BATCH_MAX_BYTES`` (2 GB; more is 413), the batches of one
  address not read yet ``BATCH_MAX_CLIENT_BYTES`` (2 GB) and all of them
  ``BATCH_MAX_WAITING_BYTES`` (8 GB; more is 503). Each job folder is locked (``flock``) while
  its batch lives; at start and at each expiry the folders nobody holds (a server stopped or
  killed with batches not read) are deleted, those of another running server kept.
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
from werkzeug.exceptions import (BadRequest, HTTPException, NotFound, RequestEntityTooLarge,
                                 ServiceUnavailable)

from kingdomino import batch as core
from kingdomino import standings as standings_mod
from kingdomino.store import Store

from . import service

try:
    import fcntl
except ImportError:  # not POSIX: a folder's age tells whether its batch may still be alive
    fcntl = None

bp = Blueprint("batch", __name__, url_prefix="/batch")

MAX_JOBS_KEPT = 50
DEFAULT_MAX_FILES = 2000
DEFAULT_MAX_BYTES = 2 * 2**30
DEFAULT_MAX_WAITING = 20
DEFAULT_MAX_WAITING_PER_CLIENT = 5
DEFAULT_MAX_EMPTY_PER_CLIENT = 3
DEFAULT_MAX_EMPTY = 50
DEFAULT_MAX_CLIENT_BYTES = 2 * 2**30
DEFAULT_MAX_WAITING_BYTES = 8 * 2**30
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
    folder_lock: int | None = None  # the folder, open and locked while this job lives
    nbytes: int = 0  # of uploads on disk, counted as they are written
    client: str = ""  # the address that made it (its share of the waiting places and disk)
    placed: bool = False  # holds one of the waiting places (from its first photo until started)
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
        self.nbytes = 0
        if self.folder_lock is not None:
            os.close(self.folder_lock)
            self.folder_lock = None


_JOBS: "OrderedDict[str, Job]" = OrderedDict()
_JOBS_LOCK = threading.Lock()
# started jobs wait here for the one worker thread (created on first use)
_QUEUE: "queue.Queue[Job]" = queue.Queue()
_WORKER: threading.Thread | None = None


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


def _size(n: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


@bp.errorhandler(HTTPException)
def _error(exc: HTTPException):
    message = exc.description or exc.name
    if exc.code == 413 and message == RequestEntityTooLarge.description:  # the request's limit
        limit = _size(current_app.config["MAX_CONTENT_LENGTH"])
        message = (f"the upload is too large: at most {limit} in one request; send fewer photos "
                   "at a time (the page does so by itself when JavaScript is on), or use "
                   "`kingdomino batch` on the command line")
    if request.method == "GET" and not _wants_json():
        return render_template("error.html", code=exc.code, name=exc.name,
                               message=message), exc.code
    if not _plain_form():
        return jsonify(error=message), exc.code
    if request.endpoint == "batch.create":  # the form again, with the reason
        return render_template("batch.html", choices=service.all_rules_meta(),
                               error=message), exc.code
    return render_template("error.html", code=exc.code, name=exc.name,
                           message=message), exc.code


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


def _drop(jobs, message: str) -> None:
    """Jobs already taken out of ``_JOBS``: failed, with their files deleted."""
    for job in jobs:
        with job.lock:
            job.state = "failed"
            job.message = message
            job.discard_files()


def expire_waiting(now: float | None = None) -> int:
    """Drop the batches nobody started nor added to within ``BATCH_WAITING_TTL``; their files
    are deleted, and so are the upload folders no living batch holds (``sweep_uploads``).
    Returns how many batches were dropped."""
    now = _now() if now is None else now
    ttl = float(_config("BATCH_WAITING_TTL", DEFAULT_WAITING_TTL))
    with _JOBS_LOCK:
        old = [j for j in _JOBS.values() if j.state == "uploading" and now - j.touched > ttl]
        for job in old:
            del _JOBS[job.id]
    _drop(old, "this batch was never started and has expired; make a new one")
    sweep_uploads(_upload_root(current_app), ttl)
    return len(old)


def _upload_root(app) -> Path:
    return Path(app.config.get("BATCH_UPLOAD_DIR")
                or os.path.join(app.instance_path, "batch-uploads"))


def _unheld(path: str, fd: int, ttl: float) -> bool:
    """Whether no living batch holds this upload folder (``fd``: the folder, open)."""
    if fcntl is None:  # no locks to ask: a folder untouched for longer than a batch may wait
        return time.time() - os.fstat(fd).st_mtime > ttl and not any(
            j.folder == path for j in list(_JOBS.values()))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # a batch of this server or of another one running
        return False
    return True


def sweep_uploads(root: Path, ttl: float = DEFAULT_WAITING_TTL) -> int:
    """Delete the upload folders under ``root`` that no living batch holds: those of a server
    stopped or killed before its batches were read (the batches lived in its memory only).
    Another running server's folders are locked and kept. Returns how many were deleted."""
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return 0
    removed = 0
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if _unheld(entry.path, fd, ttl):
                shutil.rmtree(entry.path, ignore_errors=True)  # still locked: none takes it
                removed += 1
        finally:
            os.close(fd)
    return removed


@bp.record_once
def _sweep_at_start(state) -> None:
    """A new app deletes the uploads left by a server gone (no batch of theirs is alive)."""
    app = state.app
    ttl = float(app.config.get("BATCH_WAITING_TTL") or DEFAULT_WAITING_TTL)
    removed = sweep_uploads(_upload_root(app), ttl)
    if removed:
        app.logger.info("deleted the uploads of %d batch(es) left by a server gone", removed)


def _client() -> str:
    return request.remote_addr or ""


def _check_place(job: Job, claim: bool = False) -> None:
    """503 when no waiting place is free for ``job``'s address; ``claim``: take one now."""
    limit = int(_config("BATCH_MAX_WAITING", DEFAULT_MAX_WAITING))
    share = int(_config("BATCH_MAX_WAITING_PER_CLIENT", DEFAULT_MAX_WAITING_PER_CLIENT))
    with _JOBS_LOCK:
        if claim and _JOBS.get(job.id) is not job:
            raise NotFound("this batch was dropped before its first photo came (too many empty "
                           "batches were made since); make a new batch")
        placed = [j for j in _JOBS.values()
                  if j.state == "uploading" and j.placed and j is not job]
        if len(placed) >= limit:
            raise ServiceUnavailable(
                f"{len(placed)} batches are waiting to be started on this server, the most it "
                "keeps: start one (or wait for one to expire) and try again")
        mine = sum(j.client == job.client for j in placed)
        if mine >= share:
            raise ServiceUnavailable(
                f"{mine} batches from your address are waiting to be started, the most one "
                "address may have: start one of them (or wait for one to expire) and try again")
        if claim:
            job.placed = True


def _admit(job: Job) -> None:
    """Register a new job (no photo yet); 503 when no waiting place is free for its address
    (after expiring the old ones). Past the caps on empty batches the oldest are dropped."""
    job.touched = _now()
    job.client = _client()
    expire_waiting(job.touched)
    _check_place(job)
    per_client = int(_config("BATCH_MAX_EMPTY_PER_CLIENT", DEFAULT_MAX_EMPTY_PER_CLIENT))
    everyone = int(_config("BATCH_MAX_EMPTY", DEFAULT_MAX_EMPTY))
    with _JOBS_LOCK:
        empty = [j for j in _JOBS.values() if j.state == "uploading" and not j.placed]
        mine = [j for j in empty if j.client == job.client]
        dropped = mine[:max(0, len(mine) + 1 - per_client)]
        others = [j for j in empty if j not in dropped]
        dropped += others[:max(0, len(others) + 1 - everyone)]
        for old in dropped:
            del _JOBS[old.id]
    _keep(job)
    _drop(dropped, "this batch got no photo before newer empty batches took its place; "
                   "make a new one")


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
    path = _upload_root(current_app)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _make_folder(job: Job) -> None:
    """The job's private folder, locked while the job lives (``sweep_uploads`` keeps it)."""
    path = str(_upload_dir() / job.id)
    for _ in range(5):
        os.mkdir(path, 0o700)
        if fcntl is None:
            break
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits while a sweep that found it empty deletes it
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            job.folder_lock = fd
            break
        os.close(fd)  # a sweep deleted the new folder before it was locked: make it again
    job.folder = path


def _disk_check(job: Job, limit_bytes: int) -> None:
    """413/503 when ``job`` (its uploads counted so far) holds more disk than it may."""
    if job.nbytes > limit_bytes:
        raise RequestEntityTooLarge(f"a batch takes at most {_size(limit_bytes)} of photos: "
                                    "make another batch for the rest")
    per_client = int(_config("BATCH_MAX_CLIENT_BYTES", DEFAULT_MAX_CLIENT_BYTES))
    everyone = int(_config("BATCH_MAX_WAITING_BYTES", DEFAULT_MAX_WAITING_BYTES))
    with _JOBS_LOCK:
        held = [(j.client, j.nbytes) for j in _JOBS.values()]
    if job.id not in _JOBS:
        held.append((job.client, job.nbytes))
    mine = sum(n for client, n in held if client == job.client)
    if mine > per_client:
        raise ServiceUnavailable(
            f"the batches from your address hold {_size(mine)} of photos not read yet, more "
            f"than the {_size(per_client)} one address may have: start a batch (or wait "
            "until it is read) and send the rest then")
    total = sum(n for _, n in held)
    if total > everyone:
        raise ServiceUnavailable(
            f"the server has {_size(everyone)} of photos waiting to be read, the most it "
            "keeps: try again when some batches have been read")


def _save_upload(job: Job, upload, limit_bytes: int) -> int:
    """Stream one upload to the job's private folder; its size. Nothing of it stays in memory."""
    if job.folder is None:
        _make_folder(job)
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
                job.nbytes += len(block)  # seen at once by the other uploads' checks
                _disk_check(job, limit_bytes)
                fh.write(block)
    except BaseException:
        job.nbytes -= size
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
        try:
            for upload in request.files.getlist("photos"):
                if upload is None or not upload.filename:
                    continue
                if len(job.files) >= limit_files:
                    raise BadRequest(f"a batch takes at most {limit_files} files: make another "
                                     "batch for the rest, or use `kingdomino batch` on the "
                                     "command line")
                if not job.placed:  # its first photo: the batch takes a waiting place now
                    _check_place(job, claim=True)
                if _save_upload(job, upload, limit_bytes):
                    added += 1
        finally:
            if not job.files:
                job.placed = False
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
