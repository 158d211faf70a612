"""The batch page and its pool held against one client (issue 48, items 5, 6, 7, 9 and 12):
empty batches, oversized plain uploads, broken manifests, a server killed mid-batch, uploads
left behind by a server gone."""
from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import batch_fakes as fk
from batch_helpers import run_batch, wait_until

flask = pytest.importorskip("flask")

ROOT = Path(__file__).resolve().parents[2]
JSON = {"Accept": "application/json"}
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def make_app(tmp_path, **config):
    from webapp import create_app

    base = {"TESTING": True, "DATABASE": str(tmp_path / "web.sqlite3"),
            "INSTANCE_PATH": str(tmp_path / "instance"), "READER": fk.fake_score,
            "BATCH_JOBS": 1, "BATCH_WAIT": True}
    return create_app({**base, **config})


def token(client) -> str:
    html = client.get("/batch/").get_data(as_text=True)
    return re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)


def post(client, url, t, *, photos=(), address="127.0.0.1", headers=JSON, **fields):
    """A multipart POST from ``address`` (the client's remote address)."""
    data = dict(fields)
    if photos:
        data["photos"] = [(io.BytesIO(body), name) for name, body in photos]
    return client.post(url, data=data, headers={"X-CSRF-Token": t, **headers},
                       content_type="multipart/form-data",
                       environ_base={"REMOTE_ADDR": address})


# ---------------------------------------------------------------- 5: empty batches, one client


def test_empty_batches_hold_no_waiting_place(tmp_path, fresh_jobs):
    client = make_app(tmp_path).test_client()  # the default limits: 20 batches waiting
    t = token(client)
    other = post(client, "/batch/", t, address="10.0.0.2")  # someone else's page, opened first
    assert other.status_code == 201
    for _ in range(25):  # one client makes batches and never sends a photo
        assert post(client, "/batch/", t, address="10.0.0.66").status_code == 201
    # a real batch is still accepted, from the plain form and from the page's script
    resp = post(client, "/batch/", t, photos=[("a.png", fk.scored(3))], address="10.0.0.3")
    assert resp.status_code == 201, resp.get_data(as_text=True)
    r = post(client, other.get_json()["upload"], t, photos=[("b.png", fk.scored(4))],
             address="10.0.0.2")
    assert r.status_code == 200, r.get_data(as_text=True)
    assert client.post(other.get_json()["start"], headers={"X-CSRF-Token": t, **JSON},
                       environ_base={"REMOTE_ADDR": "10.0.0.2"}).status_code == 202
    # the empty ones do not pile up in memory: the oldest of that client's are dropped
    assert len(fresh_jobs._JOBS) <= 2 + fresh_jobs.DEFAULT_MAX_EMPTY_PER_CLIENT


def test_one_client_cannot_take_every_waiting_place(tmp_path, fresh_jobs):
    client = make_app(tmp_path).test_client()  # 20 places
    t = token(client)
    answers = [post(client, "/batch/", t, photos=[("a.png", fk.scored(i))],
                    address="10.0.0.66") for i in range(20)]
    codes = [r.status_code for r in answers]
    assert 503 in codes and codes.index(503) < 20 // 2, codes
    assert "from your address" in answers[-1].get_json()["error"]
    # another client still gets a place
    r = post(client, "/batch/", t, photos=[("c.png", fk.scored(2))], address="10.0.0.7")
    assert r.status_code == 201, r.get_data(as_text=True)


def test_an_empty_batch_takes_its_place_with_its_first_photo(tmp_path, fresh_jobs):
    client = make_app(tmp_path, BATCH_MAX_WAITING_PER_CLIENT=3).test_client()
    t = token(client)
    empty = [post(client, "/batch/", t, address="10.0.0.66").get_json() for _ in range(3)]
    codes = [post(client, job["upload"], t, photos=[("b.png", fk.scored(1))],
                  address="10.0.0.66").status_code for job in empty]
    assert codes == [200, 200, 200]
    r = post(client, "/batch/", t, address="10.0.0.66")
    assert r.status_code == 503 and "from your address" in r.get_json()["error"]
    assert post(client, empty[0]["start"], t, address="10.0.0.66").status_code == 202
    late = post(client, "/batch/", t, address="10.0.0.66").get_json()  # a place is free again
    assert post(client, "/batch/", t, photos=[("c.png", fk.scored(2))],
                address="10.0.0.66").status_code == 201  # ... and taken by this one
    r = post(client, late["upload"], t, photos=[("d.png", fk.scored(3))], address="10.0.0.66")
    assert r.status_code == 503 and "from your address" in r.get_json()["error"]
    assert client.get(late["progress"]).get_json()["files"] == 0  # the refused photo: not kept


# ---------------------------------------------------------------- 6: an oversized plain upload


def test_an_oversized_upload_is_413_with_the_pages_message(tmp_path, fresh_jobs):
    client = make_app(tmp_path, MAX_CONTENT_LENGTH=2**20).test_client()
    t = token(client)
    big = [("a.png", fk.scored(1) + b"\0" * (3 * 2**19))]
    # the plain form (no script): the form again, with the reason
    r = client.post("/batch/", data={"csrf_token": t, "start": "1", "rules": "kingdomino",
                                     "photos": [(io.BytesIO(big[0][1]), "a.png")]},
                    headers=BROWSER, content_type="multipart/form-data")
    assert r.status_code == 413
    assert r.content_type.startswith("text/html")
    html = r.get_data(as_text=True)
    assert "too large" in html and "1 MB" in html and 'id="batch-form"' in html
    # the page's script and other programs: JSON with the same reason
    r = post(client, "/batch/", t, photos=big)
    assert r.status_code == 413 and "1 MB" in r.get_json()["error"]
    job = post(client, "/batch/", t).get_json()
    r = post(client, job["upload"], t, photos=big, headers={"X-Requested-With": "fetch"})
    assert r.status_code == 413 and "1 MB" in r.get_json()["error"]


# ---------------------------------------------------------------- 7: manifests csv cannot read

BAD_MANIFESTS = {
    "bare CR": (b"photo,player\nb.png,Bob\na.png,An\rn\n", 3, "line break"),
    "huge field": (b"photo,player\nb.png,Bob\na.png," + b"x" * (140 * 1024) + b"\n", 3,
                   "128 KB"),
}


@pytest.mark.parametrize("name", sorted(BAD_MANIFESTS))
def test_a_manifest_csv_cannot_read_is_400_with_its_line(tmp_path, fresh_jobs, name):
    body, line, says = BAD_MANIFESTS[name]
    client = make_app(tmp_path).test_client()
    t = token(client)
    r = post(client, "/batch/", t, manifest=(io.BytesIO(body), "m.csv"))
    assert r.status_code == 400, r.get_data(as_text=True)[:300]
    error = r.get_json()["error"]
    assert f"line {line}" in error and says in error and len(error) < 400
    r = client.post("/batch/", data={"csrf_token": t, "start": "1",
                                     "manifest": (io.BytesIO(body), "m.csv"),
                                     "photos": (io.BytesIO(fk.scored(1)), "a.png")},
                    headers=BROWSER, content_type="multipart/form-data")
    assert r.status_code == 400 and f"line {line}" in r.get_data(as_text=True)


def test_the_command_refuses_a_huge_manifest_field_with_its_line(tmp_path, calls, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.png").write_bytes(fk.scored(1))
    body, line, says = BAD_MANIFESTS["huge field"]
    (tmp_path / "m.csv").write_bytes(body)
    code = run_batch([folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                      "--manifest", tmp_path / "m.csv"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"line {line}" in err and says in err and "Traceback" not in err


# ---------------------------------------------------------------- 12: uploads and a restart

SERVER_WITH_A_WAITING_BATCH = """
import io, re, sys
sys.path.insert(0, sys.argv[2])
import batch_fakes as fk
from webapp import create_app

app = create_app({"TESTING": True, "INSTANCE_PATH": sys.argv[1], "READER": fk.fake_score,
                  "BATCH_JOBS": 1})
client = app.test_client()
html = client.get("/batch/").get_data(as_text=True)
t = re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)
r = client.post("/batch/", data={"photos": (io.BytesIO(fk.scored(1)), "a.png")},
                headers={"X-CSRF-Token": t, "Accept": "application/json"},
                content_type="multipart/form-data")
print(r.get_json()["id"], flush=True)
sys.stdin.read()  # a server that keeps its batch until its input closes
"""


def _server_with_a_waiting_batch(instance):
    """A server process with a batch not started; ``(process, the batch's id)``."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER_WITH_A_WAITING_BATCH, str(instance),
                             str(Path(__file__).parent)], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    job_id = proc.stdout.readline().strip()
    assert job_id, "the server process did not make its batch"
    return proc, job_id


def test_uploads_of_a_server_gone_are_deleted_at_start_and_on_expiry(tmp_path, fresh_jobs):
    instance = tmp_path / "instance"
    uploads = instance / "batch-uploads"
    live, live_id = _server_with_a_waiting_batch(instance)
    gone, gone_id = _server_with_a_waiting_batch(instance)
    try:
        gone.kill()  # kill -9: its batch is gone with it, its files are not
        gone.wait(timeout=60)
        assert (uploads / gone_id).is_dir()
        app = make_app(tmp_path)  # a server starting on the same folder
        names = set(os.listdir(uploads))
        assert gone_id not in names  # the files of no live batch: deleted
        assert live_id in names      # another server's batch that still waits: kept
        client = app.test_client()
        t = token(client)
        mine = post(client, "/batch/", t, photos=[("a.png", fk.scored(1))]).get_json()["id"]
        live.stdin.close()  # that server ends while this one runs
        live.wait(timeout=60)
        with app.app_context():
            fresh_jobs.expire_waiting()  # the expiry's sweep
        assert sorted(os.listdir(uploads)) == [mine]
    finally:
        for proc in (live, gone):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)


def test_the_disk_a_waiting_batch_may_hold_is_bounded(tmp_path, fresh_jobs):
    kb = 1024
    client = make_app(tmp_path, BATCH_MAX_BYTES=64 * kb, BATCH_MAX_CLIENT_BYTES=96 * kb,
                      BATCH_MAX_WAITING_BYTES=160 * kb).test_client()
    t = token(client)
    photo = lambda n: fk.scored(n) + b"\0" * (40 * kb)  # noqa: E731
    one = post(client, "/batch/", t, photos=[("a.png", photo(1))]).get_json()
    r = post(client, one["upload"], t, photos=[("b.png", photo(2))])  # 80 KB in one batch
    assert r.status_code == 413 and "64 KB" in r.get_json()["error"]
    two = post(client, "/batch/", t, photos=[("c.png", photo(3))])  # this address: 80 KB
    assert two.status_code == 201
    r = post(client, "/batch/", t, photos=[("d.png", photo(4))])  # 120 KB from one address
    assert r.status_code == 503 and "from your address" in r.get_json()["error"]
    assert post(client, "/batch/", t, photos=[("e.png", photo(5))],
                address="10.0.0.9").status_code == 201  # the server holds 120 KB
    r = post(client, "/batch/", t, photos=[("f.png", photo(6))], address="10.0.0.10")
    assert r.status_code == 503 and "photos waiting" in r.get_json()["error"]
    # nothing of a refused upload stays on disk
    total = sum(f.stat().st_size for f in (tmp_path / "instance" / "batch-uploads").rglob("*")
                if f.is_file())
    assert total <= 3 * len(photo(1))
    # once a batch is read its room is free again
    assert post(client, one["start"], t).status_code == 202
    assert post(client, "/batch/", t, photos=[("f.png", photo(6))],
                address="10.0.0.10").status_code == 201


# ---------------------------------------------------------------- 9: kill -9 of the server


def _processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, start time), from /proc (zombies left out)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] != "Z":
            found[int(name)] = (int(fields[1]), fields[19])
    return found


def _descendants(root: int) -> set[tuple[int, str]]:
    """``(pid, start time)`` of every living descendant of ``root``."""
    procs = _processes()
    out, todo = set(), [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, start) in procs.items():
            if ppid == parent and (pid, start) not in out:
                out.add((pid, start))
                todo.append(pid)
    return out


def _photos() -> list[tuple[str, bytes]]:
    """The sample photos, each also with bytes after its end (another photo to the store)."""
    out = []
    for path in sorted((ROOT / "samples").glob("*.jpg")):
        for n in range(4):
            out.append((f"{path.stem}-{n}.jpg", path.read_bytes() + b"\0" * n))
    return out


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the processes from /proc")
def test_batch_workers_die_with_the_server_after_kill_9(kingdomino_server):
    requests = pytest.importorskip("requests")
    server = kingdomino_server.proc
    seen: set = set()
    try:
        base = kingdomino_server.url
        session = requests.Session()

        def page():
            try:
                return session.get(f"{base}/batch/", timeout=5)
            except requests.ConnectionError:
                return None

        html = wait_until(page, 120, "the server to answer").text
        t = re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)
        files = [("photos", (name, body, "image/jpeg")) for name, body in _photos()]
        r = session.post(f"{base}/batch/", data={"csrf_token": t, "start": "1",
                                                 "rules": "kingdomino"},
                         files=files, allow_redirects=False, timeout=60)
        assert r.status_code == 303, r.text[:300]

        def reading():  # the worker processes are the server's grandchildren
            procs = _processes()
            found = _descendants(server.pid)
            seen.update(found)
            return [pid for pid, _ in found if procs.get(pid, (server.pid,))[0] != server.pid]

        wait_until(reading, 120, "the batch's worker processes to start")
        seen.update(_descendants(server.pid))
        server.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        server.wait(timeout=60)

        def alive():
            return seen & {(pid, start) for pid, (_, start) in _processes().items()}

        wait_until(lambda: not alive(), 6, f"the processes {sorted(seen)} to end")
        print(f"every process of the server ended {time.monotonic() - killed:.2f} s after "
              f"kill -9 ({len(seen)} processes)")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=60)
        live = {(pid, s) for pid, (_, s) in _processes().items()}
        for pid, start in seen & live:  # left behind by a regression: do not leak them
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
