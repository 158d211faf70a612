"""Whole tables of real kingdoms: how ``--all`` (``vision.find.whole_table.read_table``) reads
real phone photos, against their labels and against plain ``score`` (``Reader.read``).

- ``composite(photos, side)``: two or three dev phone photos side by side in one table photo,
  each scaled so its kingdom's side is about ``side`` px and cropped with its own table around
  it (``MARGIN`` kingdom sides at most, what the photo holds); the truth per kingdom is its
  labels and its labelled corners moved into the composite (a ``whole_tables.TableScene``).
- ``measure_composites(reader, photos)``: the composites made of the dev photos
  (``composite_groups``) read by ``--all``: kingdoms found, exact, phantom, wrongly cut.
- ``measure_photos(reader, photos)``: each dev phone photo read by ``--all`` and by plain
  ``score``, both against the labels: the kingdom found, squares right, exact, wrongly cut and
  whether ``--all`` read it worse than plain ``score``.

Dev photos only (``vision.lab.datasets.load_phone``): the held-out photos are never read here.
"""
from __future__ import annotations

import time

import cv2
import numpy as np

from vision.lab.scenes import hard_tables as tables
from vision.lab.scenes import whole_tables as tp

MARGIN = 0.45          # kingdom sides of table kept around each kingdom in a composite (at most)
SIDE = 800             # px: a composite's kingdoms are scaled to about this side
GROUPS = (2, 3, 2, 3, 2, 3, 2, 3, 2, 3)   # kingdoms per composite, in turn
MIN_TABLE = 0.08       # a photo is put in a composite when it has this many sides of table all around


def _side(corners) -> float:
    c = np.asarray(corners, np.float64).reshape(4, 2)
    return float(np.mean(np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)))


def _table_around(photo, shape) -> float:
    """The least table around the labelled corners, in kingdom sides."""
    h, w = shape[:2]
    c = np.asarray(photo.corners, np.float64)
    room = min(c[:, 0].min(), c[:, 1].min(), w - c[:, 0].max(), h - c[:, 1].max())
    return room / _side(c)


def square_kingdom(photo) -> bool:
    """A finished kingdom (5x5 or 7x7 labels) with labelled corners."""
    return photo.corners is not None and photo.rows == photo.cols and photo.rows in (5, 7)


def composite_groups(photos, groups=GROUPS, seed: int = 0) -> list[list]:
    """Groups of dev photos for the composites: square kingdoms with table all around, one
    photo a kingdom (the first of each), each group of different kingdoms, as many groups of
    ``groups``' sizes as the photos make."""
    seen, pool = set(), []
    for p in photos:
        if square_kingdom(p) and p.kingdom not in seen:
            image = cv2.imread(str(p.path))
            if image is not None and _table_around(p, image.shape) >= MIN_TABLE:
                seen.add(p.kingdom)
                pool.append(p)
    order = np.random.default_rng(seed).permutation(len(pool))
    pool = [pool[i] for i in order]
    out, at = [], 0
    for n in groups:
        if at + n > len(pool):
            break
        out.append(pool[at:at + n])
        at += n
    return out


def composite(photos, side: int = SIDE, margin: float = MARGIN, seed=None) -> tp.TableScene:
    """The photos' kingdoms side by side in one table photo, left to right (see the module
    docstring); a crop shorter than the tallest is centred on a fill of its own table's colour."""
    crops, truths = [], []
    for p in photos:
        image = cv2.imread(str(p.path))
        scale = side / _side(p.corners)
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        c = np.asarray(p.corners, np.float64) * scale
        h, w = image.shape[:2]
        x0 = int(max(0, c[:, 0].min() - margin * side))
        y0 = int(max(0, c[:, 1].min() - margin * side))
        x1 = int(min(w, c[:, 0].max() + margin * side))
        y1 = int(min(h, c[:, 1].max() + margin * side))
        crops.append(image[y0:y1, x0:x1])
        truths.append((p, c - (x0, y0)))
    height = max(crop.shape[0] for crop in crops)
    width = sum(crop.shape[1] for crop in crops)
    canvas = np.zeros((height, width, 3), np.uint8)
    kingdoms, x = [], 0
    for crop, (p, c) in zip(crops, truths):
        ch, cw = crop.shape[:2]
        y = (height - ch) // 2
        ring = np.concatenate([crop[:4].reshape(-1, 3), crop[-4:].reshape(-1, 3),
                               crop[:, :4].reshape(-1, 3), crop[:, -4:].reshape(-1, 3)])
        canvas[:, x:x + cw] = np.median(ring, axis=0).astype(np.uint8)
        canvas[y:y + ch, x:x + cw] = crop
        kingdoms.append(tables.HardScene(
            image=canvas, corners=(c + (x, y)).astype(np.float32), size=p.rows,
            terrain=p.terrain, crowns=p.crowns, table="real", palette=p.name, seed=seed))
        x += cw
    return tp.TableScene(canvas, tuple(kingdoms), "real", "+".join(p.name for p in photos), (),
                         seed)


def _cut_in(corners, shape, least: float = 0.02) -> bool:
    """Whether a kingdom with these corners is cut (lies within ``least`` sides of the edge)."""
    h, w = shape[:2]
    c = np.asarray(corners, np.float64)
    room = min(c[:, 0].min(), c[:, 1].min(), w - c[:, 0].max(), h - c[:, 1].max())
    return room < least * _side(c)


def measure_composites(reader, photos, read=None, on_photo=None) -> dict:
    """The composites of ``photos`` (``composite_groups``) read (``whole_tables.measure_photo``),
    with the kingdoms wrongly called cut counted: ``summary`` and ``photos``."""
    rows = []
    for k, group in enumerate(composite_groups(photos)):
        scene = composite(group, seed=k)
        row = tp.measure_photo(reader, scene, read)
        row["photos"] = [p.name for p in group]
        row["wrongly_cut"] = sum(1 for r in row["per_kingdom"] if r["cut"] and not _cut_in(
            scene.kingdoms[r["truth"]].corners, scene.image.shape))
        rows.append(row)
        if on_photo is not None:
            on_photo(row)
    summary = tp.summarise(rows)
    summary["wrongly_cut"] = sum(r["wrongly_cut"] for r in rows)
    return {"summary": summary, "photos": rows}


def squares_right(reading, photo) -> tuple[int, int]:
    """``(right, labelled)``: the labelled squares read right by ``reading`` (a
    ``vision.reader.Reading``): each labelled square's centre, through the labelled corners,
    looked up in the read rectangle (a square off it is read right only when labelled empty)."""
    rows, cols = photo.rows, photo.cols
    unit = lambda r, c: np.float32([[0, 0], [c, 0], [c, r], [0, r]])  # noqa: E731
    to_photo = cv2.getPerspectiveTransform(unit(rows, cols), np.float32(photo.corners))
    to_read = cv2.getPerspectiveTransform(np.float32(reading.corners),
                                          unit(reading.rows, reading.cols))
    centres = np.float32([[c + 0.5, r + 0.5] for r in range(rows) for c in range(cols)])
    seen = cv2.perspectiveTransform(cv2.perspectiveTransform(centres[None], to_photo), to_read)[0]
    right = 0
    for (x, y), (r, c) in zip(seen, [(r, c) for r in range(rows) for c in range(cols)]):
        if 0 <= x < reading.cols and 0 <= y < reading.rows:
            cell = reading.cells[int(y)][int(x)]
            right += (cell["terrain"], int(cell["crowns"])) == (photo.terrain[r][c],
                                                                 photo.crowns[r][c])
        else:
            right += photo.terrain[r][c] == "empty"
    return right, rows * cols


def _total(reading) -> int:
    from vision.lab.evaluation.evaluate import score

    return score([[cell["terrain"] for cell in row] for row in reading.cells],
                 [[int(cell["crowns"]) for cell in row] for row in reading.cells])


def _judge(reading, photo) -> dict:
    if reading is None:
        return {"found": False, "right": 0, "exact": False, "total": None}
    right, n = squares_right(reading, photo)
    total = _total(reading)
    true = photo.score if photo.score is not None else None
    return {"found": True, "right": right, "total": total,
            "exact": right == n and (true is None or total == true)}


def measure_photo(reader, photo, read_table=None) -> dict:
    """One dev phone photo read by plain ``score`` and by ``--all``: the kingdom on the labels
    (the one whose centre is nearest theirs, within a third of a side), squares right, exact,
    cut, kingdoms besides it, and whether ``--all`` is worse (not found, fewer squares right,
    or not exact where plain is)."""
    from vision.errors import PhotoError

    if read_table is None:
        from vision.find.whole_table import read_table
    image = cv2.imread(str(photo.path))
    t0 = time.perf_counter()
    try:
        plain = reader.read(image)
    except PhotoError:
        plain = None
    t1 = time.perf_counter()
    try:
        found = read_table(reader, image)
    except PhotoError:
        found = []
    t2 = time.perf_counter()
    centre, side = np.asarray(photo.corners, np.float64).mean(0), _side(photo.corners)
    near = [(float(np.linalg.norm(np.asarray(f.reading.corners, np.float64).mean(0) - centre)), f)
            for f in found]
    near = [(d, f) for d, f in near if d < side / 3]
    match = min(near, key=lambda df: df[0])[1] if near else None
    p, a = _judge(plain, photo), _judge(match.reading if match else None, photo)
    worse = (not a["found"] and p["found"]) or a["right"] < p["right"] or (p["exact"]
                                                                          and not a["exact"])
    cut = bool(match is not None and match.cut)
    return {"photo": photo.name, "plain": p, "all": a, "worse": bool(worse),
            "cut": cut, "wrongly_cut": cut and not _cut_in(photo.corners, image.shape),
            "others": len(found) - (match is not None), "true_total": photo.score,
            "seconds": [round(t1 - t0, 2), round(t2 - t1, 2)]}


def measure_photos(reader, photos, read_table=None, on_photo=None) -> dict:
    """``measure_photo`` for each photo with labelled corners: ``summary`` and ``photos``."""
    rows = []
    for photo in photos:
        if photo.corners is None:
            continue
        rows.append(measure_photo(reader, photo, read_table))
        if on_photo is not None:
            on_photo(rows[-1])
    summary = {"photos": len(rows),
               "plain_found": sum(r["plain"]["found"] for r in rows),
               "all_found": sum(r["all"]["found"] for r in rows),
               "plain_exact": sum(r["plain"]["exact"] for r in rows),
               "all_exact": sum(r["all"]["exact"] for r in rows),
               "all_worse": sum(r["worse"] for r in rows),
               "wrongly_cut": sum(r["wrongly_cut"] for r in rows),
               "others": sum(r["others"] for r in rows)}
    return {"summary": summary, "photos": rows}
