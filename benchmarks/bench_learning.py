"""Time learning from a correction, and reading with a store's learned examples, one core.

    python3 benchmarks/bench_learning.py [--photo samples/kingdom-5x5.jpg] [--n 7]
                                         [--examples 500] [--json out.json]

On a temporary store, the photo is read and stored as the web app stores an upload; then
``learn_1`` times learning from a correction of one square and ``learn_all`` from a
confirmation of every square (``kingdomino.learning.after_correction``: the stored photo
decoded, the squares cut and their features computed, the examples kept). The store then gets
``--examples`` examples (the photo's own squares, each kept many times with a little noise on
its features, so that they are near the squares read: the costly case), and the photo is read
through ``kingdomino.service.score_photo`` alternately without and with them (``read_0``,
``read_N``; the examples loaded from the store once, as the readers cache them, timed as
``load``). Medians and 90th percentiles in milliseconds, CPU time of this process (one thread).
The square classifiers' memory of the crops they read last is emptied before each timing (the
same photo again would cost almost nothing).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kingdomino import learning, service  # noqa: E402
from kingdomino.store import Store  # noqa: E402
from webapp.reading import state_key  # noqa: E402


def _ms(values) -> dict:
    a = np.asarray(values, float) * 1000
    return {"median": round(float(np.median(a)), 1), "p90": round(float(np.percentile(a, 90)), 1)}


def _forget_crops(classifier) -> None:
    """Empty a square classifier's memory of the last crops read (``_turns_read``)."""
    if classifier is not None:
        classifier._turns_read.clear()


def _cells(obj) -> list:
    return [[{"terrain": c["terrain"], "crowns": c["crowns"]} for c in row] for row in obj["cells"]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--photo", default=str(ROOT / "samples" / "kingdom-5x5.jpg"))
    ap.add_argument("--n", type=int, default=7, help="repeats of each timing")
    ap.add_argument("--examples", type=int, default=500)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    data = Path(args.photo).read_bytes()
    obj = service.score_photo(data)  # loads the models once
    key = state_key("kingdomino", [])
    out: dict = {"photo": Path(args.photo).name, "examples": args.examples}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.sqlite3")
        one, every = [], []
        for i in range(args.n):
            rid = learning.keep_reading(store, data, obj, "bench", "kingdomino")
            fixed = {"rules": "kingdomino", "size": obj["size"], "cells": _cells(obj)}
            fixed["cells"][0][0] = {"terrain": "lake" if fixed["cells"][0][0]["terrain"] != "lake"
                                    else "forest", "crowns": 0}
            for kingdom, times in ((fixed, one), (fixed, every)):
                saved = store.add_correction(rid, kingdom, key=key)
                _forget_crops(learning._classifier)
                t = time.process_time()
                got = learning.after_correction(store, store.get(rid), saved, kingdom)
                times.append(time.process_time() - t)
            assert got["kind"] == "confirmation", got
        out["learn_1"], out["learn_all"] = _ms(one), _ms(every)
        # --examples near the squares read: the photo's own, with a little noise
        rows = store.examples(features=True)
        base = [(r["terrain"], r["crowns"], np.frombuffer(r["feature"], np.float32))
                for r in rows[:25]]
        store.forget_examples()
        rng = np.random.default_rng(0)
        rid = learning.keep_reading(store, data, obj, "bench", "kingdomino")
        saved = store.add_correction(rid, {"rules": "kingdomino", "size": obj["size"],
                                           "cells": _cells(obj)}, key=key)
        for start in range(0, args.examples, 25):
            batch = []
            for k, (terrain, crowns, f) in enumerate(base[:args.examples - start]):
                noisy = f + rng.normal(0, 0.02, f.shape).astype(np.float32)
                noisy /= np.linalg.norm(noisy)
                batch.append((k // 5, k % 5, terrain, crowns, noisy.tobytes(), None))
            store._db.execute("BEGIN IMMEDIATE")
            for r, c, terrain, crowns, f, thumb in batch:
                store._db.execute(
                    "INSERT INTO examples (reading_id, correction_id, kind, row, col, terrain,"
                    " crowns, feature, thumbnail, scope, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (rid, saved["id"], "confirmation", r, c, terrain, crowns, f, thumb, None,
                     time.time()))
            store._db.commit()
        t = time.process_time()
        examples = learning.examples_of(store)
        out["load"] = _ms([time.process_time() - t])
        out["loaded"] = len(examples)
        without, with_them, learned = [], [], None
        for _ in range(args.n):
            for use, times in ((None, without), (examples, with_them)):
                with service.reading_with(use):
                    _forget_crops(service.reader().classifier)
                    t = time.process_time()
                    got = service.score_photo(data)
                    times.append(time.process_time() - t)
                if use is not None:
                    learned = got.get("learned")
        out["read_0"], out[f"read_{args.examples}"] = _ms(without), _ms(with_them)
        out["ratio"] = round(out[f"read_{args.examples}"]["median"] / out["read_0"]["median"], 3)
        out["learned_said"] = learned
        store.close()
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
