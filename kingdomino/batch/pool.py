"""The batch's worker pool: photos the store does not know yet are read in worker processes.

``Batch.run`` reads each item's bytes in this (parent) process, hashes them and asks the store
whether a batch already read that photo under these rules and bonuses; only the others are sent
to the worker processes (each builds the reader once). Every result is written to the SQLite
store by the parent as soon as it comes back, so an interrupted run loses nothing it finished.

Two batches on one store share the work: a photo is *claimed* in the store before it is read; a
photo another running batch holds is left for the end and then taken from the store once that
batch has read it (or read here, if that batch is gone).

Workers die with the process that started the pool: each watches it and exits when it is gone
(after ``kill -9`` of ``kingdomino batch`` or ``kingdomino serve`` no worker is left behind).
Under the forkserver start method (the web app) a worker's parent is the fork server, which lives
as long as any worker holds its pipe, so a worker watches the pool's owner itself; once the
workers are gone the fork server and the resource tracker see their pipes close and end too.

Any exception while reading one photo becomes that photo's error, a sentence for a person; the
traceback goes to the log (``--verbose``).

With ``learning`` (``kingdomino batch`` unless ``--no-learning``), each photo is read with what
the store's corrections taught (``kingdomino.learning``), as they are when it is sent: a
correction made in the web app while the batch runs counts from the next photo on. The workers
get the examples when they start, and with the next tasks whenever the store's examples change
(until every worker has said it holds them); a worker that finds itself behind all the same
loads them from the store file.
"""
from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from kingdomino.batch.inputs import Item
from kingdomino.batch.photo import ItemError, photo_copy, read_item
from kingdomino.store import Store, content_hash

log = logging.getLogger("kingdomino.batch")

PARENT_POLL_SECONDS = 0.5  # how often a worker checks that its parent is still there
CLAIM_POLL_SECONDS = 0.25  # how often a batch looks whether another batch finished a photo


@dataclass
class Outcome:
    """What became of one item: a stored reading (its id), or an error found before reading."""

    item: Item
    content_hash: str | None = None
    reading_id: str | None = None
    error: str | None = None
    reused: bool = False
    table_read: str | None = None  # --all: the stored read of this table photo (every kingdom)


def score_photo_bytes(data: bytes, rules: str, bonuses) -> dict:
    """The default scoring function: the real reader (built once per process) and engine."""
    from kingdomino import service

    return service.score_photo(data, rules=rules, bonuses=tuple(bonuses))


def score_table_bytes(data: bytes, rules: str, bonuses) -> dict:
    """The default scoring function of ``--all``: every kingdom of a table photo, scored
    (``kingdomino.table``), as ``{"kingdoms": [object with "kingdom", "corners", "cut", ...]}``.
    Raises ``vision.PhotoError`` when the photo holds no kingdom."""
    from kingdomino import table

    return {"kingdoms": table.score_table(data, rules=rules, bonuses=tuple(bonuses))}


def _needs_look(payload) -> bool:
    kingdoms = payload.get("kingdoms")
    if isinstance(kingdoms, list):  # a table photo: any kingdom to check or cut by the edge
        return any(bool(k.get("review")) or bool(k.get("cut")) for k in kingdoms)
    return bool(payload.get("review"))


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie nobody has reaped yet has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: ours has ended and the number is reused
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _owner_handle(owner: int):
    """A poll object that wakes up the moment process ``owner`` ends (Linux pidfd), or None
    where there is none (then the owner is looked at every ``PARENT_POLL_SECONDS``)."""
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        os._exit(1)  # the owner has already ended
    except OSError:  # an older kernel
        return None
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return poller


def _watch_parent(parent: int, owner: int) -> None:
    """Exit this worker as soon as the pool's owner ends, or this process's parent does."""
    poller = _owner_handle(owner) if owner != parent else None
    while True:
        if poller is not None:
            if poller.poll(PARENT_POLL_SECONDS * 1000):
                os._exit(1)
        else:
            time.sleep(PARENT_POLL_SECONDS)
            if owner != parent and not _running(owner):
                os._exit(1)
        if os.getppid() != parent:  # the parent died: this process was handed to another
            os._exit(1)


# this process's learned examples (a worker's, or the batch's own when it reads in process):
# [the store file they come from, their version, the examples]
_held: list = [None, None, None]


def _hold(store_path, version, examples) -> None:
    _held[:] = [store_path, version, examples]


def _examples_for(learned):
    """The examples a task is read with: ``learned`` is ``(store path, version, examples,
    attached)`` (None: learning off); examples not attached are those held, loaded again from
    the store when held ones are of another version."""
    if learned is None:
        return None
    path, version, examples, attached = learned
    if attached:
        _hold(path, version, examples)
    elif _held[1] != version and path not in (None, ":memory:"):
        from kingdomino import learning

        store = Store(path)
        try:
            _hold(path, *learning.versioned_examples(store))
        finally:
            store.close()
    return _held[2]


def _worker_init(pids=None, parent: int | None = None, owner: int | None = None,
                 learned=None) -> None:
    """Set up a worker: ``parent`` is the process that should be its parent (None: the one it
    has now, such as the fork server) and ``owner`` the process that made the pool;
    ``learned``: ``(store path, version, examples)`` to read with (None: none)."""
    if learned is not None:
        _hold(*learned)
    # Ctrl-C goes to the whole process group: only the parent reacts (it stops the workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = parent or os.getppid()
    owner = owner or parent
    if os.getppid() != parent or (owner != parent and not _running(owner)):
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent, owner), daemon=True,
                     name="kingdomino-parent-watch").start()
    if pids is not None:
        pids.put(os.getpid())


def _work(score_fn, data: bytes, rules: str, bonuses, keep: str = "none", learned=None):
    """Run in a worker: ``(kind, payload, copy, detail, held)`` where kind is "ok" (payload:
    scored JSON) or "error" (payload: message), copy is ``photo_copy`` when ``keep`` asks for
    one, detail the traceback of an unexpected failure (for the log) and held ``(process id,
    version of the learned examples it holds)``. ``learned``: see ``_examples_for``. Never
    raises for a bad photo."""
    from kingdomino import service

    detail = None
    try:
        examples = _examples_for(learned)
    except Exception:  # learning never stops a photo from being read: read it without
        log.exception("loading the learned examples failed; reading without them")
        examples = None
    with _one_decode(data):   # the reading's decode makes the copy too
        try:
            with service.reading_with(examples):
                kind, payload = "ok", score_fn(data, rules, bonuses)
        except (ValueError, OSError) as exc:  # PhotoError, KingdomError: a message for a person
            kind, payload = "error", str(exc) or type(exc).__name__
        except Exception as exc:  # a bug in the reader must not stop the batch
            kind, payload = "error", unexpected_error(exc)
            detail = traceback.format_exc()
        needs_look = kind == "error" or _needs_look(payload)
        copy = None
        if keep == "all" or (keep == "review" and needs_look):
            copy = photo_copy(data)
    return kind, payload, copy, detail, (os.getpid(), _held[1])


def _one_decode(data: bytes):
    """``vision.photo.files.decode_once`` for a photo read as its reading decodes it; no
    sharing (each decodes on its own) when its header is refused: the reading says why."""
    from vision.photo import files as photo_io
    from vision.photo import scale as photo_scale

    try:
        return photo_io.decode_once(data, photo_scale.reading_reduction(data))
    except ValueError:
        return contextlib.nullcontext()


def unexpected_error(exc: BaseException) -> str:
    """The sentence a person reads when the reader failed in a way it should not."""
    return ("the reader failed on this photo because of a fault in the program, not in the "
            f"photo ({type(exc).__name__}); the other photos are read; run with --verbose for "
            "the details and report it")


@dataclass
class _Task:
    content_hash: str
    data: bytes
    indexes: list[int]
    done: bool = False


class Batch:
    """Scores items into the store. ``run(items) -> list[Outcome]`` (same order as items).

    ``mp_context``: how the workers start (None: this platform's default, fork on Linux). A
    caller that has done OpenCV work itself (its thread pool started) should pass a
    forkserver context, as the web app does: workers forked from such a process spend about a
    third more CPU on each photo (docs/history.md, issue 51)."""

    def __init__(self, store: Store, *, rules: str = "kingdomino", bonuses=(), batch_id=None,
                 score_fn=None, jobs: int | None = None, keep_photos: str = "review",
                 retry_errors: bool = False, mp_context=None, progress=None,
                 all_kingdoms: bool = False, learning: bool = False):
        self.store = store
        # read with what the store's corrections taught (kingdomino.learning)
        self.learning = learning
        self._pool_version = None  # the examples' version the pool's workers started with
        self._holding: dict = {}   # worker process id -> the version it said it holds
        # --all: ``score_fn`` returns {"kingdoms": [...]} and every kingdom is its own reading
        self.all_kingdoms = all_kingdoms
        self.rules = rules
        self.bonuses = tuple(sorted(bonuses))
        self.batch_id = batch_id
        self.score_fn = score_fn or (score_table_bytes if all_kingdoms else score_photo_bytes)
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.keep_photos = keep_photos
        self.retry_errors = retry_errors
        self.mp_context = mp_context
        self.progress = progress  # callable(outcome) after each item is settled
        self.scored = 0  # photos actually sent to the reader in this run
        self.owner = Store.claim_owner()  # this run's name on the photos it claims

    # -- bookkeeping
    def _settle(self, outcomes, index: int) -> None:
        if self.progress:
            self.progress(outcomes[index])

    def _tasks(self, items, indexes, outcomes, deferred: list):
        """Yield the photos that need reading; settle the others (errors, already in the store).
        Photos another running batch has claimed go to ``deferred`` as ``(index, hash)``."""
        in_flight: dict[str, _Task] = {}
        budget: dict = {}
        for i in indexes:
            item = items[i]
            out = outcomes[i] = Outcome(item)
            try:
                data = read_item(item, budget)
            except ItemError as exc:
                out.error = str(exc)
                self._settle(outcomes, i)
                continue
            h = out.content_hash = content_hash(data)
            if h in in_flight and not in_flight[h].done:
                in_flight[h].indexes.append(i)  # the same photo twice: read it once
                continue
            if self._reuse(h, out):
                self._settle(outcomes, i)
                continue
            if not self.store.claim(self._claim_key(h), self.rules, self.bonuses, self.owner):
                deferred.append((i, h))  # another batch is reading it now
                continue
            if self._reuse(h, out) or self._rescore_known(h, item, out):
                self.store.release(self._claim_key(h), self.rules, self.bonuses, self.owner)
                self._settle(outcomes, i)
                continue
            task = in_flight[h] = _Task(h, data, [i])
            yield task

    def _claim_key(self, h: str) -> str:
        """The claim's name for a photo: reading every kingdom of it is other work than reading
        its most prominent one, so the two modes never wait on each other."""
        return f"table:{h}" if self.all_kingdoms else h

    def _known(self, h: str) -> dict | None:
        """The stored batch reading of this photo (with --all: the first of its kingdoms)."""
        if not self.all_kingdoms:
            return self.store.find_batch_reading(h, self.rules, self.bonuses)
        readings = self.store.find_batch_table(h, self.rules, self.bonuses)
        return readings[0] if readings else None

    def _reuse(self, h: str, out: Outcome) -> bool:
        known = self._known(h)
        if known is None or (known["error"] and self.retry_errors):
            return False
        out.reading_id, out.reused = known["id"], True
        out.table_read = known.get("table_read") if self.all_kingdoms else None
        return True

    def _rescore_known(self, h: str, item: Item, out: Outcome) -> bool:
        """The photo was read before with other bonuses: score that kingdom, do not re-read it.
        The new reading derives from that one, so a correction made there counts here too."""
        if self.all_kingdoms:
            return self._rescore_table(h, item, out)
        known = self.store.find_batch_photo(h, self.rules)
        if known is None:
            return False
        result = self._rescored(known["machine"])
        if result is None:
            return False
        out.reading_id = self.store.add_reading(
            rules=self.rules, bonuses=self.bonuses, machine=result, source=item.source,
            content_hash=h, batch=self.batch_id, derived_from=known["id"],
            photo=self.store.photo(known["id"]) if self.keep_photos != "none" else None)
        out.reused = True
        return True

    def _rescored(self, machine: dict) -> dict | None:
        """A stored machine reading scored again with this batch's rules and bonuses (what else
        it holds, such as the kingdom's number and corners, kept), or None when it cannot be."""
        from kingdomino import service

        try:
            result = service.score_grid({k: machine[k] for k in ("rules", "size", "cells")},
                                        rules=self.rules, bonuses=self.bonuses)
        except (ValueError, KeyError):
            return None
        result.update({k: v for k, v in machine.items() if k not in result})
        return result

    def _rescore_table(self, h: str, item: Item, out: Outcome) -> bool:
        """--all: the table photo was read before with other bonuses: every kingdom re-scored
        (each derives from its reading there), the photo not read again."""
        known = self.store.find_batch_table_photo(h, self.rules)
        if not known:
            return False
        from kingdomino import table

        objs = [self._rescored(reading["machine"]) for reading in known]
        if None in objs:
            return False
        try:  # rule sets that award across the kingdoms (Origins totems) see them together
            objs = table.award_across(objs, self.rules, self.bonuses)
        except (ValueError, KeyError):
            return False
        photo = self.store.photo(known[0]["id"]) if self.keep_photos != "none" else None
        group, ids = self.store.add_table_readings(
            rules=self.rules, bonuses=self.bonuses, kingdoms=objs, source=item.source,
            content_hash=h, batch=self.batch_id, photo=photo,
            derived_from=[r["id"] for r in known])
        out.reading_id, out.table_read, out.reused = ids[0], group, True
        return True

    def _record_table(self, outcomes, task: _Task, kind: str, payload, copy) -> None:
        """--all: every kingdom of the photo stored at once (or its one error)."""
        first = outcomes[task.indexes[0]].item
        kingdoms, error = [], payload if kind == "error" else None
        if kind == "ok":
            for k, obj in enumerate(payload.get("kingdoms") or []):
                machine = dict(obj)
                machine["kingdom"] = int(machine.get("kingdom", k))
                if copy is not None:
                    machine["photo_size"] = copy[1]
                kingdoms.append(machine)
            if not kingdoms:
                error = ("no kingdom found in this photo: take it from above with every kingdom "
                         "whole in view")
        group, ids = self.store.add_table_readings(
            rules=self.rules, bonuses=self.bonuses, kingdoms=kingdoms if error is None else (),
            error=error, source=first.source, content_hash=task.content_hash,
            batch=self.batch_id, photo=copy[0] if copy is not None else None)
        self._recorded(outcomes, task, ids[0], group)

    def _recorded(self, outcomes, task: _Task, rid: str, table_read: str | None = None) -> None:
        self.store.release(self._claim_key(task.content_hash), self.rules, self.bonuses,
                           self.owner)
        self.scored += 1
        task.done = True
        task.data = b""
        for j in task.indexes:
            outcomes[j].reading_id = rid
            outcomes[j].table_read = table_read
            self._settle(outcomes, j)

    def _learned(self, pooled: bool = False):
        """What the next task is read with (``_examples_for``'s ``learned``), or None. To the
        pool's workers the examples go only when they changed since the pool started, until
        every worker has said it holds them."""
        if not self.learning:
            return None
        from kingdomino import learning

        version, examples = learning.versioned_examples(self.store)
        attached = not pooled or (version != self._pool_version and sum(
            held == version for held in self._holding.values()) < self.jobs)
        return (self.store.path, version, examples if attached else None, attached)

    def _record(self, outcomes, task: _Task, kind: str, payload, copy=None, detail=None,
                held=None) -> None:
        if held is not None:
            self._holding[held[0]] = held[1]
        first = outcomes[task.indexes[0]].item
        if detail:
            log.error("reading %s failed:\n%s", first.source, detail.rstrip())
        if self.all_kingdoms:
            self._record_table(outcomes, task, kind, payload, copy)
            return
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
        self._recorded(outcomes, task, rid)

    def run(self, items: list[Item]) -> list[Outcome]:
        outcomes: list = [None] * len(items)
        pending = list(range(len(items)))
        try:
            while pending:
                deferred: list = []
                tasks = self._tasks(items, pending, outcomes, deferred)
                if self.jobs == 1:
                    for task in tasks:
                        self._record(outcomes, task, *_work(self.score_fn, task.data, self.rules,
                                                            self.bonuses, self.keep_photos,
                                                            self._learned()))
                else:
                    self._run_pool(tasks, outcomes)
                if deferred:
                    self._wait_for_others(deferred)
                pending = [i for i, _ in deferred]
        finally:
            self.store.release_all(self.owner)
        return outcomes

    def _wait_for_others(self, deferred) -> None:
        """Wait until another batch has read one of these photos, or given it up (then this
        run claims it). This run holds no claim meanwhile, so two batches never wait on each
        other."""
        while True:
            for _, h in deferred:
                if (self._known(h) is not None
                        or self.store.claim(self._claim_key(h), self.rules, self.bonuses,
                                            self.owner)):
                    return
            time.sleep(CLAIM_POLL_SECONDS)

    def _new_pool(self) -> "_Pool":
        start = None
        if self.learning:  # the workers start with the store's examples as they are now
            from kingdomino import learning

            version, examples = learning.versioned_examples(self.store)
            start = (self.store.path, version, examples)
            self._pool_version = version
        self._holding = {}
        return _Pool(self.jobs, self.mp_context, start)

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
                                          self.bonuses, self.keep_photos,
                                          self._learned(pooled=True))
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
                        result = ("error", unexpected_error(exc), None,
                                  traceback.format_exc())
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
                _stop_pool(pool)        # the live workers too: one may hold the job queue's lock
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


class _Starting:
    """The multiprocessing context a pool starts its workers from, keeping every worker
    process it starts: a worker that started too late to say its process id is stopped too
    (left alive it can wait for ever on the job queue's lock of a worker already stopped, and
    the interpreter then never exits)."""

    def __init__(self, ctx):
        self._ctx = ctx
        self.started: list = []

    def Process(self, *args, **kwargs):  # noqa: N802 -- the context's own name
        proc = self._ctx.Process(*args, **kwargs)
        self.started.append(proc)
        return proc

    def __getattr__(self, name):
        return getattr(self._ctx, name)


class _Pool:
    """A ``ProcessPoolExecutor`` whose workers say their process ids (so that they can be
    stopped without the executor's private attributes) and watch their parent."""

    def __init__(self, jobs: int, mp_context=None, learned=None):
        ctx = mp_context or multiprocessing.get_context()
        self._starting = _Starting(ctx)
        self._pids = ctx.SimpleQueue()
        self._known: set[int] = set()
        # started by fork or spawn, a worker's parent is this process; under forkserver it is
        # the fork server, which outlives this process while a worker holds its pipe: there
        # the worker watches this process, its owner, itself
        parent = os.getpid() if ctx.get_start_method() in ("fork", "spawn") else None
        self.executor = ProcessPoolExecutor(max_workers=jobs, mp_context=self._starting,
                                            initializer=_worker_init,
                                            initargs=(self._pids, parent, os.getpid(),
                                                      learned))

    def submit(self, *args, **kwargs):
        return self.executor.submit(*args, **kwargs)

    def shutdown(self, **kwargs) -> None:
        self.executor.shutdown(**kwargs)

    def worker_pids(self) -> set[int]:
        while not self._pids.empty():
            self._known.add(self._pids.get())
        return set(self._known)

    def started(self) -> list:
        """Every worker process this pool started (alive or not)."""
        return list(self._starting.started)


def _stop_pool(pool: _Pool) -> None:
    pids = pool.worker_pids()
    pool.shutdown(wait=False, cancel_futures=True)
    procs = [p for p in multiprocessing.active_children() if p.pid in pids]
    procs += [p for p in pool.started() if p not in procs]
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    # join returns once the worker has closed its end of the sentinel pipe, which its exit does
    # a moment before the kernel lets it be reaped: until then it still reads as alive
    deadline = time.monotonic() + 5.0
    for proc in procs:
        proc.join(timeout=max(0.0, deadline - time.monotonic()))
        while proc.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
