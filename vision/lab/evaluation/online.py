"""``kingdomino evaluate --online``: the dev photos read one after another, each with what the
corrections of the photos before it taught (``vision.read.learned``), as a referee would use
the reader at a tournament.

The photos come in a fixed order: the phone photos by source repository, then by file name
(numbers in it by value: a game photographed after every domino comes in the order it was
played), then the AAU photos. Each is read as ``kingdomino score`` reads it (the frame the
reader finds) twice: without learning (*before*) and with the examples of every earlier
photo (*online*). Then it is "corrected" to its labels: a confirmation teaches every square,
cut with the frame the reader found when that frame is the labelled grid, else with the
labelled corners. A photo is exact when its score is the labels' score. *helped*: exact only
with learning; *harmed*: exact only without. The cross-table check reads each photo again
with the examples of the photos of the other sources only.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Photo:
    source: str
    name: str
    labelled: object                 # vision.lab.datasets.LabelledPhoto
    image: np.ndarray = None
    corners: object = None           # its labelled corners in ``image``'s pixels (None: none)
    examples: list = field(default_factory=list)   # what correcting it taught (Example)


def _natural(name: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def photos_in_order(root: Path | None = None, sets=("phone", "aau")) -> list[Photo]:
    """The dev photos of ``sets`` in the order they are read (see the module's doc)."""
    from vision.lab import datasets as ds

    out = []
    if "phone" in sets:
        for p in ds.load_phone(root):
            source = "/".join(p.name.split("__")[:2])
            out.append(Photo(source, p.name, p))
        out.sort(key=lambda p: (p.source.lower(), _natural(p.name)))
    if "aau" in sets:
        out += [Photo("aau", p.name, p) for p in ds.load_aau(root)]
    return out


def _score(terrain, crowns) -> int:
    from vision.lab.evaluation.evaluate import score

    return score(terrain, crowns)


def _read(reader, image) -> tuple[object, int | None, float]:
    """``(reading or None, its score or None, seconds)``."""
    from vision.errors import PhotoError

    t0 = time.perf_counter()
    try:
        reading = reader.read(image)
    except PhotoError:
        return None, None, time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    terrain = [[c["terrain"] for c in row] for row in reading.cells]
    crowns = [[c["crowns"] for c in row] for row in reading.cells]
    return reading, _score(terrain, crowns), seconds


def labelled_cells(photo, reading) -> tuple[list, int, int, list] | None:
    """The labels of the squares of ``reading``'s frame when it is the labelled grid (the same
    rows and columns, each read square's centre on its own labelled square):
    ``(corners, rows, cols, [(row, col, terrain, crowns)])``; None otherwise."""
    from vision.lab.evaluation.evaluate import frame_places

    lab = photo.labelled
    if reading is None or photo.corners is None:
        return None
    if sorted((reading.rows, reading.cols)) != sorted((lab.rows, lab.cols)):
        return None
    places = frame_places(reading.corners, reading.rows, reading.cols, photo.corners,
                          lab.rows, lab.cols)
    if None in places or len(set(places)) != len(places):
        return None
    cells = [(i // reading.cols, i % reading.cols, lab.terrain[r][c], lab.crowns[r][c])
             for i, (r, c) in enumerate(places)]
    return reading.corners, reading.rows, reading.cols, cells


def correct(classifier, photo: Photo, reading) -> tuple[list, str, float]:
    """Every square of ``photo`` as its labels say, cut with the reader's frame when it is
    right, else with the labelled corners: ``(examples, "found" or "labelled", seconds)``."""
    from vision.read import learned
    from vision.read.crops import image_corners

    lab = photo.labelled
    t0 = time.perf_counter()
    found = labelled_cells(photo, reading)
    if found is not None:
        corners, rows, cols, cells = found
        how = "found"
    else:
        corners = photo.corners if photo.corners is not None else image_corners(photo.image)
        rows, cols, how = lab.rows, lab.cols, "labelled"
        cells = [(r, c, lab.terrain[r][c], lab.crowns[r][c])
                 for r in range(rows) for c in range(cols)]
    taught = learned.examples_from_photo(classifier, photo.image, corners, rows, cols, cells)
    seconds = time.perf_counter() - t0
    examples = [learned.Example(f, t, k, id=f"{photo.name}:{r},{c}")
                for r, c, t, k, f, _ in taught]
    return examples, how, seconds


def decode(photo: Photo, cfg=None) -> Photo:
    """``photo`` with its ``image`` decoded as ``kingdomino score`` decodes it (``[io]
    read_long_side``: maybe reduced) and its labelled corners (the upright photo's pixels)
    taken into that image's pixels, where its frame is compared and its squares are cut. No
    dev photo's squares come out under ``[io] whole_below_px`` reduced (the smallest are 90
    px at 2000 px a side), so none would be read again whole."""
    from vision.photo import scale

    photo.image, factor = scale.load_for_reading(photo.labelled.path, cfg)
    photo.corners = None if photo.labelled.corners is None else \
        scale.to_reduced_pixels(photo.labelled.corners, factor)
    return photo


def turn_hue(image: np.ndarray, degrees: float) -> np.ndarray:
    """The photo as under another lamp: every colour's hue turned by ``degrees``."""
    import cv2

    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    hsv[..., 0] = ((hsv[..., 0].astype(int) + int(round(degrees / 2))) % 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def run(root: Path | None = None, sets=("phone", "aau"), log=print, hue: float = 0.0,
        limit: int | None = None) -> dict:
    """Read the photos online and across tables; every figure, and each photo's. ``hue``:
    every photo seen as under another lamp (:func:`turn_hue`), where the network errs and
    learning can be seen to help; ``limit``: the first photos only."""
    from vision.read import learned
    from vision.reader import Reader

    reader = Reader()
    clf = reader.classifier
    photos = photos_in_order(root, sets)[:limit]
    rows = []
    for i, p in enumerate(photos):
        decode(p)
        if hue:
            p.image = turn_hue(p.image, hue)
        truth = _score(p.labelled.terrain, p.labelled.crowns)
        clf.set_examples(None)
        _, before, t_before = _read(reader, p.image)
        earlier = [e for q in photos[:i] for e in q.examples]
        clf.set_examples(learned.Examples(earlier))
        reading, online, t_online = _read(reader, p.image)
        clf.set_examples(None)
        p.examples, how, t_learn = correct(clf, p, reading)
        rows.append({"photo": p.name, "source": p.source, "truth": truth, "before": before,
                     "online": online, "examples": len(earlier),
                     "used": reading.learned if reading is not None else 0,
                     "taught": len(p.examples), "cut_with": how, "seconds_before": t_before,
                     "seconds_online": t_online, "seconds_learn": t_learn})
        log(_row_line(rows[-1]))
    for p, row in zip(photos, rows):       # across tables: every other source's corrections
        others = [e for q in photos if q.source != p.source for e in q.examples]
        clf.set_examples(learned.Examples(others))
        reading, row["cross"], _ = _read(reader, p.image)
        row["cross_examples"] = len(others)
        row["cross_used"] = reading.learned if reading is not None else 0
        p.image = None
    clf.set_examples(None)
    return {"photos": rows, "summary": summarise(rows)}


def _row_line(r: dict) -> str:
    mark = lambda got: "exact" if got == r["truth"] else f"{got}"   # noqa: E731
    return (f"  {r['photo']}: {r['truth']}  before {mark(r['before'])}  online "
            f"{mark(r['online'])}  ({r['used']} of {r['examples']} examples used; taught "
            f"{r['taught']}, cut with the {r['cut_with']} frame, {r['seconds_learn']:.2f} s)")


def _figures(rows: list, key: str) -> dict:
    exact = lambda r, k: r[k] == r["truth"]   # noqa: E731
    return {"photos": len(rows), "exact_before": sum(exact(r, "before") for r in rows),
            "exact_after": sum(exact(r, key) for r in rows),
            "helped": [r["photo"] for r in rows if exact(r, key) and not exact(r, "before")],
            "harmed": [r["photo"] for r in rows if exact(r, "before") and not exact(r, key)]}


def summarise(rows: list) -> dict:
    """Exact before and after, helped, harmed: online and across tables, each source alone
    and every photo of a set together (``phone``, ``aau``)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r["source"], []).append(r)
    sets = {"phone": [r for r in rows if r["source"] != "aau"],
            "aau": [r for r in rows if r["source"] == "aau"]}
    out = {}
    for mode in ("online", "cross"):
        if rows and mode not in rows[0]:
            continue
        out[mode] = {name: _figures(g, mode) for name, g in {**groups, **sets}.items() if g}
    t = lambda k: float(np.mean([r[k] for r in rows])) if rows else None   # noqa: E731
    out["seconds"] = {"read_before": t("seconds_before"), "read_online": t("seconds_online"),
                      "learn_mean": t("seconds_learn"),
                      "learn_max": max((r["seconds_learn"] for r in rows), default=None)}
    return out


def format_summary(s: dict) -> str:
    titles = {"online": "online (each photo read with what every earlier photo's correction "
                        "taught)",
              "cross": "across tables (each photo read with the corrections of the other "
                       "sources only)"}
    lines = []
    for mode in ("online", "cross"):
        if mode not in s:
            continue
        lines.append(f"== {titles[mode]}")
        for name, f in s[mode].items():
            lines.append(f"  {name:<36} exact {f['exact_before']:>2}/{f['photos']} -> "
                         f"{f['exact_after']:>2}/{f['photos']}   helped {len(f['helped'])}  "
                         f"harmed {len(f['harmed'])}")
            for what in ("helped", "harmed"):
                if f[what] and name not in ("phone", "aau"):
                    lines.append(f"      {what}: {', '.join(f[what])}")
    sec = s["seconds"]
    if sec["read_before"] is not None:
        lines.append(f"  seconds a photo: read {sec['read_before']:.2f} without learning, "
                     f"{sec['read_online']:.2f} with; learning a correction "
                     f"{sec['learn_mean']:.3f} (at most {sec['learn_max']:.3f})")
    return "\n".join(lines)


def main(args) -> int:
    """The ``--online`` part of ``kingdomino evaluate`` (``args.datasets``, ``args.out``; and
    from ``python3 -m``: ``args.sets``, ``args.hue``, ``args.limit``)."""
    import json

    from vision.lab import datasets as ds

    root = Path(args.datasets) if getattr(args, "datasets", None) else ds.default_datasets_dir()
    if not (root / "phone-photos").exists():
        print(f"kingdomino: error: no dev photos in {root}", flush=True)
        return 2
    sets = tuple(getattr(args, "sets", None) or ("phone", "aau"))
    res = run(root, sets, log=lambda line: print(line, flush=True),
              hue=float(getattr(args, "hue", 0) or 0), limit=getattr(args, "limit", None))
    print(format_summary(res["summary"]), flush=True)
    if getattr(args, "out", None):
        Path(args.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.evaluation.online",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=None,
                    help="datasets folder (default: ../shared/datasets)")
    ap.add_argument("--sets", nargs="+", choices=("phone", "aau"), default=None,
                    help="which dev photos (default: both)")
    ap.add_argument("--hue", type=float, default=0.0, metavar="DEGREES",
                    help="see every photo as under another lamp: its hue turned by this much")
    ap.add_argument("--limit", type=int, default=None, help="only the first N photos")
    ap.add_argument("--out", default=None, metavar="FILE", help="every figure as JSON")
    sys.exit(main(ap.parse_args()))
