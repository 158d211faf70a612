"""Reading inside an outline given by hand: ``python3 -m vision.lab.evaluation.hand_outline``

A referee drags four corners onto the kingdom's (``kingdomino score --corners``, the result
page's outline); a hand lands a little off. Every dev phone photo of a kingdom in a square
frame (5x5 or 7x7, labelled corners) is read by ``vision.find.by_hand.read_outline``, as the
contract's path reads it, from its labelled corners and from them moved ``K`` of a square each
(``--off``), each corner in its own direction, drawn per photo from its name (the same every
run), three ways (:data:`MODES`): the size given and the corners moved onto the seams
(``[outline] refine``), the size given and the corners as given, and the size left to the
reader (``outline_hand.decide_size`` and the squares' reading) with the corners moved. A
photo is exact when its total is the labelled one; a wrong total is unflagged when none of its
wrong squares is in review.

    python3 -m vision.lab.evaluation.hand_outline [--off 0,0.15,0.3] [--fold-models DIR] [--photos N,...]
                                       [--json out.json]

``--fold-models``: each photo read by the network of the cross-validation fold that held it
out (``kingdomino evaluate --fold-models DIR``), the honest figure: the shipped network was
trained on these very photos. Holdout photos are never loaded.
"""
from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import numpy as np

from engine.kingdom import SIZES
from vision.find.frame import is_frame
from vision.lab.evaluation.robust import add_photo_options, photos_and_readers, report


def moved(corners, rows: int, cols: int, off: float, name: str) -> np.ndarray:
    """The four corners (x, y) each moved ``off`` of a square (the outline's mean side over
    its count) in a direction drawn from ``name``: the same name, the same directions."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    cell = np.mean(np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)) / ((rows + cols) / 2)
    angle = np.random.default_rng(zlib.crc32(name.encode())).uniform(0, 2 * np.pi, 4)
    return c + off * cell * np.stack([np.cos(angle), np.sin(angle)], axis=1)


MODES = {"refined": (True, True), "as given": (False, True), "size decided": (True, False)}
"""How each outline is read: (moved onto the seams, its size given)."""


def _key(off: float, mode: str) -> str:
    return f"{off:g} of a square, {mode}"


def read_one(reader, image, photo, given, refine: bool, size_given: bool) -> dict:
    """One reading of ``photo`` inside ``given`` through ``outline_hand.read_outline``: its
    size (``size_given``: the labelled one, else decided), the squares read wrong and whether
    any is in review, and its total."""
    from vision.find import by_hand as outline_hand
    from vision.lab.evaluation.evaluate import score

    n = photo.rows
    cfg = dict(reader.cfg, outline=dict(reader.cfg["outline"], refine=refine))
    reading = outline_hand.read_outline(reader, image, given, size=n if size_given else None,
                                        cfg=cfg)
    k = reading.size
    terrain = [[reading.cells[r][c]["terrain"] for c in range(k)] for r in range(k)]
    crowns = [[reading.cells[r][c]["crowns"] for c in range(k)] for r in range(k)]
    wrong = [] if k != n else [
        [r, c] for r in range(n) for c in range(n)
        if (terrain[r][c], crowns[r][c]) != (photo.terrain[r][c], int(photo.crowns[r][c]))]
    return {"size": k, "wrong": wrong, "in_review": any(w in reading.review for w in wrong),
            "total": score(terrain, crowns)}


def measure(reader_for, photos, offs, modes=tuple(MODES), log=None) -> dict:
    """For each offset in ``offs`` and each of ``modes`` (:data:`MODES`): how many of
    ``photos`` (objects with ``path``, ``name``, ``corners``, ``rows``, ``cols``,
    ``terrain``, ``crowns``; square ones only are read) read at the labelled size and with the
    exact total, squares wrong, wrong totals with none of their wrong squares in review, and
    the photos not exact. A reading that fails is that photo's failure. ``reader_for(photo)``:
    the reader for that photo."""
    from vision.lab.evaluation.evaluate import score
    from vision.lab.training.squares import reader_view

    out = {_key(o, m): {"n": 0, "size_right": 0, "exact": 0, "squares_wrong": 0, "unflagged": 0,
                        "failures": []} for o in offs for m in modes}
    for photo in photos:
        if not is_frame(photo.rows, photo.cols, SIZES):
            continue                    # a half-built kingdom: no frame to give by hand
        image, corners = reader_view(photo)     # decoded as the reader decodes it
        truth = score(photo.terrain, photo.crowns)
        for off in offs:
            given = moved(corners, photo.rows, photo.cols, off, photo.name)
            for mode in modes:
                row = out[_key(off, mode)]
                row["n"] += 1
                try:
                    got = read_one(reader_for(photo), image, photo, given, *MODES[mode])
                except ValueError as exc:
                    row["failures"].append({"photo": photo.name, "why": str(exc)})
                    continue
                row["size_right"] += got["size"] == photo.rows
                row["squares_wrong"] += len(got["wrong"])
                if got["total"] == truth:
                    row["exact"] += 1
                    continue
                why = (f"read {got['size']}x{got['size']}" if got["size"] != photo.rows else
                       f"{len(got['wrong'])} square(s) wrong"
                       + ("" if got["in_review"] else ", none in review"))
                row["unflagged"] += got["size"] == photo.rows and not got["in_review"]
                row["failures"].append({"photo": photo.name,
                                        "why": f"total {got['total']} for {truth}, {why}"})
        if log:
            log(f"{photo.name}: done")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--off", default="0,0.15,0.3",
                    help="comma-separated offsets of each corner, in squares (default 0,0.15,0.3)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    add_photo_options(ap)
    args = ap.parse_args(argv)
    try:
        offs = [float(v) for v in args.off.split(",")]
    except ValueError:
        ap.error(f"--off must be numbers joined by commas (0,0.15,0.3), not {args.off!r}")
    if any(not 0 <= o < 1 for o in offs):
        ap.error("each --off is a share of a square, at least 0 and under 1")
    got = photos_and_readers(ap, args, "hand_outline")
    if got is None:
        return 2
    photos, reader_for = got

    def line(name, row):
        fails = "; ".join(f"{f['photo']} ({f['why']})" for f in row["failures"])
        return (f"{name:32s} size right {row['size_right']}/{row['n']}, exact {row['exact']}, "
                f"squares wrong {row['squares_wrong']}, unflagged {row['unflagged']}"
                + (f"  not: {fails}" if fails else ""))

    report(measure(reader_for, photos, offs), line, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
