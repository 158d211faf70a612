"""What the reader prints for a fixed set of photos, kept to compare before and after a change
that must not change it (a move of code, a faster path).

``python3 -m vision.lab.evaluation.snapshot --out before.jsonl`` reads the bundled samples, the dev phone
photos and the AAU dev photos (``../shared/datasets``; the held-out photos are never read here)
with the shipped models, one JSON object a line (``kingdomino score --json`` of each, plus
``--corners`` readings of the phone photos from their labelled corners), then
``python3 -m vision.lab.evaluation.snapshot --compare before.jsonl after.jsonl`` lists every photo whose
output differs and exits 1 when any does.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _photos(datasets: Path | None, limit: int | None) -> list[tuple[str, Path, list | None]]:
    """``(key, path, labelled corners or None)`` of every photo read, in a fixed order."""
    from vision.lab import datasets as ds

    out = [(f"sample/{p.name}", p, None) for p in sorted((ROOT / "samples").glob("*.jpg"))]
    root = datasets or ds.default_datasets_dir()
    if root.exists():
        for photo in ds.load_phone(root):
            out.append((f"phone/{photo.path.name}", photo.path, None))
            if photo.corners is not None:
                out.append((f"phone-corners/{photo.path.name}", photo.path,
                            [list(map(float, p)) for p in photo.corners]))
        out += [(f"aau/{p.path.name}", p.path, None) for p in ds.load_aau(root)]
    return out[:limit] if limit else out


def _read(path: Path, corners) -> dict:
    from kingdomino import service

    try:
        obj = service.score_photo(str(path), corners=corners)
    except Exception as exc:  # the error is part of the output being compared
        return {"error": f"{type(exc).__name__}: {exc}"}
    return json.loads(json.dumps(obj))


def take(out: Path, datasets: Path | None = None, limit: int | None = None) -> int:
    photos = _photos(datasets, limit)
    with out.open("w") as fh:
        for key, path, corners in photos:
            fh.write(json.dumps({"key": key, "out": _read(path, corners)}, sort_keys=True) + "\n")
    print(f"{len(photos)} readings written to {out}")
    return 0


def _load(path: Path) -> dict:
    return {row["key"]: row["out"] for row in map(json.loads, path.read_text().splitlines())}


def compare(before: Path, after: Path) -> int:
    a, b = _load(before), _load(after)
    differ = [k for k in a if k in b and a[k] != b[k]]
    missing = sorted(set(a) ^ set(b))
    for key in differ:
        fields = sorted(f for f in set(a[key]) | set(b[key]) if a[key].get(f) != b[key].get(f))
        print(f"differs: {key}: {', '.join(fields)}")
    for key in missing:
        print(f"only in one: {key}")
    print(f"{len(a)} and {len(b)} readings: {len(differ)} differ, {len(missing)} in one only")
    return 1 if differ or missing else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m vision.lab.evaluation.snapshot", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="write the readings here (JSON Lines)")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    p.add_argument("--datasets", type=Path, default=None)
    p.add_argument("--limit", type=int, default=None, help="only the first N readings")
    args = p.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        p.error("give --out FILE or --compare BEFORE AFTER")
    return take(args.out, args.datasets, args.limit)


if __name__ == "__main__":
    sys.exit(main())
