"""Time a phone upload to its result page through the web app, one client, full-size photos.

    python3 benchmarks/bench_web.py [--n 6] [--seed 0] [--no-phone] [--repeat 1] [--json out.json]

Starts ``kingdomino serve`` on a free port with a store in a temporary folder, then, one photo
at a time as one person with a browser would: ``POST /upload`` (the form's fields and its CSRF
token, the session cookie) and, after its 303, ``GET`` of the result page it leads to. The time
is from the upload's first byte to the result page's last. Photos: the dev phone photos of 10 MP
or more from ``../shared/datasets/phone-photos`` when present, and ``--n`` generated 4000x3000
scenes (``vision.lab.scenes.synth``, JPEG quality 90). One upload first, not counted (the
models load). Also the server's CPU time per upload (``/proc``: every thread, the reader's
OpenCV threads included). Issue 51's aim: at most 0.5 s for a 12 MP photo.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from web_abuse import HOST, free_port, multipart, request, wait_until_up  # noqa: E402


def server_cpu(pid: int) -> float:
    """The process's user + system CPU seconds so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def phone_photos() -> list[Path]:
    try:
        from vision.lab.datasets import load_phone
        return [p.path for p in load_phone() if p.path.exists()
                and os.path.getsize(p.path) > 2_000_000]
    except (OSError, FileNotFoundError):
        return []


def scenes(n: int, seed: int, folder: Path) -> list[Path]:
    import cv2
    import numpy as np

    from vision.lab.scenes import synth

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        b = synth.rendered_board(rng, size=5 if i % 2 == 0 else 7)
        scene, _ = synth.make_scene(b["image"], rng, width=4000, board_mask=b["mask"],
                                    portrait=False)
        path = folder / f"scene{i}.jpg"
        cv2.imwrite(str(path), scene, [cv2.IMWRITE_JPEG_QUALITY, 90])
        out.append(path)
    return out


def session(port: int) -> tuple[str, str]:
    """The session cookie and the CSRF token of the upload form's page."""
    status, headers, body = request(port, "GET", "/")
    if status != 200:
        raise SystemExit(f"the upload page answered {status}")
    cookie = "; ".join(v.split(";", 1)[0] for k, v in headers if k.lower() == "set-cookie")
    token = re.search(rb'name="csrf-token" content="([^"]+)"', body).group(1).decode()
    return cookie, token


def upload_to_page(port: int, cookie: str, token: str, photo: Path) -> float:
    """Seconds from the upload's start to the result page read whole."""
    body, ctype = multipart([("csrf_token", token), ("rules", "kingdomino"),
                             ("photo", (photo.name, photo.read_bytes()))])
    t0 = time.perf_counter()
    status, headers, _ = request(port, "POST", "/upload", body,
                                 {"Content-Type": ctype, "Cookie": cookie})
    if status != 303:
        raise SystemExit(f"{photo.name}: the upload answered {status}, not 303")
    where = dict((k.lower(), v) for k, v in headers)["location"]
    path = re.sub(r"^https?://[^/]+", "", where)
    status, _, page = request(port, "GET", path, headers={"Cookie": cookie})
    took = time.perf_counter() - t0
    if status != 200 or b"<html" not in page[:400].lower():
        raise SystemExit(f"{photo.name}: the result page answered {status}")
    return took


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=6, help="generated 12 MP scenes (default 6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-phone", action="store_true", help="skip the dev phone photos")
    ap.add_argument("--repeat", type=int, default=1, help="upload every photo this many times")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.n < 0 or args.repeat < 1:
        ap.error("--n must be 0 or more and --repeat 1 or more")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sets = {"generated": scenes(args.n, args.seed, folder)}
        if not args.no_phone:
            sets["phone-dev >=10MP"] = phone_photos()
        port = free_port()
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-m", "kingdomino", "serve", "--host", HOST,
                                 "--port", str(port), "--db", str(folder / "bench.sqlite3")],
                                cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_until_up(port, proc)
            cookie, token = session(port)
            first = next((p for s in sets.values() for p in s), None)
            if first is not None:
                upload_to_page(port, cookie, token, first)   # the models load
            for name, photos in sets.items():
                if not photos:
                    continue
                walls, cpus = [], []
                for _ in range(args.repeat):
                    for photo in photos:
                        c0 = server_cpu(proc.pid)
                        walls.append(upload_to_page(port, cookie, token, photo))
                        cpus.append(server_cpu(proc.pid) - c0)
                walls.sort()
                results[name] = {
                    "uploads": len(walls),
                    "median_ms": round(1000 * statistics.median(walls)),
                    "p90_ms": round(1000 * walls[min(len(walls) - 1, int(0.9 * len(walls)))]),
                    "server_cpu_median_ms": round(1000 * statistics.median(cpus))}
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    for name, r in results.items():
        print(f"{name}: {r['uploads']} uploads, upload to result page {r['median_ms']} ms median, "
              f"{r['p90_ms']} ms p90; server CPU {r['server_cpu_median_ms']} ms an upload (median)")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          "issue 51's aim: at most 500 ms for a 12 MP photo")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
