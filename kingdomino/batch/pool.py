"""``kingdomino batch``: score many photos (folders and zips) into a results CSV and standings.

How it works (see ``docs/batch.md``):

1. ``collect`` turns the paths into a sorted, deterministic list of ``Item`` s: folders are walked
   (hidden files skipped), zip files are opened and their members read in memory (member names
   are only labels, nothing is ever extracted to disk; member count and sizes are capped).
2. ``Batch.run`` reads each item's bytes in this (parent) process, hashes them and asks the store
   whether that photo was already scored under these rules and bonuses; only the others are sent
   to the worker processes (each builds the reader once). Every result is written to the SQLite
   store by the parent as soon as it comes back, so an interrupted run loses nothing it finished
   and running the same command again only reads what is left.
3. ``build_rows`` makes the results table *from the store* (a person's correction made in the web
   app wins over the machine's reading and is re-scored), rows needing a look first.

The scoring function is a parameter (``score_fn(data, rules, bonuses) -> scored JSON``), so tests
can swap the photo reader for a fake one.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
import sys
import zipfile
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from kingdomino import standings as standings_mod
from kingdomino.store import Store, content_hash

IMAGE_EXTENSIONS = {".jpg", ".jpeg", ".jpe", ".png", ".webp", ".bmp", ".tif", ".tiff",
                    ".heic", ".heif"}
MAX_PHOTO_BYTES = 64 * 2**20  # one photo; a 12 MP phone JPEG is 3-6 MB
ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_TOTAL_BYTES = 8 * 2**30  # all members of one zip, uncompressed

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class BatchUsageError(ValueError):
    """The batch cannot start (no such path, bad manifest, ...): exit code 2."""


def looks_like_image(head: bytes) -> bool:
    """Whether the first bytes are those of an image format a phone or camera writes."""
    return (
        head.startswith(b"\xff\xd8\xff")  # JPEG
        or head.startswith(b"\x89PNG\r\n\x1a\n")
        or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")
        or head.startswith(b"BM")
        or head[:4] in (b"II*\x00", b"MM\x00*")  # TIFF
        or (head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"heif"))
    )


@dataclass
class Item:
    """One photo to score: a file, a zip member or bytes already in memory (web uploads)."""

    source: str
    path: str | None = None
    archive: zipfile.ZipFile | None = None
    member: zipfile.ZipInfo | None = None
    data: bytes | None = None
    error: str | None = None  # known before reading (e.g. a zip member too large)


@dataclass
class Outcome:
    """What became of one item: a stored reading (its id), or an error found before reading."""

    item: Item
    content_hash: str | None = None
    reading_id: str | None = None
    error: str | None = None
    reused: bool = False


@dataclass
class Collection:
    items: list[Item] = field(default_factory=list)
    skipped: int = 0  # files in folders / zips that are not photos
    _zips: list[zipfile.ZipFile] = field(default_factory=list)

    def close(self) -> None:
        for zf in self._zips:
            zf.close()
        self._zips.clear()


# ---------------------------------------------------------------- collecting the inputs


def _is_hidden(name: str) -> bool:
    if name in (".", ".."):
        return False
    return name.startswith(".") or name in ("__MACOSX", "Thumbs.db", "desktop.ini")


def _file_head(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(16)
    except OSError:
        return b""


def _add_zip(coll: Collection, source: str, opener) -> None:
    try:
        zf = zipfile.ZipFile(opener())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        coll.items.append(Item(source, error=f"not a readable zip file ({exc})"))
        return
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > ZIP_MAX_MEMBERS:
        zf.close()
        coll.items.append(Item(source, error=(
            f"the zip holds {len(infos)} files, more than the {ZIP_MAX_MEMBERS} one batch reads "
            "from a zip; split it into smaller zips")))
        return
    coll._zips.append(zf)
    for info in sorted(infos, key=lambda i: i.filename):
        label = info.filename.replace("\\", "/")
        parts = [p for p in label.split("/") if p]
        if not parts or any(_is_hidden(p) for p in parts):
            continue
        if Path(parts[-1]).suffix.lower() not in IMAGE_EXTENSIONS:
            coll.skipped += 1
            continue
        item = Item(f"{source}!{label}", archive=zf, member=info)
        if info.file_size > MAX_PHOTO_BYTES:
            item.error = (f"the photo is {info.file_size // 2**20} MB, more than the "
                          f"{MAX_PHOTO_BYTES // 2**20} MB a photo may be; export it smaller")
        coll.items.append(item)


def collect(paths) -> Collection:
    """All photos under ``paths`` (files, folders walked in sorted order, zip files).

    Files named on the command line are always read (a non-photo becomes an error row); in
    folders and zips only files with a photo extension (or, in folders, photo content) are.
    Raises ``BatchUsageError`` for a path that does not exist.
    """
    coll = Collection()
    for raw in paths:
        path = str(raw)
        if not os.path.exists(path):
            raise BatchUsageError(f"no such file or folder: {path}")
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
                for name in sorted(files):
                    if _is_hidden(name):
                        continue
                    full = os.path.join(root, name)
                    ext = Path(name).suffix.lower()
                    if ext == ".zip":
                        _add_zip(coll, full, lambda full=full: full)
                    elif ext in IMAGE_EXTENSIONS or looks_like_image(_file_head(full)):
                        coll.items.append(Item(full, path=full))
                    else:
                        coll.skipped += 1
        elif Path(path).suffix.lower() == ".zip" or (
            not looks_like_image(_file_head(path)) and zipfile.is_zipfile(path)
        ):
            _add_zip(coll, path, lambda path=path: path)
        else:
            coll.items.append(Item(path, path=path))
    return coll


def collect_uploads(files) -> Collection:
    """Like ``collect`` for uploaded ``(filename, bytes)`` pairs (the web page): zips are opened."""
    coll = Collection()
    for name, data in files:
        if Path(name).suffix.lower() == ".zip" or (
            data[:4] == b"PK\x03\x04" and not looks_like_image(data[:16])
        ):
            _add_zip(coll, name, lambda data=data: io.BytesIO(data))
        else:
            coll.items.append(Item(name, data=data))
    return coll


class _ItemError(Exception):
    pass


def read_item(item: Item, budget: dict) -> bytes:
    """The item's bytes, size-capped; raises ``_ItemError`` with a message for a person."""
    if item.error:
        raise _ItemError(item.error)
    if item.data is not None:
        data = item.data
    elif item.member is not None:
        used = budget.get(id(item.archive), 0)
        if used > ZIP_MAX_TOTAL_BYTES:
            raise _ItemError("the zip holds more data than one batch reads from a zip "
                             f"({ZIP_MAX_TOTAL_BYTES // 2**30} GB); split it")
        try:
            with item.archive.open(item.member) as fh:
                data = fh.read(MAX_PHOTO_BYTES + 1)
        except RuntimeError as exc:  # encrypted member
            raise _ItemError(f"cannot read this file from the zip: {exc}")
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise _ItemError(f"this file is damaged in the zip ({exc})")
        except Exception as exc:  # zlib.error and friends: a damaged archive
            raise _ItemError(f"this file is damaged in the zip ({type(exc).__name__}: {exc})")
        budget[id(item.archive)] = used + len(data)
    else:
        try:
            if os.path.getsize(item.path) > MAX_PHOTO_BYTES:
                raise _ItemError(f"the file is larger than the {MAX_PHOTO_BYTES // 2**20} MB "
                                 "a photo may be; export it smaller")
            with open(item.path, "rb") as fh:
                data = fh.read(MAX_PHOTO_BYTES + 1)
        except OSError as exc:
            raise _ItemError(f"cannot read the file: {exc.strerror or exc}")
    if len(data) > MAX_PHOTO_BYTES:
        raise _ItemError(f"the photo is larger than the {MAX_PHOTO_BYTES // 2**20} MB a photo "
                         "may be; export it smaller")
    if not data:
        raise _ItemError("the file is empty")
    if not looks_like_image(data[:16]):
        raise _ItemError("not a photo: the file is not a JPEG, PNG, WebP, BMP, TIFF or HEIC image")
    return data


# ---------------------------------------------------------------- scoring (workers)


def score_photo_bytes(data: bytes, rules: str, bonuses) -> dict:
    """The default scoring function: the real reader (built once per process) and engine."""
    from kingdomino import service

    return service.score_photo(data, rules=rules, bonuses=tuple(bonuses))


def _worker_init() -> None:
    # Ctrl-C goes to the whole process group: only the parent reacts (it stops the workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def photo_copy(data: bytes):
    """A small upright JPEG of the photo and the original's ``[width, height]``, for the web
    app's review page (``/r/<id>`` draws the grid on it); None when it cannot be decoded."""
    try:
        from webapp.reading import shrink_photo

        small, (w, h) = shrink_photo(data)
    except Exception:  # undecodable photo, or the web app is not installed: no copy
        return None
    return small, [w, h]


def _work(score_fn, data: bytes, rules: str, bonuses, keep: str = "none"):
    """Run in a worker: ``(kind, payload, copy)`` where kind is "ok" (payload: scored JSON) or
    "error" (payload: message), and copy is ``photo_copy`` when ``keep`` asks for one.
    Never raises for a bad photo."""
    try:
        kind, payload = "ok", score_fn(data, rules, bonuses)
    except (ValueError, OSError) as exc:  # PhotoError, KingdomError: a message for a person
        kind, payload = "error", str(exc) or type(exc).__name__
    except Exception as exc:  # a bug in the reader must not stop the batch
        kind, payload = "error", f"the reader failed on this photo ({type(exc).__name__}: {exc})"
    needs_look = kind == "error" or bool(payload.get("review"))
    copy = None
    if keep == "all" or (keep == "review" and needs_look):
        copy = photo_copy(data)
    return kind, payload, copy


@dataclass
class _Task:
    content_hash: str
    data: bytes
    indexes: list[int]
    done: bool = False


class Batch:
    """Scores items into the store. ``run(items) -> list[Outcome]`` (same order as items)."""

    def __init__(self, store: Store, *, rules: str = "kingdomino", bonuses=(), batch_id=None,
                 score_fn=None, jobs: int | None = None, keep_photos: str = "review",
                 retry_errors: bool = False, mp_context=None, progress=None):
        self.store = store
        self.rules = rules
        self.bonuses = tuple(sorted(bonuses))
        self.batch_id = batch_id
        self.score_fn = score_fn or score_photo_bytes
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.keep_photos = keep_photos
        self.retry_errors = retry_errors
        self.mp_context = mp_context
        self.progress = progress  # callable(outcome) after each item is settled
        self.scored = 0  # photos actually sent to the reader in this run

    # -- bookkeeping
    def _settle(self, outcomes, index: int) -> None:
        if self.progress:
            self.progress(outcomes[index])

    def _tasks(self, items, outcomes):
        """Yield the photos that need reading; settle the others (errors, already in the store)."""
        in_flight: dict[str, _Task] = {}
        budget: dict = {}
        for i, item in enumerate(items):
            out = outcomes[i] = Outcome(item)
            try:
                data = read_item(item, budget)
            except _ItemError as exc:
                out.error = str(exc)
                self._settle(outcomes, i)
                continue
            h = out.content_hash = content_hash(data)
            if h in in_flight and not in_flight[h].done:
                in_flight[h].indexes.append(i)  # the same photo twice: read it once
                continue
            known = self.store.find_by_hash(h, self.rules, self.bonuses)
            if known is not None and not (known["error"] and self.retry_errors):
                out.reading_id, out.reused = known["id"], True
                self._settle(outcomes, i)
                continue
            if self._rescore_known(h, item, data, out):
                self._settle(outcomes, i)
                continue
            task = in_flight[h] = _Task(h, data, [i])
            yield task

    def _rescore_known(self, h: str, item: Item, data: bytes, out: Outcome) -> bool:
        """The photo was read before with other bonuses: score that kingdom, do not re-read it."""
        known = self.store.find_photo(h, self.rules)
        if known is None:
            return False
        from kingdomino import service

        machine = known["machine"]
        try:
            result = service.score_grid({k: machine[k] for k in ("rules", "size", "cells")},
                                        rules=self.rules, bonuses=self.bonuses)
        except (ValueError, KeyError):
            return False
        extra = {k: v for k, v in machine.items() if k not in result}
        result.update(extra)
        out.reading_id = self.store.add_reading(
            rules=self.rules, bonuses=self.bonuses, machine=result, source=item.source,
            content_hash=h, batch=self.batch_id,
            photo=self.store.photo(known["id"]) if self.keep_photos != "none" else None)
        out.reused = True
        return True

    def _record(self, outcomes, task: _Task, kind: str, payload, copy=None) -> None:
        first = outcomes[task.indexes[0]].item
        machine = None
        if kind == "ok":
            machine = dict(payload)
            if copy is not None:
                machine["photo_size"] = copy[1]
        rid = self.store.add_reading(
            rules=self.rules, bonuses=self.bonuses, machine=machine,
            error=payload if kind == "error" else None,
            source=first.source, content_hash=task.content_hash, batch=self.batch_id,
            photo=copy[0] if copy is not None else None,
        )
        self.scored += 1
        task.done = True
        task.data = b""
        for j in task.indexes:
            outcomes[j].reading_id = rid
            self._settle(outcomes, j)

    def run(self, items: list[Item]) -> list[Outcome]:
        outcomes: list = [None] * len(items)
        tasks = self._tasks(items, outcomes)
        if self.jobs == 1:
            for task in tasks:
                self._record(outcomes, task, *_work(self.score_fn, task.data, self.rules,
                                                    self.bonuses, self.keep_photos))
        else:
            self._run_pool(tasks, outcomes)
        return outcomes

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.jobs, mp_context=self.mp_context,
                                   initializer=_worker_init)

    def _run_pool(self, tasks, outcomes) -> None:
        pool = self._new_pool()
        inflight: dict = {}
        suspects: deque[_Task] = deque()  # in flight when a worker died: re-run one at a time
        suspects_seen: list[_Task] = []
        waiting: deque[_Task] = deque()  # taken from the list but not started
        exhausted = False
        try:
            while True:
                limit = 1 if suspects else self.jobs * 2
                while len(inflight) < limit:
                    if suspects:
                        task = suspects.popleft()
                    elif waiting:
                        task = waiting.popleft()
                    elif not exhausted:
                        task = next(tasks, None)
                        if task is None:
                            exhausted = True
                            break
                    else:
                        break
                    try:
                        fut = pool.submit(_work, self.score_fn, task.data, self.rules,
                                          self.bonuses, self.keep_photos)
                    except BrokenProcessPool:
                        # the pool broke since the last look: this task never ran
                        (suspects if task in suspects_seen else waiting).appendleft(task)
                        if not inflight:
                            pool.shutdown(wait=False, cancel_futures=True)
                            pool = self._new_pool()
                            continue
                        break
                    inflight[fut] = task
                if not inflight:
                    if exhausted and not suspects and not waiting:
                        return
                    continue
                alone = len(inflight) == 1
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                broken = []
                for fut in done:
                    task = inflight.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken.append(task)
                        continue
                    except Exception as exc:  # e.g. a result that cannot come back
                        result = ("error", f"the reader failed on this photo "
                                           f"({type(exc).__name__}: {exc})")
                    self._record(outcomes, task, *result)
                if not broken:
                    continue
                # A worker died (crash, out of memory, killed). Results already done are kept;
                # the photos that were in flight are re-read one at a time to find the culprit.
                wait(list(inflight), timeout=30)
                for fut, task in list(inflight.items()):
                    try:
                        result = fut.result(timeout=0)
                        self._record(outcomes, task, *result)
                    except Exception:
                        broken.append(task)
                inflight.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                pool = self._new_pool()
                if alone and len(broken) == 1:
                    self._record(outcomes, broken[0], "error",
                                 "the reader crashed while reading this photo (out of memory?)")
                else:
                    suspects.extend(broken)
                    suspects_seen.extend(broken)
        except KeyboardInterrupt:
            # keep what the workers already finished, then stop
            for fut, task in list(inflight.items()):
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    self._record(outcomes, task, *fut.result())
            raise
        finally:
            _stop_pool(pool)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)


# ---------------------------------------------------------------- results from the store


def _score_of(store: Store, reading: dict, rules: str, bonuses):
    """(scored JSON, review squares, corrected?, error) of a stored reading, correction first.

    A correction of the same photo made on another reading (other bonuses) counts too.
    """
    from kingdomino import service

    corrected = reading.get("corrected")
    if corrected is None and reading.get("content_hash"):
        corrected = store.latest_correction_for_photo(reading["content_hash"], rules)
    if corrected:
        try:
            return service.score_grid(corrected, rules=rules, bonuses=bonuses), [], True, None
        except ValueError as exc:
            return None, [], True, f"the corrected kingdom cannot be scored: {exc}"
    if reading.get("error"):
        return None, [], False, reading["error"]
    machine = reading.get("machine") or {}
    if "score" not in machine:
        try:
            machine = service.score_grid({k: machine[k] for k in ("rules", "size", "cells")
                                          if k in machine}, rules=rules, bonuses=bonuses)
        except (ValueError, KeyError) as exc:
            return None, [], False, f"the stored reading cannot be scored: {exc}"
    return machine, list(machine.get("review") or []), False, None


def match_manifest(manifest: list[dict], outcomes: list[Outcome]) -> dict[int, dict]:
    """Manifest row index -> outcome index (or -1 when the photo is not among the inputs).

    A manifest photo matches an input whose source is the same, or ends with ``/photo`` or
    ``!photo`` (zip member). Raises ``ManifestError`` when it matches several inputs.
    """
    result: dict[int, int] = {}
    for m, row in enumerate(manifest):
        photo = row["photo"].replace("\\", "/")
        while photo.startswith("./"):
            photo = photo[2:]
        hits = [i for i, o in enumerate(outcomes)
                if o.item.source.replace("\\", "/") in (photo, row["photo"])
                or o.item.source.replace("\\", "/").endswith(("/" + photo, "!" + photo))]
        if len(hits) > 1:
            names = ", ".join(outcomes[i].item.source for i in hits[:3])
            raise standings_mod.ManifestError(
                f"manifest photo {row['photo']!r} matches several photos ({names}); "
                "write more of its path in the manifest")
        result[m] = hits[0] if hits else -1
    return result


def build_rows(store: Store, outcomes: list[Outcome], *, rules: str, bonuses=(),
               manifest: list[dict] | None = None) -> list[dict]:
    """One row per photo (and per manifest photo not found), from the store; look-first order."""
    rows = []
    for o in outcomes:
        row = {"source": o.item.source, "total": None, "status": "", "player": "", "table": "",
               "round": "", "tiebreak": {}, "review": [], "corrected": False,
               "reading_id": o.reading_id or "", "content_hash": o.content_hash or "",
               "result": None}
        if o.error:
            row["status"] = f"error: {o.error}"
        elif o.reading_id is None:
            row["status"] = "error: not read (the batch was stopped)"
        else:
            reading = store.get(o.reading_id)
            scored, review, corrected, error = _score_of(store, reading, rules, bonuses)
            row["corrected"] = corrected
            if error:
                row["status"] = f"error: {error}"
            else:
                score = scored["score"]
                row.update(total=score.get("total"), tiebreak=dict(score.get("tiebreak") or {}),
                           review=review, result=scored,
                           status="review" if review else "ok")
        rows.append(row)
    if manifest:
        for m, i in match_manifest(manifest, outcomes).items():
            info = manifest[m]
            if i < 0:
                rows.append({"source": info["photo"], "total": None, "tiebreak": {},
                             "status": "error: listed in the manifest but not among the photos "
                                       "given; check the name or add the photo",
                             "review": [], "corrected": False, "reading_id": "",
                             "content_hash": "", "result": None, "_manifest": m})
                row = rows[-1]
            else:
                row = rows[i]
            row.update(player=info["player"], table=info["table"], round=info["round"])
    order = {"error": 0, "review": 1, "ok": 2}
    indexed = sorted(enumerate(rows), key=lambda p: (order[p[1]["status"].split(":")[0]], p[0]))
    return [r for _, r in indexed]


def tiebreak_columns(rows) -> list[str]:
    cols: list[str] = []
    for r in rows:
        for k in r["tiebreak"]:
            if k not in cols:
                cols.append(k)
    return cols


BASE_COLUMNS = ["source", "total", "status", "player", "table", "round"]
TAIL_COLUMNS = ["review", "corrected", "reading_id", "link", "rules", "bonuses", "content_hash"]


def rows_to_csv(rows, *, rules: str, bonuses=()) -> str:
    tb = tiebreak_columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(BASE_COLUMNS + tb + TAIL_COLUMNS)
    for r in rows:
        w.writerow([
            r["source"], "" if r["total"] is None else r["total"], r["status"], r["player"],
            r["table"], r["round"], *(r["tiebreak"].get(k, "") for k in tb),
            json.dumps(r["review"], separators=(",", ":")) if r["review"] else "",
            "yes" if r["corrected"] else "", r["reading_id"],
            f"/r/{r['reading_id']}" if r["reading_id"] else "", rules, " ".join(sorted(bonuses)),
            r["content_hash"],
        ])
    return buf.getvalue()


def row_json(row: dict) -> dict:
    """A row as one JSON Lines object: like ``kingdomino score --json`` plus batch fields."""
    extra = {"status": row["status"], "player": row["player"], "table": row["table"],
             "round": row["round"], "reading_id": row["reading_id"] or None,
             "corrected": row["corrected"]}
    if row["result"] is None:
        return {"source": row["source"], "error": row["status"].partition(": ")[2], **extra}
    return {"source": row["source"], **row["result"], **extra}


def standings_for(rows) -> list:
    entries = [
        standings_mod.Entry(player=r["player"], table=r["table"], round=r["round"],
                            source=r["source"], total=r["total"], tiebreak=r["tiebreak"],
                            status=r["status"].split(":")[0])
        for r in rows if r["player"]
    ]
    return standings_mod.build(entries)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def standings_path(out: Path) -> Path:
    return out.with_name(out.stem + "-standings.csv")


# ---------------------------------------------------------------- the command


def _batch_id(paths, rules, bonuses) -> str:
    key = json.dumps([sorted(os.path.abspath(str(p)) for p in paths), rules, sorted(bonuses)])
    return "cli-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def _progress_bar(total: int):
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="photo", file=sys.stderr, dynamic_ncols=True,
                desc="reading photos")


def run(args, score_fn=None) -> int:
    """``kingdomino batch``; returns the exit code (0 ok, 1 some photo failed, 2 usage, 130 ^C)."""
    err = sys.stderr
    out = Path(args.out)
    if not out.parent.exists():
        print(f"kingdomino: error: the folder for --out does not exist: {out.parent}", file=err)
        return EXIT_USAGE
    if out.is_dir():
        print(f"kingdomino: error: --out is a folder; give a file name such as {out / 'results.csv'}",
              file=err)
        return EXIT_USAGE
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        print("kingdomino: error: --jobs must be 1 or more", file=err)
        return EXIT_USAGE
    manifest = None
    if getattr(args, "manifest", None):
        try:
            text = Path(args.manifest).read_text(encoding="utf-8-sig")
            manifest = standings_mod.read_manifest(text)
        except FileNotFoundError:
            print(f"kingdomino: error: no such manifest: {args.manifest}", file=err)
            return EXIT_USAGE
        except (OSError, UnicodeDecodeError) as exc:
            print(f"kingdomino: error: cannot read the manifest {args.manifest}: {exc}", file=err)
            return EXIT_USAGE
        except standings_mod.ManifestError as exc:
            print(f"kingdomino: error: {args.manifest}: {exc}", file=err)
            return EXIT_USAGE
    try:
        coll = collect(args.paths)
    except BatchUsageError as exc:
        print(f"kingdomino: error: {exc}", file=err)
        return EXIT_USAGE
    if manifest:
        try:  # a manifest that cannot be matched is found before anything is read
            match_manifest(manifest, [Outcome(item) for item in coll.items])
        except standings_mod.ManifestError as exc:
            print(f"kingdomino: error: {args.manifest}: {exc}", file=err)
            coll.close()
            return EXIT_USAGE
    rules, bonuses = args.rules, tuple(sorted(args.bonus))
    store = Store(args.db)
    bar = _progress_bar(len(coll.items))
    counts = {"reused": 0}

    def tick(outcome: Outcome) -> None:
        counts["reused"] += outcome.reused
        if bar is not None:
            bar.update(1)
            if counts["reused"]:
                bar.set_postfix(already_done=counts["reused"], refresh=False)

    batch = Batch(store, rules=rules, bonuses=bonuses,
                  batch_id=_batch_id(args.paths, rules, bonuses), score_fn=score_fn, jobs=jobs,
                  keep_photos=getattr(args, "keep_photos", "review") or "review",
                  retry_errors=getattr(args, "retry_errors", False), progress=tick)
    try:
        try:
            outcomes = batch.run(coll.items)
        finally:
            if bar is not None:
                bar.close()
    except KeyboardInterrupt:
        print(f"kingdomino: interrupted; {batch.scored} photo(s) read in this run are saved in "
              f"{store.path}: run the same command again to finish the rest", file=err)
        store.close()
        coll.close()
        return EXIT_INTERRUPTED
    coll.close()
    try:
        rows = build_rows(store, outcomes, rules=rules, bonuses=bonuses, manifest=manifest)
    except standings_mod.ManifestError as exc:
        print(f"kingdomino: error: {args.manifest}: {exc}", file=err)
        store.close()
        return EXIT_USAGE
    store.close()
    _write_atomic(out, rows_to_csv(rows, rules=rules, bonuses=bonuses))
    table = None
    if manifest:
        table = standings_for(rows)
        _write_atomic(standings_path(out), standings_mod.to_csv(table))
    n_err = sum(r["status"].startswith("error") for r in rows)
    n_rev = sum(r["status"] == "review" for r in rows)
    if getattr(args, "json", False):
        for r in rows:
            print(json.dumps(row_json(r)), flush=True)
    else:
        summary = (f"{len(rows)} photo(s): {len(rows) - n_err - n_rev} ok, {n_rev} to review, "
                   f"{n_err} error(s); {batch.scored} read now, {counts['reused']} already in "
                   f"the store")
        print(summary)
        if coll.skipped:
            print(f"skipped {coll.skipped} file(s) that are not photos")
        print(f"results: {out}")
        if table is not None:
            print(f"standings: {standings_path(out)}")
            print(standings_mod.format_table(table))
        if n_err or n_rev:
            print("photos needing a look are listed first in the CSV; open /r/<reading_id> in "
                  "`kingdomino serve` to check or correct them")
    return EXIT_INPUT if n_err else EXIT_OK
