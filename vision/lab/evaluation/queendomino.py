"""``kingdomino evaluate --queendomino``: how the town squares of the six labelled Queendomino
photos are read (issue 53), under each rule set, through the service layer as the CLI reads.

Each photo (``vision.lab.datasets.load_queendomino``: our labels) is read two ways:

- ``found``: the kingdom the reader finds itself (``kingdomino.service.score_photo``, as
  ``kingdomino score PHOTO`` reads it);
- ``labelled``: the labelled rectangle, as ``kingdomino score PHOTO --corners ... --size 5``
  reads it for a whole 5x5 (``score_photo`` with the corners); a close view's smaller rectangle
  (photos 17, 24) is no kingdom outline the CLI takes, so it is read by ``reader().read`` with
  the corners, rows and columns and scored by ``service.score_reading``.

and under ``--rules queendomino`` and ``--rules kingdomino``. Each read square is put on the
labelled square under its centre (``evaluate.frame_places``), so a frame the reader chose
otherwise (bigger, shifted, turned) is still compared square by square. Per photo and summed:

- ``towns``: labelled town squares; of them ``town`` (read as ``town``), ``flagged`` (in
  review, whatever they were read as), ``town_flagged`` (both), ``neither`` (the failure: read
  as another terrain and not in review, or not read at all: ``missed``, under no read square);
  so ``town + flagged - town_flagged + neither == towns``;
  ``read_as``: what the towns were read as; ``town_cells``: each town under a read square,
  as it was read (terrain, crowns, in review, the reader's confidence).
- ``others``: labelled squares that are not towns under a read square (empty ones included);
  ``wrong`` (terrain, or crowns of a tile, not the label's), ``flagged``, ``wrong_unflagged``;
  ``tiles_missed``: labelled tiles under no read square; ``off_as_tile``: read squares off the
  labelled rectangle read as a tile.
- ``warning``: the first warning that speaks of squares that are not Kingdomino terrain
  (``NOT_KINGDOMINO``: it names Queendomino or towns, or says "not/no Kingdomino"), or None;
  ``queendomino_warning``: the first that names Queendomino or towns (``NAMES_QUEENDOMINO``;
  on a photo without towns, a false alarm).
- ``ok``: the held-out check's test for this photo: under ``queendomino`` every town read as
  ``town`` or flagged; under ``kingdomino`` every town flagged and that warning given (None for
  a photo without towns).

Six photos of one game, about 18 town squares in all, half of them the same three squares seen
again: a count here is a handful of squares, not a rate, and says nothing of other games' art.

``python3 -m vision.lab.evaluation.queendomino [--rules R ...] [--ways W ...] [--only TEXT]
[--out FILE]``; ``--drawn N`` instead compares ``N`` drawn towns
(``vision.lab.scenes.render.town_crops``) with the photos' real ones as the square classifier
reads and sees them (``drawn_against_real``).
"""
from __future__ import annotations

import inspect
import re
from collections import Counter
from pathlib import Path

import numpy as np

RULES = ("queendomino", "kingdomino")
WAYS = ("found", "labelled")
NOT_KINGDOMINO = re.compile(r"queendomino|\btowns?\b|\bnot (?:a )?kingdomino|\bno kingdomino",
                            re.IGNORECASE)
NAMES_QUEENDOMINO = re.compile(r"queendomino|\btowns?\b", re.IGNORECASE)


# ----------------------------------------------------------------------------- reading
def read_photo(photo, rules: str, way: str) -> dict:
    """The service's scored JSON of ``photo`` (a ``QueendominoPhoto``) read ``way`` under
    ``rules``. Raises what the service raises (``ValueError`` for a photo it cannot read)."""
    from kingdomino import service

    if way == "found":
        return service.score_photo(str(photo.path), rules=rules)
    if way != "labelled":
        raise ValueError(f"way must be one of {', '.join(WAYS)}, not {way!r}")
    corners = [[float(x), float(y)] for x, y in photo.corners]
    if photo.rows == photo.cols and photo.rows in (5, 7):
        return service.score_photo(str(photo.path), rules=rules, corners=corners,
                                   size=photo.rows)
    from vision.photo import files as photo_files

    image = photo_files.load_image(str(photo.path))
    found = service.reader()
    extra = {"rules": rules} if "rules" in _parameters(found.read) else {}
    reading = found.read(image, corners=corners, rows=photo.rows, cols=photo.cols, **extra)
    return service.score_reading(reading, rules=rules)


def _parameters(fn) -> tuple:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


# ----------------------------------------------------------------------------- counting
def _places(photo, obj) -> tuple:
    """For each read square of ``obj`` (row by row over its ``rows x cols``): the labelled
    ``(row, col)`` under its centre, or None off the labelled rectangle."""
    from vision.lab.evaluation.evaluate import frame_places

    return frame_places(obj["corners"], int(obj["rows"]), int(obj["cols"]), photo.corners,
                        photo.rows, photo.cols)


def count(photo, obj: dict | None, rules: str, error: str | None = None) -> dict:
    """One reading's figures against ``photo``'s labels (see the module's doc). ``obj``: the
    service's scored JSON, or None when the photo was not read (``error`` says why)."""
    towns = set(photo.towns)
    tiles = {(r, c) for r, row in enumerate(photo.terrain) for c, t in enumerate(row)
             if t not in ("empty", "town")}
    out = {"read": obj is not None, "error": error, "grid": None, "towns": len(towns),
           "town": 0, "flagged": 0, "town_flagged": 0, "neither": 0, "missed": 0, "read_as": {},
           "others": 0, "wrong": 0, "others_flagged": 0, "wrong_unflagged": 0,
           "tiles_missed": len(tiles), "off_as_tile": 0, "warning": None,
           "queendomino_warning": None, "warnings": [],
           "town_cells": []}
    if obj is None:
        out["neither"] = out["missed"] = len(towns)
        return _judged(out, rules)
    rows, cols = int(obj["rows"]), int(obj["cols"])
    out["grid"] = f"{rows}x{cols}"
    review = {(int(r), int(c)) for r, c in obj.get("review") or []}
    under = {}                                   # labelled square -> the first read square on it
    for i, place in enumerate(_places(photo, obj)):
        read = (i // cols, i % cols)
        cell = obj["cells"][read[0]][read[1]]
        if place is None:
            out["off_as_tile"] += cell["terrain"] != "empty"
        else:
            under.setdefault(place, read)
    read_as = Counter()
    for (r, c), (i, j) in sorted(under.items()):
        cell, flagged = obj["cells"][i][j], (i, j) in review
        if (r, c) in towns:
            read_as[cell["terrain"]] += 1
            out["town_cells"].append({"row": r, "col": c, "terrain": cell["terrain"],
                                      "crowns": int(cell["crowns"]), "flagged": flagged,
                                      "confidence": _rounded(cell.get("confidence"))})
            as_town = cell["terrain"] == "town"
            out["town"] += as_town
            out["flagged"] += flagged
            out["town_flagged"] += as_town and flagged
            out["neither"] += not (as_town or flagged)
            continue
        label, crowns = photo.terrain[r][c], photo.crowns[r][c]
        wrong = cell["terrain"] != label or (label != "empty" and int(cell["crowns"]) != crowns)
        out["others"] += 1
        out["wrong"] += wrong
        out["others_flagged"] += flagged
        out["wrong_unflagged"] += wrong and not flagged
    out["missed"] = len(towns - set(under))
    out["neither"] += out["missed"]
    out["tiles_missed"] = len(tiles - set(under))
    out["read_as"] = dict(sorted(read_as.items()))
    out["warnings"] = [str(w) for w in obj.get("warnings") or []]
    out["warning"] = next((w for w in out["warnings"] if NOT_KINGDOMINO.search(w)), None)
    out["queendomino_warning"] = next((w for w in out["warnings"]
                                       if NAMES_QUEENDOMINO.search(w)), None)
    return _judged(out, rules)


def _rounded(v):
    return round(float(v), 3) if isinstance(v, (int, float)) else None


def _judged(out: dict, rules: str) -> dict:
    if not out["towns"]:
        out["ok"] = None
    elif rules == "kingdomino":
        out["ok"] = out["flagged"] == out["towns"] and out["warning"] is not None
    else:
        out["ok"] = out["neither"] == 0
    return out


SUMMED = ("towns", "town", "flagged", "town_flagged", "neither", "missed", "others", "wrong",
          "others_flagged", "wrong_unflagged", "tiles_missed", "off_as_tile")


def summed(figures: list) -> dict:
    """Add up ``count`` dicts: the counts, ``read_as``, photos read, with a town, ok (of those
    with a town) and with the warning."""
    out = {k: sum(f[k] for f in figures) for k in SUMMED}
    read_as = Counter()
    for f in figures:
        read_as.update(f["read_as"])
    out["read_as"] = dict(sorted(read_as.items()))
    out["photos"] = len(figures)
    out["photos_read"] = sum(f["read"] for f in figures)
    out["photos_with_towns"] = sum(f["towns"] > 0 for f in figures)
    out["photos_ok"] = sum(bool(f["ok"]) for f in figures)
    out["photos_warned"] = sum(f["warning"] is not None for f in figures)
    out["photos_named_queendomino"] = sum(f["queendomino_warning"] is not None for f in figures)
    return out


# ----------------------------------------------------------------------------- the measure
def measure(photos, rules=RULES, ways=WAYS, log=None) -> dict:
    """Every photo read every way under every rule set: ``{"rows": [{"photo", "way", "rules",
    **count}], "sums": {way: {rules: summed}}}``. A reading that raises is a row with
    ``read`` False and its ``error`` (the towns count as missed), never an exception."""
    rows = []
    for way in ways:
        for rule in rules:
            for photo in photos:
                try:
                    obj, error = read_photo(photo, rule, way), None
                except ValueError as exc:
                    obj, error = None, str(exc) or type(exc).__name__
                row = {"photo": photo.name, "way": way, "rules": rule,
                       **count(photo, obj, rule, error)}
                rows.append(row)
                if log is not None:
                    log(format_row(row))
    sums = {way: {rule: summed([r for r in rows if r["way"] == way and r["rules"] == rule])
                  for rule in rules} for way in ways}
    return {"rows": rows, "sums": sums}


def _short(name: str) -> str:
    return name.rsplit("_", 1)[-1].rsplit(".", 1)[0]


def _read_as(d: dict) -> str:
    return ", ".join(f"{t} {n}" for t, n in d.items()) or "-"


def format_row(row: dict) -> str:
    """One photo's line: its grid, towns read as town / flagged / neither, the others wrong
    and flagged, the warning."""
    ok = {None: "  ", True: "ok", False: "NO"}[row["ok"]]
    if not row["read"]:
        return (f"  {ok} {row['way']:8s} {row['rules']:11s} {_short(row['photo']):>3s}  not read: "
                f"{row['error']}")
    return (f"  {ok} {row['way']:8s} {row['rules']:11s} {_short(row['photo']):>3s}  "
            f"{row['grid']:5s} towns {row['towns']}: town {row['town']}, flagged "
            f"{row['flagged']} (both {row['town_flagged']}), neither {row['neither']} (read as "
            f"{_read_as(row['read_as'])}); "
            f"others {row['others']}: wrong {row['wrong']}, flagged {row['others_flagged']}, "
            f"wrong unflagged {row['wrong_unflagged']}; off as tile {row['off_as_tile']}; "
            f"warning: {_warned(row)}")


def _warned(row: dict) -> str:
    return "Queendomino" if row["queendomino_warning"] else "yes" if row["warning"] else "no"


def format_sums(res: dict) -> str:
    lines = ["Queendomino photos (our labels; six photos of one game: a handful of squares, "
             "not rates)",
             "  (town: read as town; flagged: in review; both: the two; neither: the failure; "
             "warned: a warning of non-Kingdomino squares, naming Queendomino)",
             "  way      rules        photos ok  towns  town  flagged  both  neither  read as"
             "                 others wrong flagged  warned naming"]
    for way, by_rules in res["sums"].items():
        for rule, s in by_rules.items():
            lines.append(
                f"  {way:8s} {rule:11s} {s['photos_ok']:>3d}/{s['photos_with_towns']:<4d} "
                f"{s['towns']:>5d} {s['town']:>5d} {s['flagged']:>8d} {s['town_flagged']:>5d} "
                f"{s['neither']:>8d}  "
                f"{_read_as(s['read_as']):22s} {s['others']:>6d} {s['wrong']:>5d} "
                f"{s['others_flagged']:>7d}  {s['photos_warned']:>3d}/{s['photos']} "
                f"{s['photos_named_queendomino']:>3d}/{s['photos']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- drawn towns
def _labelled_crops(photos, want, ccfg) -> np.ndarray:
    """The squares of ``photos`` whose label is in ``want``, cut as the reader cuts them."""
    from vision.lab.training.squares import photo_training_crops, reader_view

    out = []
    for p in photos:
        if p.corners is None:
            continue
        image, corners = reader_view(p)      # decoded as the reader decodes it
        cut = photo_training_crops(image, corners, p.rows, p.cols, ccfg, pad=0)
        out += [cut[r * p.cols + c] for r in range(p.rows) for c in range(p.cols)
                if p.terrain[r][c] in want]
    return np.stack(out) if out else np.zeros((0, 1, 1, 3), np.uint8)


def _spread(values) -> dict:
    v = np.asarray(values, float)
    if not len(v):
        return {"n": 0}
    return {"n": int(len(v)), "median": round(float(np.median(v)), 3),
            "p10": round(float(np.percentile(v, 10)), 3),
            "p90": round(float(np.percentile(v, 90)), 3)}


def drawn_against_real(photos, n: int = 40, seed: int = 0, swamps=(), classifier=None) -> dict:
    """How the square classifier sees ``vision.lab.scenes.render.town_crops`` (``n`` drawn
    towns, ``seed``) beside the labelled photos' real towns: what each set is read as, and each
    drawn town's features' cosine to the nearest real town's -- and, for scale, each real swamp
    square's of ``swamps`` (labelled photos, e.g. the dev phone photos). ``classifier``: a
    ``SquareClassifier`` (default the shipped one)."""
    from vision import config as _config
    from vision.lab.scenes import render
    from vision.read.classify import TERRAINS, SquareClassifier

    cfg = _config.load()
    clf = classifier if classifier is not None else SquareClassifier(None, cfg["classify"])
    real = _labelled_crops(photos, {"town"}, cfg["classify"])
    drawn, built = render.town_crops(np.random.default_rng(seed), n, cfg)

    def read_as(crops) -> dict:
        if not len(crops):
            return {}
        best = clf.logits(crops)[:, :len(TERRAINS)].argmax(1)
        return dict(sorted(Counter(TERRAINS[int(i)] for i in best).items()))

    def nearest(crops, towns) -> list:
        if not len(crops) or not len(towns):
            return []
        return list((clf.features(crops) @ towns.T).max(1))

    towns = clf.features(real) if len(real) else np.zeros((0, 1), np.float32)
    swamp = _labelled_crops(swamps, {"swamp"}, cfg["classify"])
    return {"real": {"n": int(len(real)), "read_as": read_as(real)},
            "drawn": {"n": int(len(drawn)), "with_building": int(built.sum()),
                      "read_as": read_as(drawn)},
            "cosine_to_real_towns": {"drawn": _spread(nearest(drawn, towns)),
                                     "real_swamps": _spread(nearest(swamp, towns))}}


def format_drawn(res: dict) -> str:
    cos = res["cosine_to_real_towns"]

    def spread(s):
        return (f"median {s['median']:.3f} (10-90 %: {s['p10']:.3f}-{s['p90']:.3f}), n {s['n']}"
                if s.get("n") else "none")
    return "\n".join([
        f"real towns  {res['real']['n']:3d}: read as {_read_as(res['real']['read_as'])}",
        f"drawn towns {res['drawn']['n']:3d} ({res['drawn']['with_building']} with a building): "
        f"read as {_read_as(res['drawn']['read_as'])}",
        "features' cosine to the nearest real town:",
        f"  drawn towns: {spread(cos['drawn'])}",
        f"  real swamps: {spread(cos['real_swamps'])}"])


def main(args) -> int:
    """``kingdomino evaluate --queendomino`` (``args.datasets``, ``args.out``; and from
    ``python3 -m``: ``args.rules``, ``args.ways``, ``args.only``)."""
    import json

    from vision.lab import datasets as ds

    root = Path(args.datasets) if getattr(args, "datasets", None) else None
    try:
        photos = ds.load_queendomino(root)
    except FileNotFoundError as exc:
        print(f"kingdomino: error: {exc}", flush=True)
        return 2
    only = getattr(args, "only", None)
    if only:
        photos = [p for p in photos if only in p.name]
    if getattr(args, "drawn", None):
        try:
            swamps = ds.load_phone(root)
        except FileNotFoundError:
            swamps = []
        print(format_drawn(drawn_against_real(photos, int(args.drawn), swamps=swamps)),
              flush=True)
        return 0
    res = measure(photos, tuple(getattr(args, "rules", None) or RULES),
                  tuple(getattr(args, "ways", None) or WAYS),
                  log=lambda line: print(line, flush=True))
    print(format_sums(res), flush=True)
    if getattr(args, "out", None):
        Path(args.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.evaluation.queendomino",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=None,
                    help="datasets folder (default: ../shared/datasets)")
    ap.add_argument("--rules", nargs="+", choices=RULES, default=None,
                    help="which rule sets (default: both)")
    ap.add_argument("--ways", nargs="+", choices=WAYS, default=None,
                    help="found by the reader, read in the labelled rectangle (default: both)")
    ap.add_argument("--only", default=None, metavar="TEXT", help="only photos named with TEXT")
    ap.add_argument("--out", default=None, metavar="FILE", help="every figure as JSON")
    ap.add_argument("--drawn", type=int, default=None, metavar="N",
                    help="instead: N drawn towns (render.town_crops) beside the photos' real "
                         "ones, as the square classifier reads and sees them")
    sys.exit(main(ap.parse_args()))
