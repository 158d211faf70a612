"""Benchmark of ``kingdomino batch`` on full-size (12 MP) generated photos.

    python3 benchmarks/bench_batch.py [--photos 200] [--distinct 8] [--jobs N] [--width 4000]
                                      [--phones [--min-mp 10]]

Makes ``--distinct`` synthetic scenes with the scene generator (``vision.lab.scenes.synth``), then writes
``--photos`` JPEG files into a temporary folder, each a scene's bytes plus a few unique bytes
after the JPEG end (so every file has its own content hash and is really read); ``--phones``
writes the dev phone photos of ``../shared/datasets`` (10 MP or more) so instead. Then it times:

- the whole batch (``kingdomino batch FOLDER --jobs N`` on a fresh store, the real reader),
  giving photos per second, and per second per core;
- ``cv2.imdecode`` alone over the same files, in one process: the share of the batch's CPU time
  that is plain JPEG decoding (decode seconds / (batch wall seconds x workers)).

Prints the figures; nothing is kept unless ``--keep`` is given.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the product's own start: ``kingdomino`` sets numpy's BLAS to one thread before numpy loads
# (``kingdomino batch`` imports it first). Imported after numpy (as this script did before
# 2026-12-07, making its scenes first), BLAS kept a thread a core and the batch measured a
# quarter slower than the command runs.
import kingdomino  # noqa: E402,F401


def make_photos(folder: Path, photos: int, distinct: int, width: int, seed: int) -> float:
    """Write the photos; returns the mean size in MB."""
    import cv2
    import numpy as np

    from vision.lab.scenes import synth

    rng = np.random.default_rng(seed)
    scenes = []
    for i in range(distinct):
        board = synth.rendered_board(rng, 5)
        scene, _ = synth.make_scene(board["image"], rng, width=width, board_mask=board["mask"],
                                    portrait=False)
        ok, jpg = cv2.imencode(".jpg", scene, [cv2.IMWRITE_JPEG_QUALITY, 92])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        scenes.append(jpg.tobytes())
        print(f"  scene {i + 1}/{distinct}: {scene.shape[1]}x{scene.shape[0]}, "
              f"{len(scenes[-1]) / 1e6:.1f} MB", file=sys.stderr)
    return write_copies(folder, photos, scenes)


def write_copies(folder: Path, photos: int, sources: list) -> float:
    """Write ``photos`` files, the JPEG ``sources`` (bytes) in turn, each with a few unique
    bytes after the JPEG end (its own content hash: every file is really read); returns the
    mean size in MB."""
    total = 0
    for i in range(photos):
        data = sources[i % len(sources)] + f"bench-{i:05d}".encode()
        (folder / f"photo-{i:04d}.jpg").write_bytes(data)
        total += len(data)
    return total / photos / 1e6


def copy_photos(folder: Path, photos: int, min_mp: float) -> tuple[float, int]:
    """Write ``photos`` files from the dev phone photos of ``../shared/datasets`` (never the
    holdout ones) of at least ``min_mp`` megapixels (:func:`write_copies`); returns the mean
    size in MB and how many distinct photos."""
    from bench_floor import dev_phones   # the same photos bench_floor.py times

    chosen = [path.read_bytes() for path in dev_phones(min_mp)]
    if not chosen:
        raise SystemExit(f"bench_batch: no dev phone photo of {min_mp:g} MP or more "
                         "(is ../shared/datasets/phone-photos there?)")
    return write_copies(folder, photos, chosen), len(chosen)


def time_decode(folder: Path) -> tuple[float, int]:
    import cv2
    import numpy as np

    files = sorted(folder.glob("*.jpg"))
    start = time.perf_counter()
    for f in files:
        img = cv2.imdecode(np.frombuffer(f.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise RuntimeError(f"cannot decode {f}")
    return time.perf_counter() - start, len(files)


def time_batch(folder, work: Path, jobs: int, db: str = "bench.sqlite3") -> tuple[float, int]:
    from kingdomino import batch, cli

    paths = [str(p) for p in folder] if isinstance(folder, list) else [str(folder)]
    args = cli.build_parser().parse_args(
        ["batch", *paths, "--out", str(work / "results.csv"), "--store",
         str(work / db), "--jobs", str(jobs), "--keep-photos", "none"])
    args.rules = args.rules or "kingdomino"
    start = time.perf_counter()
    code = batch.run(args)
    elapsed = time.perf_counter() - start
    return elapsed, code


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--photos", type=int, default=200)
    p.add_argument("--distinct", type=int, default=8, help="different scenes among the photos")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--width", type=int, default=4000, help="photo width (4000 -> 4000x3000, 12 MP)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--phones", action="store_true",
                   help="real photos instead of generated scenes: the dev phone photos of "
                        "../shared/datasets of at least --min-mp megapixels, repeated")
    p.add_argument("--min-mp", type=float, default=10.0)
    p.add_argument("--serial", type=int, default=0, metavar="N",
                   help="also time N photos with one worker (per-photo time without sharing)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = p.parse_args(argv)
    if not (ROOT / "models" / "squares.onnx").exists():
        print("bench_batch: needs models/squares.onnx (train the reader first)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="kd-bench-"))
    folder = work / "photos"
    folder.mkdir()
    try:
        print(f"making {a.photos} photos in {work} ...", file=sys.stderr)
        if a.phones:
            mb, distinct = copy_photos(folder, a.photos, a.min_mp)
            print(f"  {distinct} distinct dev phone photos of {a.min_mp:g} MP or more",
                  file=sys.stderr)
        else:
            mb = make_photos(folder, a.photos, a.distinct, a.width, a.seed)
        decode_s, n = time_decode(folder)
        batch_s, code = time_batch(folder, work, a.jobs)
        cpu_s = batch_s * a.jobs
        what = (f"dev phone photos of {a.min_mp:g} MP or more" if a.phones
                else f"x {a.width}x{a.width * 3 // 4} generated")
        print(f"photos: {n} {what} JPEG, {mb:.1f} MB each")
        print(f"batch: {batch_s:.1f} s wall with {a.jobs} worker(s) (exit {code}): "
              f"{n / batch_s:.2f} photos/s, {n / batch_s / a.jobs:.2f} photos/s per core, "
              f"{1000 * cpu_s / n:.0f} ms CPU per photo")
        print(f"JPEG decoding alone (cv2.imdecode, 1 process): {1000 * decode_s / n:.0f} ms per "
              f"photo = {100 * decode_s / cpu_s:.0f}% of the batch's CPU time")
        if a.serial:
            some = sorted(folder.glob("*.jpg"))[:a.serial]
            serial_s, _ = time_batch(some, work, 1, db="serial.sqlite3")
            print(f"one worker, {len(some)} photos: {1000 * serial_s / len(some):.0f} ms per photo "
                  f"({len(some) / serial_s:.2f} photos/s); decoding = "
                  f"{100 * decode_s / n / (serial_s / len(some)):.0f}% of it")
        try:
            print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        except OSError:
            pass
    finally:
        if a.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
