"""Learning from corrections (``../shared/CONTRACT.md``, "Learning from corrections").

A correction saved in a store teaches the readers that read into that store:

- ``after_correction``: what one saved correction teaches. ``plan`` says which squares (those
  the person changed; every square when the kingdom was posted unchanged, a confirmation; an
  undo takes back what the undone change taught), ``cut`` cuts them from the reading's stored
  photo with the reading's own outline (``vision.read.learned.examples_from_photo``: the
  reader's crop path) and ``Store.learn`` keeps them, one example at most per square of a
  reading. What cannot teach (a kingdom of another size than its reading, a square outside the
  photo, a reading with no stored photo, a terrain the reader does not read) is said in words.
- ``examples_of(store)``: the store's examples as the reader takes them
  (``vision.read.learned.Examples``, the newest ``MAX_EXAMPLES``), loaded again only when the
  store's ``examples_version`` changes: a correction made in another process counts from the
  next photo on, with no restart.
- Each example says which square network made its features (``SquareClassifier.identity``:
  ``network``/``network_identity`` here). Only examples of the network that reads are read
  with: those of another network (the network was retrained, or a release shipped a new one)
  or of an unknown one (a store from before the column) are made again first (``remake``:
  cut again from the reading's stored photo, else read from a thumbnail that is the whole
  crop) and written back once; what cannot be remade is left out and logged
  (``left_out``), never mixed in, and never deleted.
- ``kingdomino.service.reading_with(examples)`` then has the reader read with them.

No Flask here: the web app, the batch and the CLI all call these.
"""
from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field

log = logging.getLogger("kingdomino.learning")

MAX_EXAMPLES = 5000  # a reader reads with at most this many examples: the newest

# what a reading of each kind teaches, for the answers and the lists
CONFIRMATION, CORRECTION, UNDO = "confirmation", "correction", "undo"


def _label(cell) -> tuple | None:
    """A square's ``(terrain, crowns)``, or None when it is not a square the engine wrote."""
    if not isinstance(cell, dict) or not isinstance(cell.get("terrain"), str):
        return None
    crowns = cell.get("crowns", 0)
    if not isinstance(crowns, int) or isinstance(crowns, bool):
        return None
    return cell["terrain"], crowns


def _cells(kingdom) -> list | None:
    cells = kingdom.get("cells") if isinstance(kingdom, dict) else None
    if not isinstance(cells, list) or not all(isinstance(row, list) for row in cells):
        return None
    return cells


def _shape(cells) -> tuple:
    return len(cells), max((len(row) for row in cells), default=0)


def square_name(r: int, c: int) -> str:
    """A square as the CLI names it (``kingdomino.report.square``): r1c1 is the top left."""
    return f"r{r + 1}c{c + 1}"


def _names(squares, most: int = 6) -> str:
    names = [square_name(r, c) for r, c in squares[:most]]
    return ", ".join(names) + (f" and {len(squares) - most} more" if len(squares) > most else "")


@dataclass
class Plan:
    """What one correction teaches: ``squares`` ``(row, col, terrain, crowns)`` to learn,
    ``labels`` the reading's squares as it leaves them (``Store.learn``: examples saying
    otherwise are taken back; None: none of them teaches any more) and ``why`` what could not
    teach, in words."""

    kind: str
    squares: list = field(default_factory=list)
    labels: dict | None = None
    why: list = field(default_factory=list)


def _readable(terrain: str, crowns: int) -> bool:
    """Whether the reader reads squares with this label (the base game's terrains, and crowns
    the game prints on them)."""
    from vision.read.labels import MAX_CROWNS, N_CROWNS, TERRAINS

    return terrain in TERRAINS and 0 <= crowns <= MAX_CROWNS.get(terrain, N_CROWNS - 1)


def plan(machine: dict | None, previous: dict | None, new: dict, step: str) -> Plan:
    """Which squares a correction teaches. ``step`` (``Store.add_correction``): ``"same"``
    (the kingdom as it stood: a confirmation, every square teaches), ``"undo"`` (back one step:
    the squares it gives back a person's label teach; what the undone step taught is taken
    back by ``labels``) or ``"change"`` (the squares changed teach). ``machine``: the reading's
    machine reading (None: built by hand), ``previous``: the kingdom before this correction."""
    kind = {"same": CONFIRMATION, "undo": UNDO}.get(step, CORRECTION)
    if not isinstance(machine, dict) or _cells(machine) is None:
        return Plan(kind, why=["this kingdom was not read from a photo: there is no square to "
                               "learn from"])
    new_cells, read_cells = _cells(new), _cells(machine)
    if new_cells is None or _shape(new_cells) != _shape(read_cells):
        got = "x".join(map(str, _shape(new_cells or [])))
        read = "x".join(map(str, _shape(read_cells)))
        return Plan(kind, why=[f"the corrected kingdom is {got} squares and its reading {read}: "
                               "its squares are not the ones read in the photo, so it teaches "
                               "nothing"])
    labels = {}
    for r, row in enumerate(new_cells):
        for c, cell in enumerate(row):
            label = _label(cell)
            if label is not None:
                labels[(r, c)] = label
    before = _cells(previous) if previous is not None else None
    if before is None or _shape(before) != _shape(new_cells):
        before = read_cells

    def before_label(r, c):
        return _label(before[r][c]) if c < len(before[r]) else None

    if kind == CONFIRMATION:
        wanted = sorted(labels)
    else:
        wanted = [rc for rc in sorted(labels) if labels[rc] != before_label(*rc)]
        if kind == UNDO:  # the squares it gives back the machine's reading teach nothing
            wanted = [(r, c) for r, c in wanted if labels[(r, c)] != _label(read_cells[r][c])]
        elif not wanted:
            return Plan(kind, labels=labels,
                        why=["no square changed (only the rules, bonuses or pieces): nothing "
                             "to learn"])
    out = Plan(kind, labels=labels)
    odd = [rc for rc in wanted if not _readable(*labels[rc])]
    if odd:
        names = sorted({labels[rc][0] for rc in odd})
        out.why.append(f"the reader reads no {', '.join(names)} square with these crowns "
                       f"({_names(odd)}): not learned")
    out.squares = [(r, c, *labels[(r, c)]) for r, c in wanted if (r, c) not in odd]
    return out


# ---------------------------------------------------------------- cutting the squares

_classifier = None
_classifier_lock = threading.Lock()  # one forward pass of the learning classifier at a time
_identity = None  # the identity of the model file the learning classifier loads (or will)


def network():
    """This process's learning classifier (``SquareClassifier`` of the reader's model, loaded
    once, here): it makes the features of what a correction teaches and remakes those of
    examples another network made. Run it under ``_classifier_lock``."""
    global _classifier
    with _classifier_lock:
        if _classifier is None:
            from vision.read.classify import SquareClassifier

            _classifier = SquareClassifier()
        return _classifier


def network_identity() -> str | None:
    """The identity (``SquareClassifier.identity``) of the network this process learns and
    reads with, without loading it when it is not loaded yet: the model file's hash."""
    global _identity
    if _classifier is not None:
        return getattr(_classifier, "identity", None)
    if _identity is None:
        from models import MODELS_DIR
        from vision import config
        from vision.read.classify import network_identity as identity_of

        _identity = identity_of((MODELS_DIR / config.load()["classify"]["model"]).read_bytes())
    return _identity


def default_cutter(image, corners, rows: int, cols: int, cells) -> list:
    """``vision.read.learned.examples_from_photo`` with a square classifier of its own (the
    same model as the reader's: the same features, ``network``), so learning never waits for
    a reading in progress (the web app reads one photo at a time)."""
    from vision.read import learned

    net = network()
    with _classifier_lock:
        return learned.examples_from_photo(net, image, corners, rows, cols, cells)


def _geometry(machine: dict, shape) -> tuple:
    """The reading's corners in the stored photo's pixels (the stored copy is the photo made
    smaller: ``photo_size`` is the photo's), its rows and its columns."""
    import numpy as np

    corners = np.asarray(machine.get("corners"), dtype=np.float64)
    if corners.shape != (4, 2) or not np.all(np.isfinite(corners)):
        raise ValueError("the reading has no outline in the photo")
    size = machine.get("photo_size")
    factor = 1.0
    if isinstance(size, (list, tuple)) and len(size) == 2 and size[0]:
        factor = shape[1] / float(size[0])
    cells = _cells(machine) or []
    rows = int(machine.get("rows") or len(cells))
    cols = int(machine.get("cols") or _shape(cells)[1])
    if rows < 1 or cols < 1:
        raise ValueError("the reading has no squares")
    return corners * factor, rows, cols


def cut(photo: bytes, machine: dict, squares, cutter=None) -> tuple[list, list]:
    """The squares ``(row, col, terrain, crowns)`` cut from the stored photo with the
    reading's outline: ``(examples, squares that lie outside the photo)``, each example
    ``(row, col, terrain, crowns, features, thumbnail JPEG)``."""
    from vision.photo import files as photo_io

    image = photo_io.load_image(photo)
    corners, rows, cols = _geometry(machine, image.shape)
    got = list((cutter or default_cutter)(image, corners, rows, cols, list(squares)))
    taught = {(int(e[0]), int(e[1])) for e in got}
    return got, [(r, c) for r, c, _, _ in squares if (r, c) not in taught]


# ---------------------------------------------------------------- one correction


def after_correction(store, reading: dict, saved: dict, new: dict, *, enabled: bool = True,
                     cutter=None) -> dict:
    """Learn from one saved correction: ``reading`` the stored reading (``Store.get``),
    ``saved`` what ``Store.add_correction`` returned, ``new`` the kingdom saved. ``enabled``
    False (``--no-learning``): nothing new is learned, but what the reading's squares no
    longer say is still taken back. Never raises for the photo: what could not teach is said
    in ``why``. Returns the answer's ``learned``: ``{"kind", "added", "removed", "seconds"}``,
    with ``"why"`` when some square (or all) taught nothing."""
    started = time.perf_counter()
    p = plan(saved.get("machine"), saved.get("previous"), new, saved.get("step", "change"))
    why = list(p.why)
    squares = p.squares
    if squares and not enabled:
        why.append("learning is off (--no-learning): nothing was learned")
        squares = []
    if squares and p.kind == CONFIRMATION:  # what already says the same is kept as it is
        have = store.example_labels(reading["id"])
        squares = [s for s in squares if have.get((s[0], s[1])) != (s[2], s[3])]
        if not squares:
            why.append("every square of this kingdom has already taught what it shows")
    examples = []
    if squares:
        photo = store.photo(reading["id"])
        if not photo:
            why.append("this reading has no stored photo to learn from (a batch keeps the "
                       "photos needing a look only, unless --keep-photos all)")
        else:
            try:
                examples, outside = cut(photo, saved["machine"], squares, cutter)
            except (ValueError, OSError, MemoryError) as exc:
                log.warning("cutting the squares of %s failed: %s", reading["id"], exc)
                why.append(f"the squares could not be cut from the stored photo ({exc}): "
                           "nothing was learned")
            else:
                if outside:
                    why.append(f"{_names(outside)} lie outside the photo: not learned")
    rows = [(r, c, t, k, _feature_bytes(f), bytes(thumb) if thumb else None)
            for r, c, t, k, f, thumb in examples]
    # the network that made these features: the cutter's (a cutter given may say it by an
    # ``identity``; one that does not makes examples of a network unknown, remade before use)
    made_by = getattr(cutter or network(), "identity", None) if rows else None
    kept = store.learn(reading["id"], saved["id"], p.labels, rows,
                       kind=CONFIRMATION if p.kind == CONFIRMATION else CORRECTION,
                       scope=reading.get("batch"), network=made_by)
    if kept is None:
        kept = {"added": [], "removed": 0}
        why.append("a later correction of this reading was saved meanwhile: it teaches instead")
    out = {"kind": p.kind, "added": len(kept["added"]), "removed": kept["removed"],
           "correction": saved["id"], "seconds": round(time.perf_counter() - started, 3)}
    if why:
        out["why"] = "; ".join(why)
    return out


def _feature_bytes(feature) -> bytes:
    import numpy as np

    return np.ascontiguousarray(np.asarray(feature, dtype=np.float32).ravel()).tobytes()


# ---------------------------------------------------------------- reading with them

_cache: dict = {}
_cache_lock = threading.Lock()
_load_lock = threading.Lock()  # one thread of a process loads (and remakes) at a time
# per store and network: the examples that could not be remade, ``{id: why}`` (not tried again)
_left_out: dict = {}


def examples_of(store, net=None):
    """The store's examples as the reader takes them (``vision.read.learned.Examples``, the
    newest ``MAX_EXAMPLES``), or None when it holds none. Kept per store file and loaded
    again only when ``Store.examples_version`` changes (one cheap query a photo)."""
    return versioned_examples(store, net)[1]


def versioned_examples(store, net=None) -> tuple:
    """``(version, examples)``: ``examples_of`` and the ``Store.examples_version`` they are
    of (the batch sends them to its worker processes when the version changes).

    Only examples whose features the reading network made are read with (``network``, or
    ``net``: an object with ``identity``, ``cfg`` and ``features`` as
    ``SquareClassifier``'s). Those another network made, or an unknown one (a store from
    before the examples said which), are made again first (``remake``) and written back,
    once; what cannot be remade is left out of reading, never mixed in."""
    version = store.examples_version()
    if version[1] == 0:
        return version, None
    ident = getattr(net, "identity", None) if net is not None else network_identity()
    key = store.path if store.path != ":memory:" else id(store)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and hit[:2] == (version, ident):
        return version, hit[2]
    with _load_lock:
        with _cache_lock:
            hit = _cache.get(key)
        if hit is not None and hit[:2] == (version, ident):  # another thread just loaded them
            return version, hit[2]
        rows = store.examples(features=True, limit=MAX_EXAMPLES)
        if ident is not None and any(row["network"] != ident for row in rows):
            net = net if net is not None else network()
            ident = getattr(net, "identity", None)
            rows = remake(store, rows, net, _left_out.setdefault((key, ident), {}))
        examples = build_examples(rows, ident)
        with _cache_lock:
            _cache[key] = (version, ident, examples)
    return version, examples


def left_out(store, net=None) -> dict:
    """``{example id: why}``: the store's examples that could not be remade for this
    process's network (or ``net``'s), so its readings go without them. The example and its
    correction stay in the store."""
    ident = getattr(net, "identity", None) if net is not None else network_identity()
    key = store.path if store.path != ":memory:" else id(store)
    return dict(_left_out.get((key, ident), {}))


def remake(store, rows, net, skip: dict | None = None) -> list:
    """The stored examples ``rows`` (``Store.examples(features=True)``) with those another
    network made, or an unknown one, made again by ``net``: each square cut again from its
    reading's stored photo with the reading's outline (``cut``: what ``net`` would cut and
    read today), else, with no stored photo, read from its thumbnail when that is the whole
    crop the network reads (the crop as cut, kept as a JPEG). The new features and ``net``'s
    identity are written back (``Store.remake_examples``), so this is done once. An example
    that cannot be remade keeps its old features and network, so it is left out of reading;
    its reason is put in ``skip`` (``{id: why}``), whose examples are not tried again."""
    ident = getattr(net, "identity", None)
    skip = {} if skip is None else skip
    todo = [row for row in rows if row["network"] != ident and row["id"] not in skip]
    if not todo:
        return rows
    started = time.perf_counter()
    made, why = {}, {}
    by_reading: dict = {}
    for row in todo:
        by_reading.setdefault(row["reading_id"], []).append(row)
    sources = store.example_sources(list(by_reading))

    def cutter(image, corners, n_rows, n_cols, cells):
        from vision.read import learned

        with _classifier_lock:
            return learned.examples_from_photo(net, image, corners, n_rows, n_cols, cells)

    from_photo = 0
    for rid, group in by_reading.items():
        machine, photo = sources.get(rid, (None, None))
        if not photo or not isinstance(machine, dict):
            for row in group:
                why[row["id"]] = ("its reading has no stored photo" if rid in sources
                                  else "its reading is gone")
            continue
        squares = [(row["row"], row["col"], row["terrain"], int(row["crowns"])) for row in group]
        try:
            got, _ = cut(photo, machine, squares, cutter)
        except (ValueError, OSError, MemoryError, RuntimeError) as exc:
            for row in group:
                why[row["id"]] = f"its square could not be cut from the stored photo ({exc})"
            continue
        feature = {(int(e[0]), int(e[1])): e[4] for e in got}
        for row in group:
            f = feature.get((row["row"], row["col"]))
            if f is None:
                why[row["id"]] = "its square lies outside the stored photo"
            else:
                made[row["id"]] = _feature_bytes(f)
                from_photo += 1
    from_thumbnail = 0
    for eid in list(why):
        f, unfit = _from_thumbnail(net, store.example_thumbnail(eid))
        if f is not None:
            made[eid] = _feature_bytes(f)
            del why[eid]
            from_thumbnail += 1
        else:
            why[eid] += f" and {unfit}"
    todo_by_id = {row["id"]: row for row in todo}
    try:
        store.remake_examples([(eid, f, ident, todo_by_id[eid]["feature"],
                                todo_by_id[eid]["network"]) for eid, f in made.items()])
    except sqlite3.Error as exc:  # read with them all the same; written at the next load
        log.warning("the remade learned examples could not be written back (%s): they are "
                    "remade again at the next load", exc)
    skip.update(why)
    if made:
        log.info("remade %d learned examples for the square network %s (%d cut again from "
                 "their stored photos, %d from their thumbnails) in %.2f s: another network, "
                 "or one not recorded, had made their features", len(made), ident, from_photo,
                 from_thumbnail, time.perf_counter() - started)
    if why:
        reasons: dict = {}
        for text in why.values():
            reasons[text] = reasons.get(text, 0) + 1
        log.warning("%d learned examples made by another square network than %s are left out "
                    "of reading (kept in the store with their corrections): %s", len(why), ident,
                    "; ".join(f"{n} because {text}" for text, n in reasons.items()))
    out = []
    for row in rows:
        if row["id"] in made:
            row = {**row, "feature": made[row["id"]], "network": ident}
        out.append(row)
    return out


def _from_thumbnail(net, jpeg) -> tuple:
    """``(net's features of an example's thumbnail, None)``, or ``(None, why not)`` when it
    has none or it is not the whole crop ``net`` reads (its crop size: ``[classify] cell``
    and ``crop_margin``)."""
    import cv2
    import numpy as np
    from vision.read.crops import crop_size

    if not jpeg:
        return None, "it has no thumbnail"
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    side = crop_size(net.cfg["cell"], net.cfg["crop_margin"])
    if image is None or image.shape != (side, side, 3):
        return None, f"its thumbnail is not the whole {side}x{side} crop the network reads"
    with _classifier_lock:
        return net.features(image[None])[0], None


def build_examples(rows, network: str | None = None):
    """``vision.read.learned.Examples`` of stored examples (``Store.examples(features=True)``,
    newest first). With ``network``, only those that network made (their ``network``); of
    those, only those with the newest one's length of features (older ones were learned with
    another model), and none whose label the reader cannot read."""
    import numpy as np
    from vision.read import learned

    out, width = [], None
    for row in rows:
        if network is not None and row.get("network") != network:
            continue
        feature = np.frombuffer(row["feature"], dtype=np.float32)
        if width is None:
            width = len(feature)
        if len(feature) != width or width == 0:
            continue
        try:
            out.append(learned.Example(id=row["id"], feature=feature.copy(),
                                       terrain=row["terrain"], crowns=int(row["crowns"])))
        except ValueError:
            continue
    return learned.Examples(out, network=network) if out else None


def reading_examples(store, enabled: bool = True):
    """What a reader reading into ``store`` reads with: its examples, or None (learning off,
    none learned yet)."""
    return examples_of(store) if enabled and store is not None else None


def count(reading: dict | None) -> int:
    """How many examples a reading (the contract's JSON) says it was read with."""
    n = reading.get("learned") if isinstance(reading, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def keep_reading(store, data: bytes, obj: dict, source: str, rules: str, bonuses=()) -> str:
    """Store a photo read by ``kingdomino score --store`` as the web app stores an upload (the
    machine's reading, a small copy of the photo and its size), so that it can be corrected
    (``/r/<id>`` of ``kingdomino serve`` on the same store) and its correction teach. Returns
    the reading's id."""
    from kingdomino.batch.photo import photo_copy
    from kingdomino.store import content_hash

    machine = dict(obj)
    copy = photo_copy(data)
    if copy is not None:
        machine["photo_size"] = copy[1]
    return store.add_reading(rules=rules, bonuses=bonuses, machine=machine, source=source,
                             content_hash=content_hash(data),
                             photo=copy[0] if copy is not None else None)
