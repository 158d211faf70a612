"""Load and abuse of the web app, bounded and on 127.0.0.1 only (issue 15).

Starts its own server (``python -m kingdomino serve``) on a free port with a store in a temporary
folder, then measures and prints:

1. uploads of a photo to ``POST /api/score`` by 4 and by 8 clients at once: requests per
   second, p50 / p95 latency, status codes (any 500 is a failure);
2. the server's memory (RSS) before and after;
3. 60 batches of one 3 MB photo each made on ``POST /batch/`` and never started: how many were
   accepted (the rest are refused with 503: ``BATCH_MAX_WAITING``, and one address's share of
   it) and the RSS after;
4. 150 connections that send half a request line and then nothing: how long an ordinary
   request takes meanwhile;
5. (issue 48) ``POST /i18n/texts`` with a sentence built to make a backtracking pattern blow up
   (``"a: 1 + 1 a" x 400``, 4,000 characters, and x 100) in Korean: time and status of each;
6. 200 idle connections (connected, nothing sent), then the same 200 sending a byte every 4 s:
   how long an ordinary request takes beside each;
7. 4 PNGs of 10950x10950 pixels (120 MP, mostly one colour: a few hundred KB each) uploaded at
   once: the server's RSS before, its peak while they are read (sampled every 20 ms) and after;
8. 25 batches made with no files, then a real batch of one photo: the status codes.

Then stops the server. Every step has a count and a time limit: the whole run takes a few
minutes at most. Usage: ``python3 benchmarks/web_abuse.py [--photo samples/kingdom-5x5.jpg]
[--requests 24]``.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def multipart(fields: list[tuple[str, str | tuple[str, bytes]]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields:
        if isinstance(value, tuple):
            filename, data = value
            head = (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                    f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n')
            parts.append(head.encode() + data + b"\r\n")
        else:
            parts.append((f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'
                          f"\r\n\r\n{value}\r\n").encode())
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def request(port, method, path, body=None, headers=None, timeout=120):
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


def wait_until_up(port: int, proc: subprocess.Popen, limit: float = 60) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the server stopped at start (exit {proc.returncode})")
        try:
            if request(port, "GET", "/", timeout=2)[0] == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not answer within a minute")


def upload_load(port: int, photo: bytes, clients: int, total: int, limit: float) -> dict:
    """``total`` uploads shared by ``clients`` threads; stops early at ``limit`` seconds."""
    lat, codes, lock = [], {}, threading.Lock()
    todo = iter(range(total))
    end = time.monotonic() + limit
    body, ctype = multipart([("photo", ("kingdom.jpg", photo))])   # the same upload every time

    def client():
        while time.monotonic() < end:
            with lock:
                if next(todo, None) is None:
                    return
            t = time.monotonic()
            try:
                status = request(port, "POST", "/api/score", body, {"Content-Type": ctype})[0]
            except OSError as exc:
                status = type(exc).__name__
            with lock:
                lat.append(time.monotonic() - t)
                codes[status] = codes.get(status, 0) + 1

    start = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    lat.sort()
    return {"clients": clients, "requests": len(lat), "seconds": round(wall, 1),
            "per_second": round(len(lat) / wall, 2) if wall else 0.0,
            "p50_ms": round(1000 * statistics.median(lat)) if lat else None,
            "p95_ms": round(1000 * lat[min(len(lat) - 1, int(0.95 * len(lat)))]) if lat else None,
            "status": codes}


def session_token(port: int) -> tuple[str, str]:
    status, headers, body = request(port, "GET", "/batch/")
    cookie = "; ".join(v.split(";", 1)[0] for k, v in headers if k.lower() == "set-cookie")
    token = re.search(rb'name="csrf-token" content="([^"]+)"', body).group(1).decode()
    return cookie, token


def unstarted_batches(port: int, count: int, size: int, limit: float) -> dict:
    cookie, token = session_token(port)
    blob = os.urandom(size)
    codes = {}
    end = time.monotonic() + limit
    for i in range(count):
        if time.monotonic() > end:
            break
        body, ctype = multipart([("rules", "kingdomino"), ("photos", (f"p{i}.jpg", blob))])
        status = request(port, "POST", "/batch/", body,
                         {"Content-Type": ctype, "Cookie": cookie, "X-CSRF-Token": token,
                          "Accept": "application/json"})[0]
        codes[status] = codes.get(status, 0) + 1
    return codes


def silent_connections(port: int, count: int) -> dict:
    """Open ``count`` connections that send half a request line; time one normal request."""
    socks = []
    for _ in range(count):
        s = socket.create_connection((HOST, port), timeout=5)
        s.sendall(b"GET / HTTP/1.1\r\n")
        socks.append(s)
    try:
        t = time.monotonic()
        try:
            status = request(port, "GET", "/api/rules", timeout=60)[0]
        except OSError as exc:
            status = type(exc).__name__
        return {"connections": count, "status": status,
                "ms": round(1000 * (time.monotonic() - t))}
    finally:
        for s in socks:
            s.close()


def i18n_regex(port: int, repeat: int = 400) -> dict:
    """One request to translate a sentence shaped to make a backtracking pattern blow up."""
    cookie, token = session_token(port)
    body = json.dumps({"texts": ["a: 1 + 1 a" * repeat]}).encode()
    t = time.monotonic()
    try:
        status = request(port, "POST", "/i18n/texts", body,
                         {"Content-Type": "application/json", "Accept-Language": "ko",
                          "Cookie": cookie, "X-CSRF-Token": token}, timeout=120)[0]
    except OSError as exc:
        status = type(exc).__name__
    return {"characters": 10 * repeat, "status": status,
            "ms": round(1000 * (time.monotonic() - t))}


def _timed_get(port: int) -> dict:
    t = time.monotonic()
    try:
        status = request(port, "GET", "/api/rules", timeout=60)[0]
    except OSError as exc:
        status = type(exc).__name__
    return {"status": status, "ms": round(1000 * (time.monotonic() - t))}


def idle_connections(port: int, count: int, trickle_s: float = 12.0) -> dict:
    """``count`` connections that send nothing: one ordinary request beside them; then the same
    connections sending one byte every 4 s for ``trickle_s`` seconds, and a request meanwhile."""
    socks = []
    try:
        for _ in range(count):
            socks.append(socket.create_connection((HOST, port), timeout=5))
        idle = _timed_get(port)
        line = b"GET /api/rules HTTP/1.1\r\nX-Slow: " + b"a" * 64
        sent, alive, end, beside = 0, len(socks), time.monotonic() + trickle_s, None
        while time.monotonic() < end:
            for s in socks:
                if sent < len(line):
                    try:
                        s.sendall(line[sent:sent + 1])
                    except OSError:
                        alive -= 1
            sent += 1
            if beside is None:
                beside = _timed_get(port)
            next_round = min(end, time.monotonic() + 4)
            while time.monotonic() < next_round:  # the 4 s between two bytes
                time.sleep(min(0.5, max(0.0, next_round - time.monotonic())))
        return {"connections": count, "idle": idle, "trickling": beside,
                "trickled_bytes_each": min(sent, len(line)), "still_open": alive}
    finally:
        for s in socks:
            s.close()


def large_png(side: int, shade: int) -> bytes:
    """A ``side`` x ``side`` PNG, one colour with a darker square: small file, 120 MP decoded."""
    import cv2
    import numpy as np

    image = np.full((side, side, 3), shade, np.uint8)
    cv2.rectangle(image, (side // 4, side // 4), (3 * side // 4, 3 * side // 4),
                  (40, 120, 40), -1)
    ok, buf = cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    del image
    if not ok:
        raise SystemExit("cannot encode the large PNG")
    return buf.tobytes()


def large_uploads(port: int, pid: int, count: int, side: int, limit: float) -> dict:
    """``count`` large PNGs uploaded at once; the server's RSS before, at its peak and after."""
    pngs = [large_png(side, 180 + 10 * i) for i in range(count)]
    before = rss_mb(pid)
    peak, codes, lock, done = before, {}, threading.Lock(), threading.Event()

    def sample():
        nonlocal peak
        while not done.is_set():
            try:
                peak = max(peak, rss_mb(pid))
            except OSError:
                return
            done.wait(0.02)

    def send(data: bytes, i: int):
        body, ctype = multipart([("photo", (f"large-{i}.png", data))])
        try:
            status = request(port, "POST", "/api/score", body, {"Content-Type": ctype},
                             timeout=limit)[0]
        except OSError as exc:
            status = type(exc).__name__
        with lock:
            codes[status] = codes.get(status, 0) + 1

    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.monotonic()
    senders = [threading.Thread(target=send, args=(data, i)) for i, data in enumerate(pngs)]
    for t in senders:
        t.start()
    for t in senders:
        t.join()
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    settle_end, after = time.monotonic() + 10, rss_mb(pid)
    while time.monotonic() < settle_end:  # what the server still holds once it is quiet
        time.sleep(0.5)
        now = rss_mb(pid)
        if abs(now - after) < 2:
            break
        after = now
    return {"photos": count, "pixels": f"{side}x{side}",
            "file_kb": [len(p) // 1024 for p in pngs], "status": codes,
            "seconds": round(wall, 1), "rss_before_mb": round(before),
            "rss_peak_mb": round(peak), "rss_after_mb": round(after),
            "peak_rise_mb": round(peak - before), "held_after_mb": round(after - before)}


def empty_then_real_batch(port: int, empties: int, photo: bytes) -> dict:
    """``empties`` batches made with no files, then one real batch of one photo."""
    cookie, token = session_token(port)
    headers = {"Cookie": cookie, "X-CSRF-Token": token, "Accept": "application/json"}
    codes = {}
    for _ in range(empties):
        body, ctype = multipart([("rules", "kingdomino")])
        status = request(port, "POST", "/batch/", body, {**headers, "Content-Type": ctype})[0]
        codes[status] = codes.get(status, 0) + 1
    body, ctype = multipart([("rules", "kingdomino"), ("photos", ("real.jpg", photo))])
    real = request(port, "POST", "/batch/", body, {**headers, "Content-Type": ctype})[0]
    return {"empty_batches": codes, "real_batch": real}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--photo", default=str(ROOT / "samples" / "kingdom-5x5.jpg"))
    ap.add_argument("--requests", type=int, default=24, help="uploads per client count")
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--batch-mb", type=float, default=3.0)
    ap.add_argument("--limit", type=float, default=120, help="seconds per step at most")
    ap.add_argument("--large", type=int, default=4, help="large PNGs sent at once")
    ap.add_argument("--large-side", type=int, default=10950, help="their side in pixels")
    ap.add_argument("--steps", default="uploads,large,regex,idle,empty,batches,silent",
                    help="which steps to run, comma-separated (default: all)")
    args = ap.parse_args(argv)
    steps = set(args.steps.split(","))
    photo = Path(args.photo).read_bytes()
    port = free_port()
    results: dict = {"photo": Path(args.photo).name, "photo_kb": len(photo) // 1024}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-m", "kingdomino", "serve", "--host", HOST,
                                 "--port", str(port), "--db", os.path.join(tmp, "abuse.sqlite3")],
                                cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        try:
            wait_until_up(port, proc)
            results["rss_start_mb"] = round(rss_mb(proc.pid))
            body, ctype = multipart([("photo", ("warm-up.jpg", photo))])
            request(port, "POST", "/api/score", body, {"Content-Type": ctype})
            results["rss_warm_mb"] = round(rss_mb(proc.pid))  # models loaded by one read
            results["uploads"] = []
            if "uploads" in steps:
                results["uploads"] = [upload_load(port, photo, n, args.requests, args.limit)
                                      for n in (4, 8)]
                results["rss_after_uploads_mb"] = round(rss_mb(proc.pid))
            if "large" in steps:  # before the batches: the server as a reader of photos only
                results["large_pngs"] = large_uploads(port, proc.pid, args.large,
                                                      args.large_side, 4 * args.limit)
            if "regex" in steps:  # the 4,000 characters, and the longest text taken
                results["i18n_regex"] = [i18n_regex(port, 400), i18n_regex(port, 100)]
            if "idle" in steps:
                results["idle_connections"] = idle_connections(port, 200)
            if "empty" in steps:  # before the unstarted batches fill every waiting place
                results["empty_batches"] = empty_then_real_batch(port, 25, photo)
            if "batches" in steps:
                results["unstarted_batches"] = unstarted_batches(
                    port, args.batches, int(args.batch_mb * 2**20), args.limit)
                results["rss_after_batches_mb"] = round(rss_mb(proc.pid))
            if "silent" in steps:
                results["silent_connections"] = silent_connections(port, 150)
            results["server_alive"] = proc.poll() is None
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    print(json.dumps(results, indent=1))
    bad = [u for u in results["uploads"] if any(str(k).startswith("5") for k in u["status"])]
    return 1 if bad or not results["server_alive"] else 0


if __name__ == "__main__":
    sys.exit(main())
