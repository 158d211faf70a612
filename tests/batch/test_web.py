"""The web app's /batch page: upload many photos (or a zip), progress, standings, review queue."""
from __future__ import annotations

import csv
import os
import io
import re
import zipfile

import pytest

import batch_fakes as fk
from kingdomino.store import Store

flask = pytest.importorskip("flask")


@pytest.fixture
def app(tmp_path):
    from webapp import create_app

    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "web.sqlite3"),
                       "INSTANCE_PATH": str(tmp_path / "instance"), "READER": fk.fake_score,
                       "BATCH_JOBS": 1, "BATCH_WAIT": True})


@pytest.fixture
def client(app):
    return app.test_client()


def token(client) -> str:
    html = client.get("/batch/").get_data(as_text=True)
    return re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)


def headers(client):
    return {"X-CSRF-Token": token(client), "Accept": "application/json"}


MANIFEST = ("photo,player,table,round\n"
            "ann.png,Ann,1,1\nbob.png,Bob,1,1\ncat.png,Cat,1,1\n")


def test_page_lists_the_form(client):
    resp = client.get("/batch/")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert 'name="photos"' in html and "multiple" in html and 'name="manifest"' in html
    assert "batch.js" in html


def test_upload_one_by_one_then_standings_review_queue_and_downloads(client, app):
    h = headers(client)
    resp = client.post("/batch/", data={"rules": "kingdomino",
                                        "manifest": (io.BytesIO(MANIFEST.encode()), "m.csv")},
                       headers=h, content_type="multipart/form-data")
    assert resp.status_code == 201, resp.get_data(as_text=True)
    job = resp.get_json()
    photos = {
        "ann.png": fk.scored(30, largest=5, crowns=4),
        "bob.png": fk.scored(30, largest=6, crowns=1, review=[(2, 2)]),
        "cat.png": fk.scored(12),
    }
    for name, data in photos.items():
        r = client.post(job["upload"], data={"photos": (io.BytesIO(data), name)}, headers=h,
                        content_type="multipart/form-data")
        assert r.status_code == 200, r.get_data(as_text=True)
    zdata = io.BytesIO()
    with zipfile.ZipFile(zdata, "w") as zf:
        zf.writestr("../../../escape.png", fk.scored(5))
        zf.writestr("junk.png", b"not an image at all")
        zf.writestr("table.png", fk.TINY_PNG)  # a photo, but no kingdom in it
    r = client.post(job["upload"], data={"photos": (io.BytesIO(zdata.getvalue()), "more.zip")},
                    headers=h, content_type="multipart/form-data")
    assert r.status_code == 200
    assert client.post(job["start"], headers=h).status_code == 202
    progress = client.get(job["progress"]).get_json()
    assert progress["state"] == "done" and progress["done"] == progress["total"] == 6
    assert progress["errors"] == 2 and progress["review"] == 1
    # adding after the start is refused
    r = client.post(job["upload"], data={"photos": (io.BytesIO(fk.scored(1)), "late.png")},
                    headers=h, content_type="multipart/form-data")
    assert r.status_code == 400 and "already started" in r.get_json()["error"]

    page = client.get(job["page"]).get_data(as_text=True)
    queue = page.split('id="review-queue"')[1].split("</section>")[0]
    assert "bob.png" in queue and "more.zip!junk.png" in queue and "ann.png" not in queue
    links = re.findall(r'href="/r/([^"]+)"', queue)
    # the photo to review and the photo without a kingdom open in the editor (with the photo);
    # the file that is no image at all has nothing to open
    assert len(links) == 2
    for rid in links:
        assert client.get(f"/r/{rid}").status_code == 200
        assert client.get(f"/r/{rid}/photo.jpg").status_code == 200
    assert 'id="standings"' in page

    rows = list(csv.DictReader(io.StringIO(client.get(f"/batch/{job['id']}/results.csv").get_data(as_text=True))))
    assert [r["status"].split(":")[0] for r in rows] == ["error", "error", "review", "ok", "ok", "ok"]
    by_source = {r["source"]: r for r in rows}
    assert by_source["more.zip!../../../escape.png"]["total"] == "5"
    assert by_source["bob.png"]["link"] == f"/r/{by_source['bob.png']['reading_id']}"
    st = list(csv.DictReader(io.StringIO(client.get(f"/batch/{job['id']}/standings.csv").get_data(as_text=True))))
    game = [(r["place"], r["player"]) for r in st if r["scope"] == "game"]
    assert game == [("1", "Bob"), ("2", "Ann"), ("3", "Cat")]  # Bob: larger region

    # a correction made in the editor counts at once in the tables and downloads
    store = Store(app.config["DATABASE"])
    kingdom = {"rules": "kingdomino", "size": 5, "cells": [
        [{"terrain": "field", "crowns": 1}] * 5, *[[{"terrain": "lake", "crowns": 0}] * 5] * 3,
        [{"terrain": "castle", "crowns": 0}] + [{"terrain": "lake", "crowns": 0}] * 4]}
    store.add_correction(by_source["cat.png"]["reading_id"], kingdom)  # field 5 x 5 = 25
    store.close()
    rows = list(csv.DictReader(io.StringIO(client.get(f"/batch/{job['id']}/results.csv").get_data(as_text=True))))
    cat = next(r for r in rows if r["source"] == "cat.png")
    assert cat["total"] == "25" and cat["corrected"] == "yes"


def test_plain_form_post_starts_and_redirects(client):
    t = token(client)
    resp = client.post("/batch/", data={
        "csrf_token": t, "start": "1", "rules": "kingdomino",
        "photos": [(io.BytesIO(fk.scored(7)), "a.png"), (io.BytesIO(fk.scored(9)), "b.png")],
    }, content_type="multipart/form-data")
    assert resp.status_code == 303
    page = client.get(resp.headers["Location"])
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "results.csv" in html and "standings.csv" not in html  # no manifest, no standings


def test_bad_requests_are_4xx_with_a_reason(client):
    h = headers(client)
    r = client.post("/batch/", data={"rules": "chess"}, headers=h, content_type="multipart/form-data")
    assert r.status_code == 400 and "unknown rule set" in r.get_json()["error"]
    r = client.post("/batch/", data={"manifest": (io.BytesIO(b"name,score\nx,1\n"), "m.csv")},
                    headers=h, content_type="multipart/form-data")
    assert r.status_code == 400 and "photo" in r.get_json()["error"]
    job = client.post("/batch/", data={}, headers=h, content_type="multipart/form-data").get_json()
    r = client.post(job["start"], headers=h)
    assert r.status_code == 400 and "add some photos" in r.get_json()["error"]
    assert client.get("/batch/nope/progress").status_code == 404
    assert client.get("/batch/nope").status_code == 404
    # no token: refused
    r = client.post(job["upload"], data={"photos": (io.BytesIO(fk.scored(1)), "a.png")},
                    content_type="multipart/form-data")
    assert r.status_code == 403
    # the plain form without photos shows the form again with the reason
    r = client.post("/batch/", data={"csrf_token": token(client), "start": "1"},
                    content_type="multipart/form-data")
    assert r.status_code == 400 and "add some photos" in r.get_data(as_text=True)


def test_file_names_are_labels_only(client, tmp_path):
    h = headers(client)
    job = client.post("/batch/", data={}, headers=h, content_type="multipart/form-data").get_json()
    r = client.post(job["upload"], data={"photos": (io.BytesIO(fk.scored(3)), "../../=cmd.png")},
                    headers=h, content_type="multipart/form-data")
    assert r.status_code == 200
    client.post(job["start"], headers=h)
    text = client.get(f"/batch/{job['id']}/results.csv").get_data(as_text=True)
    source = list(csv.DictReader(io.StringIO(text)))[0]["source"]
    assert source == "_=cmd.png"  # no folders, and no spreadsheet formula


def test_worker_processes_in_the_server(tmp_path):
    """BATCH_JOBS > 1: photos are read in worker processes started from the server's thread."""
    from webapp import create_app

    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "w.sqlite3"),
                      "INSTANCE_PATH": str(tmp_path / "instance"), "READER": fk.fake_score,
                      "BATCH_JOBS": 2, "BATCH_WAIT": True})
    client = app.test_client()
    h = headers(client)
    files = [(io.BytesIO(fk.scored(i, review=[(0, 0)] if i == 3 else [])), f"p{i}.png") for i in range(6)]
    job = client.post("/batch/", data={"photos": files}, headers=h,
                      content_type="multipart/form-data").get_json()
    client.post(job["start"], headers=h)
    progress = client.get(job["progress"]).get_json()
    assert progress["state"] == "done", progress
    rows = list(csv.DictReader(io.StringIO(client.get(f"/batch/{job['id']}/results.csv").get_data(as_text=True))))
    assert [r["source"] for r in rows] == ["p3.png", "p0.png", "p1.png", "p2.png", "p4.png", "p5.png"]
    assert [r["total"] for r in rows] == ["3", "0", "1", "2", "4", "5"]


class _FinishesWhileLooked(object):
    """A job's state that reads "running" the first time and "done" after: the reading thread
    finishing while the page is being built."""

    def __init__(self):
        self.reads = 0

    def __get__(self, job, owner):
        if job is None:
            return self
        self.reads += 1
        return "running" if self.reads == 1 else "done"

    def __set__(self, job, value):
        pass


def test_page_built_while_the_batch_finishes_shows_progress_not_an_empty_queue(app, client):
    from webapp.batch import jobs as web_batch

    class RacingJob(web_batch.Job):
        state = _FinishesWhileLooked()

    job = RacingJob(id="race", rules="kingdomino", bonuses=[], manifest=None, total=2, done=2,
                    message="2 photo(s) read: 0 error(s), 1 to review")
    web_batch._keep(job)
    try:
        html = client.get("/batch/race").get_data(as_text=True)
    finally:
        web_batch._JOBS.pop("race", None)
    # the page must show one consistent state: still reading (it reloads itself), never
    # "done" with the rows of a running batch (an empty review queue)
    assert 'id="review-queue"' not in html
    assert 'data-state="running"' in html and 'id="job-progress"' in html


def test_a_manifest_that_matches_two_photos_is_reported_and_kept(client):
    h = headers(client)
    manifest = "photo,player,table,round\na.png,Ann,1,1\n"
    job = client.post("/batch/", data={"rules": "kingdomino",
                                       "manifest": (io.BytesIO(manifest.encode()), "m.csv")},
                      headers=h, content_type="multipart/form-data").get_json()
    for zname, total in (("x.zip", 20), ("y.zip", 21)):
        zdata = io.BytesIO()
        with zipfile.ZipFile(zdata, "w") as zf:
            zf.writestr("a.png", fk.scored(total, review=[(0, 0)]))
        r = client.post(job["upload"], data={"photos": (io.BytesIO(zdata.getvalue()), zname)},
                        headers=h, content_type="multipart/form-data")
        assert r.status_code == 200
    assert client.post(job["start"], headers=h).status_code == 202
    for _ in range(2):  # the page says what is wrong, lists the photos, and keeps the manifest
        page = client.get(job["page"]).get_data(as_text=True)
        assert "matches several photos" in page
        queue = page.split('id="review-queue"')[1].split("</section>")[0]
        assert "x.zip!a.png" in queue and "y.zip!a.png" in queue
    r = client.get(f"/batch/{job['id']}/standings.csv", headers={"Accept": "application/json"})
    assert r.status_code == 400 and "matches several photos" in r.get_json()["error"]


# ---------------------------------------------------------------- one client, bounded memory (issue 15 #2)


def limited_app(tmp_path, **config):
    from webapp import create_app

    base = {"TESTING": True, "DATABASE": str(tmp_path / "web.sqlite3"),
            "INSTANCE_PATH": str(tmp_path / "instance"), "READER": fk.fake_score,
            "BATCH_JOBS": 1, "BATCH_WAIT": True}
    return create_app({**base, **config})


def new_job(client, h, *photos):
    files = [(io.BytesIO(data), name) for name, data in photos]
    resp = client.post("/batch/", data={"photos": files} if files else {}, headers=h,
                       content_type="multipart/form-data")
    return resp


def test_uploads_wait_on_disk_privately_and_are_deleted_once_read(tmp_path, fresh_jobs):
    import stat

    client = limited_app(tmp_path).test_client()
    h = headers(client)
    resp = new_job(client, h, ("a.png", fk.scored(4)), ("../b.png", fk.scored(5)))
    assert resp.status_code == 201
    job = fresh_jobs._JOBS[resp.get_json()["id"]]
    assert all(isinstance(path, str) for _, path in job.files)  # paths, no photo in memory
    folder = tmp_path / "instance" / "batch-uploads" / job.id
    assert sorted(os.listdir(folder)) == ["00000.png", "00001.png"]  # our names, not theirs
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder.parent).st_mode) == 0o700
    for name in os.listdir(folder):
        assert stat.S_IMODE(os.stat(folder / name).st_mode) == 0o600
    assert (folder / "00001.png").read_bytes() == fk.scored(5)
    assert client.post(f"/batch/{job.id}/start", headers=h).status_code == 202
    assert client.get(f"/batch/{job.id}/progress").get_json()["state"] == "done"
    assert not folder.exists()
    rows = list(csv.DictReader(io.StringIO(
        client.get(f"/batch/{job.id}/results.csv").get_data(as_text=True))))
    assert sorted(r["total"] for r in rows) == ["4", "5"]


def test_unstarted_batches_are_capped(tmp_path, fresh_jobs):
    client = limited_app(tmp_path, BATCH_MAX_WAITING=3).test_client()
    h = headers(client)
    ids = [new_job(client, h, ("a.png", fk.scored(1))).get_json()["id"] for _ in range(3)]
    resp = new_job(client, h, ("a.png", fk.scored(1)))
    assert resp.status_code == 503 and "waiting to be started" in resp.get_json()["error"]
    assert len(os.listdir(tmp_path / "instance" / "batch-uploads")) == 3  # nothing written
    assert client.post(f"/batch/{ids[0]}/start", headers=h).status_code == 202
    assert new_job(client, h, ("a.png", fk.scored(1))).status_code == 201


def test_unstarted_batches_expire_with_their_files(tmp_path, fresh_jobs):
    now = [1000.0]
    app = limited_app(tmp_path, BATCH_CLOCK=lambda: now[0], BATCH_WAITING_TTL=100)
    client = app.test_client()
    h = headers(client)
    job = new_job(client, h, ("a.png", fk.scored(1))).get_json()
    now[0] = 1060.0  # an upload keeps it alive
    assert client.post(job["upload"], data={"photos": (io.BytesIO(fk.scored(2)), "b.png")},
                       headers=h, content_type="multipart/form-data").status_code == 200
    now[0] = 1150.0
    second = new_job(client, h, ("c.png", fk.scored(3))).get_json()
    assert client.get(job["progress"]).status_code == 200  # 90 s since its last upload: kept
    now[0] = 1161.0
    assert new_job(client, h).status_code == 201  # a new batch sweeps out the expired ones
    assert client.get(job["progress"]).status_code == 404
    assert client.get(second["progress"]).status_code == 200
    assert os.listdir(tmp_path / "instance" / "batch-uploads") == [second["id"]]
    now[0] = 1300.0
    with app.app_context():
        assert fresh_jobs.expire_waiting() == 2
    assert os.listdir(tmp_path / "instance" / "batch-uploads") == []


def test_started_batches_are_read_one_at_a_time_by_one_worker(tmp_path, fresh_jobs):
    import threading

    lock = threading.Lock()
    active, seen, threads = [0], [0], set()
    release, reading = threading.Event(), threading.Event()

    def slow_reader(photo, rules, bonuses=()):
        reading.set()
        with lock:
            active[0] += 1
            seen[0] = max(seen[0], active[0])
            threads.add(threading.current_thread().name)
        release.wait(30)
        with lock:
            active[0] -= 1
        return fk.fake_score(photo, rules, bonuses)

    app = limited_app(tmp_path, READER=slow_reader, BATCH_WAIT=False, BATCH_MAX_QUEUED=2)
    client = app.test_client()
    h = headers(client)
    jobs = [new_job(client, h, ("a.png", fk.scored(i))).get_json() for i in range(4)]
    answers = [client.post(jobs[0]["start"], headers=h).status_code]
    assert reading.wait(30)  # the worker has taken the first one off the queue
    answers += [client.post(j["start"], headers=h).status_code for j in jobs[1:]]
    # one reading, two waiting in the queue; the fourth is refused until there is room
    assert answers == [202, 202, 202, 503], answers
    release.set()
    for j in jobs[:3]:
        assert fresh_jobs._JOBS[j["id"]].finished.wait(30)
    assert [client.get(j["progress"]).get_json()["state"] for j in jobs] == \
        ["done", "done", "done", "uploading"]
    assert seen[0] == 1 and threads == {"batch-queue"}
