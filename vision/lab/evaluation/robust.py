"""Does the frame hold when the photo changes a little? ``python3 -m vision.lab.evaluation.robust``

Every dev phone photo (labelled corners and grid) is framed by ``Reader.find`` as it is and
changed the ways a phone, a lamp or a file change a photo: shrunk (a smaller phone, a
cropped upload), turned a quarter at a time, lit warmer or cooler, brighter or darker,
blurred, noisy, saved again as a coarse JPEG; and the ways the held-out photos that failed
differ from it: the kingdom farther from the camera (``far0.6``: the table grown around it
by mirroring its own outer bands), seen more steeply (``tilt``), a pale glare patch on the
table beside it or over its edge (``glare_beside``, ``glare_on``). A kingdom is framed when
the grid found is the labelled one and no corner is more than ``FRAMED`` of a side off
(``vision.find.detect.corner_error``; the labelled corners go where the change takes them).

A frame that holds as found but breaks under a tenth of a change is luck, not a detector:
the held-out photos differ from the dev photos by more than that. Holdout photos are never
loaded (``vision.lab.datasets.load_phone`` reads the dev split).

    python3 -m vision.lab.evaluation.robust [--only warm,turn1,far0.5+cool] [--photos NAME,...]
                                 [--json out.json] [--fold-models DIR]

``--fold-models``: each photo framed by the network of the cross-validation fold that held it
out (``kingdomino evaluate --fold-models DIR``), the honest figure: the shipped network was
trained on these very photos.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

FRAMED = 0.25        # largest corner error (of a side) that still frames the kingdom


def _gains(bgr):
    def f(image):
        return np.clip(image.astype(np.float32) * np.float32(bgr), 0, 255).astype(np.uint8)
    return f


def _blur(image):
    return cv2.GaussianBlur(image, (0, 0), max(image.shape[:2]) / 1000.0)


def _dark(image):
    return (255.0 * (image / 255.0) ** 1.5).astype(np.uint8)


def _bright(image):
    return np.clip(image.astype(np.float32) * 1.3 + 20, 0, 255).astype(np.uint8)


def _jpeg(image):
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 50])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else image


def _noise(image):
    grain = np.random.default_rng(0).normal(0, 8, image.shape)
    return np.clip(image + grain, 0, 255).astype(np.uint8)


def _pixels(f):
    """A change of the pixels alone: the kingdom stays where it was."""
    def g(image, corners):
        return f(image), corners
    return g


def _scaled(k: float):
    def g(image, corners):
        return cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA), corners * k
    return g


def _turned(k: int):
    """``k`` quarter turns counter-clockwise (``np.rot90``): (x, y) in a photo ``w`` wide goes
    to (y, w - 1 - x) each turn."""
    def g(image, corners):
        h, w = image.shape[:2]
        for _ in range(k):
            corners = np.stack([corners[:, 1], w - 1 - corners[:, 0]], 1)
            w, h = h, w
        return np.ascontiguousarray(np.rot90(image, k)), corners
    return g


def _spot(shape, centre, radii, angle: float) -> np.ndarray:
    """A soft elliptical spot (1 at ``centre``, falling off as a Gaussian of ``radii`` px
    along ``angle`` radians and across it), float32 of ``shape``."""
    h, w = shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = xs - np.float32(centre[0]), ys - np.float32(centre[1])
    ca, sa = np.float32(np.cos(angle)), np.float32(np.sin(angle))
    u, v = (dx * ca + dy * sa) / np.float32(radii[0]), (-dx * sa + dy * ca) / np.float32(radii[1])
    return np.exp(-(u * u + v * v)).astype(np.float32)


def _sides(corners):
    """The outline's four sides as (midpoint, unit direction along it, outward unit normal,
    length)."""
    centre = corners.mean(0)
    out = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        mid, along = (a + b) / 2, b - a
        length = float(np.hypot(*along))
        along = along / max(length, 1e-9)
        normal = np.array([along[1], -along[0]])
        if np.dot(normal, mid - centre) < 0:
            normal = -normal
        out.append((mid, along, normal, length))
    return out


def _darkest_side(image, corners):
    """The side with the darkest table beyond it (where a glare patch changes the most),
    among those with at least half a side of photo beyond them; the first side if none."""
    h, w = image.shape[:2]
    sides = _sides(corners)
    best, best_v = sides[0], np.inf
    for side in sides:
        mid, _, normal, length = side
        x, y = mid + normal * 0.5 * length
        if not (0 <= x < w and 0 <= y < h):
            continue
        x0, y0 = mid + normal * 0.15 * length
        r = max(1, int(0.1 * length))
        patch = image[max(0, int(min(y, y0)) - r):int(max(y, y0)) + r,
                      max(0, int(min(x, x0)) - r):int(max(x, x0)) + r]
        v = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY).mean() if patch.size else np.inf
        if v < best_v:
            best, best_v = side, v
    return best


def _glare(image, alpha, colour=(236, 242, 248)):
    """``image`` washed towards ``colour`` by ``alpha`` (0..1, per pixel)."""
    a = np.clip(alpha, 0, 1)[..., None]
    return np.rint(image * (1 - a) + np.float32(colour) * a).astype(np.uint8)


def _glare_by_side(out: float, radii, peak: float):
    """A soft whitish patch (``peak`` at its centre) against the kingdom's side with the
    darkest table beyond it, its centre ``out`` of that side's length beyond the side
    (negative: over the kingdom's squares), ``radii`` (along, across) in side lengths."""
    def g(image, corners):
        mid, along, normal, length = _darkest_side(image, corners)
        spot = _spot(image.shape, mid + normal * out * length,
                     (radii[0] * length, radii[1] * length), np.arctan2(along[1], along[0]))
        return _glare(image, peak * spot), corners
    return g


# the held-out photos' "pale patch beside a small kingdom" (2 of its 27 photos read 7x7)
_glare_beside = _glare_by_side(0.3, (0.5, 0.28), 0.92)
# the squares along a side washed pale (the held-out photo whose lakes were a column off)
_glare_on = _glare_by_side(-0.1, (0.3, 0.16), 0.8)


def _far(k: float):
    """The kingdom ``k`` times as large in the photo, as if taken from farther away: the
    table around it grown by mirroring its own outer bands (never a band with the kingdom in
    it), then the whole brought back to the photo's size. None where the kingdom touches the
    photo's edge (nothing to mirror)."""
    def g(image, corners):
        h, w = image.shape[:2]
        lo, hi = corners.min(0), corners.max(0)
        margin = 0.02 * float(np.max(hi - lo))
        room = [lo[1] - margin, h - hi[1] - margin, lo[0] - margin, w - hi[0] - margin]
        if min(room) < 4:
            return None
        want = [(h / k - h) / 2] * 2 + [(w / k - w) / 2] * 2    # top, bottom, left, right
        grown, done = image, [0.0] * 4
        while any(d < t - 0.5 for d, t in zip(done, want)):
            pad = [int(min(t - d, r + d)) for d, t, r in zip(done, want, room)]
            grown = cv2.copyMakeBorder(grown, *pad, cv2.BORDER_REFLECT)
            done = [d + p for d, p in zip(done, pad)]
        out = cv2.resize(grown, (w, h), interpolation=cv2.INTER_AREA)
        sx, sy = w / grown.shape[1], h / grown.shape[0]
        return out, (corners + np.float64([done[2], done[0]])) * np.float64([sx, sy])
    return g


def _tilt(image, corners):
    """Seen more steeply: the photo's top narrowed to 0.7 of its width and its height
    squashed to 0.8 (a perspective warp; the corners it leaves bare take the median colour
    of the photo's top and bottom edges: a mirrored border would copy the kingdom)."""
    h, w = image.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[0.15 * w, 0.2 * h], [0.85 * w, 0.2 * h], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(src, dst)
    band = np.concatenate([image[:8].reshape(-1, 3), image[-8:].reshape(-1, 3)])
    out = cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT,
                              borderValue=[float(v) for v in np.median(band, 0)])
    moved = cv2.perspectiveTransform(corners.reshape(-1, 1, 2).astype(np.float64), m)
    return out, moved.reshape(-1, 2)


# name -> change(image, corners) -> (image, corners), or None where it cannot apply
PERTURBATIONS = {
    "scale0.7": _scaled(0.7), "scale0.6": _scaled(0.6),
    "turn1": _turned(1), "turn2": _turned(2), "turn3": _turned(3),
    "warm": _pixels(_gains((0.8, 0.95, 1.15))), "cool": _pixels(_gains((1.15, 1.0, 0.85))),
    "dark": _pixels(_dark), "bright": _pixels(_bright), "blur": _pixels(_blur),
    "noise": _pixels(_noise), "jpeg50": _pixels(_jpeg),
    "far0.6": _far(0.6), "tilt": _tilt, "glare_beside": _glare_beside, "glare_on": _glare_on,
}
# the quarter turns of each perturbation (a turned photo's rows are its columns)
TURNS = {"turn1": 1, "turn2": 2, "turn3": 3}


def _step(name: str):
    """The perturbation one name stands for: one of ``PERTURBATIONS``, or ``farK`` for any
    ``K`` above 0 and below 1 (the kingdom ``K`` times as large); None for no such name."""
    if name in PERTURBATIONS:
        return PERTURBATIONS[name]
    if name.startswith("far"):
        try:
            k = float(name[3:])
        except ValueError:
            return None
        return _far(k) if 0.0 < k < 1.0 else None
    return None


def unknown(name: str) -> list[str]:
    """The steps of ``name`` (perturbations joined by ``+``) that are none."""
    return [step for step in name.split("+") if _step(step) is None]


def turns(name: str) -> int:
    """Quarter turns that ``name`` (steps joined by ``+``) makes in all."""
    return sum(TURNS.get(step, 0) for step in name.split("+"))


def change(image: np.ndarray, corners, name: str):
    """``(photo, corners)`` after the perturbation ``name`` (one of ``PERTURBATIONS``, or
    ``farK``; several joined by ``+`` are made one after the other, ``far0.6+cool``): the
    photo changed and where its labelled corners (x, y photo px) now lie; None where a
    change cannot apply to this photo."""
    bad = unknown(name)
    if bad:
        raise ValueError(f"unknown perturbation {bad[0]!r}: choose from "
                         f"{', '.join(PERTURBATIONS)} or farK (0 < K < 1), joined by +")
    out = (image, np.asarray(corners, np.float64).reshape(4, 2))
    for step in name.split("+"):
        out = _step(step)(*out)
        if out is None:
            return None
    return out


def frame_of(reader, image: np.ndarray) -> tuple:
    """``(corners, rows, cols)`` that ``reader.find`` gives, or None when it finds nothing
    (or fails: that photo's failure, the others go on)."""
    try:
        found = reader.find(image)
    except ValueError:
        return None
    return np.asarray(found.corners, np.float64), int(found.rows), int(found.cols)


def measure(reader, photos, names, log=None) -> dict:
    """For ``None`` (the photo as it is) and each perturbation in ``names``: how many of
    ``photos`` (objects with ``path``, ``name``, ``corners``, ``rows``, ``cols``) are framed,
    and which are not (photo, grid found, corner error). A photo a change cannot apply to
    (``far`` with the kingdom at the photo's edge) is not counted for it. ``reader``: a
    ``Reader``, or a function giving each photo's (``fold_readers``)."""
    reader_for = reader if callable(reader) else (lambda photo: reader)
    from vision.find.detect import corner_error
    from vision.lab.training.squares import reader_view

    out = {name: {"n": 0, "framed": 0, "failures": []} for name in ["as taken", *names]}
    for photo in photos:
        image, corners = reader_view(photo)     # decoded as the reader decodes it
        for name in out:
            changed = (image, np.asarray(corners, np.float64).reshape(4, 2)) \
                if name == "as taken" else change(image, corners, name)
            if changed is None:
                continue
            got = frame_of(reader_for(photo), changed[0])
            row = out[name]
            row["n"] += 1
            if got is None:
                row["failures"].append({"photo": photo.name, "grid": None, "error": None})
                continue
            err = corner_error(got[0], changed[1], any_first=True)
            want = (photo.cols, photo.rows) if turns(name) % 2 else (photo.rows, photo.cols)
            if (got[1], got[2]) == want and err <= FRAMED:
                row["framed"] += 1
            else:
                row["failures"].append({"photo": photo.name, "grid": f"{got[1]}x{got[2]}",
                                        "error": round(float(err), 3)})
        if log:
            log(f"{photo.name}: done")
    return out


def fold_readers(folder, photos):
    """A function giving each of ``photos`` the reader of the cross-validation fold that held
    it out (``kingdomino evaluate --fold-models DIR`` keeps ``fold{K}.onnx`` there, and beside
    it ``fold{K}.json`` naming the photos it was trained on): its frame is then chosen by a
    network that never saw it, as on a photo that is not a dev photo. ``ValueError`` when the
    folder holds no such networks, or a photo is not held out by exactly one of them."""
    from vision import config
    from vision.lab.evaluation.evaluate import fold_reader, fold_record

    folder = Path(folder)
    paths = sorted(folder.glob("fold*.onnx"))
    if len(paths) < 2 or [p.name for p in paths] != [f"fold{k}.onnx" for k in range(len(paths))]:
        raise ValueError(f"{folder}: expected fold0.onnx, fold1.onnx, ... (at least two) as "
                         f"`kingdomino evaluate --fold-models {folder}` keeps them")
    trained = [set(fold_record(path)["trained_on"]) for path in paths]
    fold_of = {}
    for photo in photos:
        held = [k for k, names in enumerate(trained) if photo.name not in names]
        if len(held) != 1:
            raise ValueError(f"{photo.name} is held out by {len(held)} of the networks in "
                             f"{folder}, not one: they are not one cross-validation of it")
        fold_of[photo.name] = held[0]
    cfg = config.load()
    readers = [fold_reader(p, cfg) for p in paths]
    return lambda photo: readers[fold_of[photo.name]]


def add_photo_options(ap: argparse.ArgumentParser) -> None:
    """``--photos``, ``--fold-models`` and ``--datasets``: which dev phone photos a lab tool
    reads, and with which network."""
    ap.add_argument("--photos", help="comma-separated dev photo names (default all)")
    ap.add_argument("--fold-models", type=Path, metavar="DIR",
                    help="read each photo with the network of the cross-validation fold that "
                         "held it out (`kingdomino evaluate --fold-models DIR`), not the shipped "
                         "one, which was trained on these photos")
    ap.add_argument("--datasets", default=None, help="datasets folder (default: ../shared/datasets)")


def photos_and_readers(ap: argparse.ArgumentParser, args, tool: str):
    """The dev phone photos of :func:`add_photo_options`' options and a function giving each
    its reader (its fold's, else the shipped one): ``(photos, reader_for)``, or None when
    they cannot be had (why is said on stderr, as ``tool: ...``)."""
    from vision.lab.datasets import load_phone
    from vision.reader import Reader

    try:
        photos = load_phone(Path(args.datasets) if args.datasets else None)
    except FileNotFoundError as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return None
    if args.photos:
        keep = set(args.photos.split(","))
        photos = [p for p in photos if p.name in keep]
        if not photos:
            ap.error("none of --photos is a dev phone photo")
    if not args.fold_models:
        shipped = Reader()
        return photos, lambda photo: shipped
    try:
        return photos, fold_readers(args.fold_models, photos)
    except (OSError, ValueError) as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return None


def report(res: dict, line, path: Path | None) -> None:
    """A lab tool's figures: one printed line a row of ``res`` (``line(name, row)``), and all
    of them as JSON in ``path`` when given."""
    for name, row in res.items():
        print(line(name, row))
    if path:
        path.write_text(json.dumps(res, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help=f"comma-separated perturbations (default all: "
                                   f"{','.join(PERTURBATIONS)})")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    add_photo_options(ap)
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(PERTURBATIONS)
    bad = [step for n in names for step in unknown(n)]
    if bad:
        ap.error(f"unknown perturbation(s) {', '.join(bad)}: choose from {', '.join(PERTURBATIONS)}"
                 f" or farK (0 < K < 1), joined by + (far0.6+cool)")
    got = photos_and_readers(ap, args, "robust")
    if got is None:
        return 2
    photos, reader_for = got

    def line(name, row):
        fails = ", ".join(f"{f['photo']} ({f['grid'] or 'none'}, {f['error']})"
                          for f in row["failures"])
        return f"{name:9s} framed {row['framed']}/{row['n']}" + (f"  not: {fails}" if fails else "")

    report(measure(reader_for, photos, names), line, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
