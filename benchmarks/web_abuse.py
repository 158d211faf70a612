"""Load and abuse of the web app, bounded and on 127.0.0.1 only (issue 15).

Starts its own server (``python -m kingdomino serve``) on a free port with a store in a temporary
folder, then measures and prints:

1. uploads of a photo to ``POST /api/score`` by 4 and by 8 clients at once: requests per
   second, p50 / p95 latency, status codes (any 500 is a failure);
2. the server's memory (RSS) before and after;
3. 60 batches of one 3 MB photo each made on ``POST /batch/`` and never started: how many were
   accepted (the rest are refused with 503 past ``BATCH_MAX_WAITING``) and the RSS after;
4. 150 connections that send half a request line and then nothing: how long an ordinary
   request takes meanwhile.

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--photo", default=str(ROOT / "samples" / "kingdom-5x5.jpg"))
    ap.add_argument("--requests", type=int, default=24, help="uploads per client count")
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--batch-mb", type=float, default=3.0)
    ap.add_argument("--limit", type=float, default=120, help="seconds per step at most")
    args = ap.parse_args(argv)
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
            results["uploads"] = [upload_load(port, photo, n, args.requests, args.limit)
                                  for n in (4, 8)]
            results["rss_after_uploads_mb"] = round(rss_mb(proc.pid))
            results["unstarted_batches"] = unstarted_batches(
                port, args.batches, int(args.batch_mb * 2**20), args.limit)
            results["rss_after_batches_mb"] = round(rss_mb(proc.pid))
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
