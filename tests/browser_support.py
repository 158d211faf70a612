"""What the browser tests share: the chromium binary, a live server, screenshots to look at."""
from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

import pytest


def chromium_path() -> str:
    """Debian's chromium binary for the browser tests, or a skip that says how to get it."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.skip("no chromium binary found (apt-get install chromium)")


@contextlib.contextmanager
def serving(app):
    """Serve a Flask app on a free loopback port in a thread; yields its base URL."""
    werkzeug_serving = pytest.importorskip("werkzeug.serving")
    server = werkzeug_serving.make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def keep_screenshot(page, name: str, tmp_path: Path, **kwargs) -> Path:
    """Screenshot into the test's tmp folder, and into $KINGDOMINO_SHOTS when set (to look at)."""
    path = tmp_path / name
    page.screenshot(path=str(path), **kwargs)
    shots = os.environ.get("KINGDOMINO_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(shots) / name)
    return path


@contextlib.contextmanager
def chromium_page(**page_options):
    """A headless Chromium page; yields ``(browser, page, errors)``, ``errors`` collecting the
    page's uncaught script errors. Skips when Playwright or Chromium is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page = browser.new_page(**page_options)
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            yield browser, page, errors
        finally:
            browser.close()


@contextlib.contextmanager
def serving_app(tmp_path: Path, reader):
    """The web app with its database and instance folder in the test's tmp folder, reading
    photos with ``reader``, served as ``serving`` does; yields its base URL."""
    from webapp import create_app

    app = create_app({"DATABASE": str(tmp_path / "b.sqlite3"),
                      "INSTANCE_PATH": str(tmp_path / "instance"), "READER": reader})
    with serving(app) as base:
        yield base


def save_keeps_total(page, total: str) -> None:
    """The editor shows ``total``; saving opens the result page, which shows the same total."""
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator("#total")).to_have_text(total)
    page.click("#save")
    page.wait_for_url("**/r/*")
    expect(page.locator("#total")).to_have_text(total)
