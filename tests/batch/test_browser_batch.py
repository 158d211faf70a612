"""The /batch page in a real headless Chromium: choose files, watch progress, see the queue.

Skips when Playwright or a Chromium binary is missing.
"""
from __future__ import annotations


import pytest

import batch_fakes as fk
from browser_support import chromium_page, serving

pytestmark = pytest.mark.browser


@pytest.fixture
def live_server(tmp_path):
    from webapp import create_app

    app = create_app({"DATABASE": str(tmp_path / "b.sqlite3"),
                      "INSTANCE_PATH": str(tmp_path / "instance"),
                      "READER": fk.fake_score, "BATCH_JOBS": 1})
    paths = []

    @app.before_request
    def _log():
        from flask import request

        paths.append((request.method, request.path))

    with serving(app) as base:
        yield base, paths


def test_batch_page_uploads_reads_and_lists_the_queue(live_server, tmp_path):
    live_server, paths = live_server
    files = []
    for i in range(5):
        path = tmp_path / f"p{i}.png"
        path.write_bytes(fk.scored(10 + i, review=[(1, 1)] if i == 2 else []))
        files.append(str(path))
    bad = tmp_path / "bad.png"
    bad.write_bytes(fk.TINY_PNG)  # a photo without a kingdom
    files.append(str(bad))
    manifest = tmp_path / "m.csv"
    manifest.write_text("photo,player,table,round\np0.png,Ann,1,1\np1.png,Bob,1,1\n")
    with chromium_page() as (browser, page, errors):
        page.goto(live_server + "/")
        home_rules = page.eval_on_selector_all("#rules option", "os => os.map(o => [o.value, o.text])")
        page.goto(live_server + "/batch/")
        # the rule sets are named as on the home page (their titles, not the raw names)
        batch_rules = page.eval_on_selector_all("#rules option", "os => os.map(o => [o.value, o.text])")
        assert batch_rules == home_rules
        assert any(value != text for value, text in batch_rules)
        page.set_input_files("#photos", files)
        page.set_input_files("#manifest", str(manifest))
        page.click("#submit")
        # the page reloads itself once the batch is done; a busy machine may take a while
        page.wait_for_selector("#review-queue", timeout=120_000)
        page.wait_for_load_state("networkidle")
        queue = page.inner_text("#review-queue")
        # (the page once came out "done" with an empty queue: it had read the job's state twice
        # while the batch finished; the page text and requests say what happened if it recurs)
        assert "p2.png" in queue and "bad.png" in queue and "p0.png" not in queue, \
            (page.inner_text("main") if page.locator("main").count() else page.content(), paths)
        standings = page.inner_text("#standings")
        assert standings.index("Bob") < standings.index("Ann")  # 11 beats 10
        # (the link asks for a byte order mark, for spreadsheet apps: ?bom=1)
        assert page.get_attribute("#download-results", "href").split("?")[0].endswith("/results.csv")
        page.click("#review-queue a >> nth=0")
        page.wait_for_url("**/r/*")  # (waiting for the load state could see the old page)
        assert errors == []
        # the script sent the photos one request each, then started the batch
        posts = [path for method, path in paths if method == "POST"]
        assert len([x for x in posts if x.endswith("/photos")]) == 6
        assert posts[-1].endswith("/start")
