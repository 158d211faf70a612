"""The batch page's jobs (``webapp.batch.routes`` answers the requests): the table of batches
this server process holds, their uploads on disk, and the one queue that reads them.

A job lives in this server's memory only (the readings themselves go into the store, as
``kingdomino batch`` puts them there); its id is random and unguessable. Uploaded file names
are labels only.

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

from flask import current_app
from werkzeug.exceptions import BadRequest, NotFound, RequestEntityTooLarge, ServiceUnavailable

from kingdomino import batch as core
from kingdomino.store import Store

try:
    import fcntl
except ImportError:  # not POSIX: a folder's age tells whether its batch may still be alive
    fcntl = None

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


def readable_size(n: int) -> str:
    """``n`` bytes as a person reads them: ``2 GB``, ``64 KB``, ``12 bytes``."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def find(job_id: str) -> Job | None:
    """The batch of this id on this server, or None."""
    with _JOBS_LOCK:
        return _JOBS.get(job_id)


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


def sweep_at_start(app) -> None:
    """A new app deletes the uploads left by a server gone (no batch of theirs is alive)."""
    ttl = float(app.config.get("BATCH_WAITING_TTL") or DEFAULT_WAITING_TTL)
    removed = sweep_uploads(_upload_root(app), ttl)
    if removed:
        app.logger.info("deleted the uploads of %d batch(es) left by a server gone", removed)


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


def admit(job: Job, client: str) -> None:
    """Register a new job (no photo yet) made by the address ``client``; 503 when no waiting
    place is free for that address (after expiring the old ones). Past the caps on empty
    batches the oldest are dropped."""
    job.touched = _now()
    job.client = client
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


def forget(job: Job) -> None:
    """Take a job that failed to be made out of the table, its files deleted."""
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
        raise RequestEntityTooLarge(f"a batch takes at most {readable_size(limit_bytes)} of "
                                    "photos: make another batch for the rest")
    per_client = int(_config("BATCH_MAX_CLIENT_BYTES", DEFAULT_MAX_CLIENT_BYTES))
    everyone = int(_config("BATCH_MAX_WAITING_BYTES", DEFAULT_MAX_WAITING_BYTES))
    with _JOBS_LOCK:
        held = [(j.client, j.nbytes) for j in _JOBS.values()]
    if job.id not in _JOBS:
        held.append((job.client, job.nbytes))
    mine = sum(n for client, n in held if client == job.client)
    if mine > per_client:
        raise ServiceUnavailable(
            f"the batches from your address hold {readable_size(mine)} of photos not read yet, "
            f"more than the {readable_size(per_client)} one address may have: start a batch (or "
            "wait until it is read) and send the rest then")
    total = sum(n for _, n in held)
    if total > everyone:
        raise ServiceUnavailable(
            f"the server has {readable_size(everyone)} of photos waiting to be read, the most it "
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


def add_files(job: Job, uploads) -> int:
    """Stream the uploads of one request into ``job``; how many were added. ``uploads()`` gives
    them (asked for once the job is known to take more, so a started batch says so before the
    request's body is read)."""
    limit_files = current_app.config.get("BATCH_MAX_FILES", DEFAULT_MAX_FILES)
    limit_bytes = current_app.config.get("BATCH_MAX_BYTES", DEFAULT_MAX_BYTES)
    added = 0
    with job.lock:
        if job.state != "uploading":
            raise BadRequest("this batch has already started: make a new batch for more photos")
        try:
            for upload in uploads():
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
                            score_fn=reader, jobs=jobs, mp_context=ctx, progress=tick,
                            learning=bool(app.config.get("LEARNING", True)))
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


def start(job: Job) -> None:
    """Put a job in the one queue (503 when it is full); its photos are read in turn."""
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
