"""The result page's "Looks right" in a real browser (headless Chromium): it confirms the
reading, says how many squares were learned, the next upload's page says it was read with
them, and "Take back" takes them back. The reader is fake (test_learning_web.LearningReader)."""
from __future__ import annotations

import pytest
from browser_support import chromium_page, serving
from learning_support import colour_cutter, use_colour_network
from test_learning_web import LearningReader
from webapp_helpers import jpeg_bytes

from webapp import create_app

pytestmark = pytest.mark.browser


def _upload(page, base, photo) -> str:
    page.goto(base + "/")
    page.set_input_files("#photo", str(photo))
    page.click("#submit")
    page.wait_for_url("**/r/*")
    return page.url.rsplit("/", 1)[1]


def test_looks_right_teaches_and_take_back_forgets(tmp_path, monkeypatch):
    expect = pytest.importorskip("playwright.sync_api").expect
    use_colour_network(monkeypatch)  # the app reads with the network its cutter learns with
    app = create_app({"DATABASE": str(tmp_path / "b.sqlite3"), "LEARNER": colour_cutter,
                      "INSTANCE_PATH": str(tmp_path / "instance"), "READER": LearningReader()})
    photo = tmp_path / "k.jpg"
    photo.write_bytes(jpeg_bytes())
    with serving(app) as base, chromium_page() as (browser, page, errors):
        _upload(page, base, photo)
        assert page.locator("#learned-note").count() == 0
        page.click("#looks-right")
        expect(page.locator("#learned-status")).to_contain_text("Thanks: 25 squares learned")
        first = page.url
        _upload(page, base, photo)
        expect(page.locator("#learned-note")).to_contain_text(
            "Read with what 25 corrected squares taught")
        page.click("#looks-right")  # this reading's squares teach too ...
        expect(page.locator("#learned-status")).to_contain_text("Thanks: 25 squares learned")
        page.click("#learned-status button")  # ... until taken back
        expect(page.locator("#learned-status")).to_have_text("Taken back")
        page.goto(first)
        page.click("#looks-right")  # again: nothing new to learn, and it says why
        expect(page.locator("#learned-status")).to_contain_text("already taught")
        page.set_viewport_size({"width": 390, "height": 800})  # a phone: no sideways scrolling
        page.goto(base + "/learned")
        assert page.locator("tr[id^=example-]").count() == 25
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.check("#forget-all input[name=confirm]")
        page.click("#forget-all button")
        expect(page.locator("#learned-none")).to_be_visible()
        assert not errors, errors
