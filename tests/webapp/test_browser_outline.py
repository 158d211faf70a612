"""In a real headless Chromium: an upload where no kingdom was found, the outline's corners
dragged onto the kingdom (one nudged with the arrow keys), "Read again", the new total shown.

Uses the real reader on ``samples/kingdom-5x5.jpg`` (its true outline from the sample
generator) when the models exist, a fake reader otherwise. Skips without Chromium/Playwright.
"""
from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from browser_support import chromium_page, keep_screenshot, serving
from test_outline_api import ReadAgain

from webapp import create_app

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "kingdom-5x5.jpg"
MODEL = ROOT / "models" / "squares.onnx"


def blind(photo, rules, bonuses=()):
    from vision.errors import NO_KINGDOM, PhotoError

    raise PhotoError(NO_KINGDOM)


@pytest.fixture
def live_server(tmp_path):
    real = SAMPLE.exists() and MODEL.exists()
    config = {"DATABASE": str(tmp_path / "b.sqlite3"), "INSTANCE_PATH": str(tmp_path / "i"),
              "READER": blind}
    if not real:
        config["READ_OUTLINE"] = ReadAgain()
    with serving(create_app(config)) as base:
        yield base, real


@pytest.mark.slow
def test_place_the_outline_by_hand_and_read_again(live_server, tmp_path):
    base, real = live_server
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    from kingdomino import service
    from vision.lab.scenes import synth

    _, truth, corners = synth.make_sample("kingdom-5x5")
    width = 3000  # the sample photo's width: the page shows a copy at most 1600 px wide
    with chromium_page(viewport={"width": 1280, "height": 1600}) as (browser, page, errors):
        page.goto(base + "/")
        page.set_input_files("#photo", str(SAMPLE))
        page.click("#submit")
        page.wait_for_url("**/r/*", timeout=60_000)
        expect(page.locator("#outline-tool details")).to_have_attribute("open", "")
        expect(page.locator("circle.outline-corner")).to_have_count(4)
        natural = page.evaluate("document.getElementById('outline-photo').naturalWidth")
        target = np.asarray(corners, float) * natural / width
        box = page.locator("#outline-svg").bounding_box()
        assert box["y"] + box["height"] < 1600, "the photo must fit the window to drag on it"
        k = box["width"] / natural

        def on_screen(x, y):
            return box["x"] + x * k, box["y"] + y * k

        # the handles start as a rectangle tl, tr, br, bl: drag each onto the true corner
        for i in range(4):
            handle = page.locator(f"circle[data-corner='{i}']")
            sx, sy = on_screen(float(handle.get_attribute("cx")), float(handle.get_attribute("cy")))
            page.mouse.move(sx, sy)
            page.mouse.down()
            tx, ty = on_screen(*(target[i] + ([6, 0] if i == 0 else [0, 0])))
            page.mouse.move(tx, ty, steps=8)
            page.mouse.up()
        first = page.locator("circle[data-corner='0']")
        assert abs(float(first.get_attribute("cx")) - (target[0][0] + 6)) < 2 / k + 1
        first.focus()
        for _ in range(6):  # the keyboard brings the first corner the last 6 px home
            page.keyboard.press("ArrowLeft")
        assert abs(float(first.get_attribute("cx")) - target[0][0]) < 2 / k + 1
        page.select_option("#outline-size", "5")
        with page.expect_response(lambda r: r.url.endswith("/outline")) as answer:
            page.click("#outline-read")
        assert answer.value.status == 200
        rid = page.url.rsplit("/", 1)[1]
        with urllib.request.urlopen(f"{base}/api/readings/{rid}", timeout=30) as resp:
            view = json.load(resp)  # the page reloads on success: ask the store what it holds
        want = service.score_grid(truth)["score"]["total"] if real else view["score"]["total"]
        if real:
            assert [[c["terrain"] for c in row] for row in view["kingdom"]["cells"]] == \
                [[c["terrain"] for c in row] for row in truth["cells"]]
        expect(page.locator("#total")).to_have_text(str(want), timeout=30_000)
        expect(page.locator("#grid")).to_be_visible()
        keep_screenshot(page, "outline-read-again.png", tmp_path, full_page=True)
        assert errors == []


TOUCH = 44  # CSS px: the least a fingertip can take (WCAG 2.5.5)


def test_corners_are_touch_sized_on_a_phone_and_the_page_says_it_read_again(tmp_path):
    """At 390 px the photo is shown about 350 px wide: each corner is still a 44 px target
    (it was 13 px), and after "Read again" the reloaded page says the photo was read again."""
    pytest.importorskip("playwright.sync_api")
    expect = pytest.importorskip("playwright.sync_api").expect
    from webapp_helpers import png_bytes

    photo = tmp_path / "table.png"
    photo.write_bytes(png_bytes(1600, 1200))  # a photo far wider than the phone
    app = create_app({"DATABASE": str(tmp_path / "p.sqlite3"), "INSTANCE_PATH": str(tmp_path / "i"),
                      "READER": blind, "READ_OUTLINE": ReadAgain()})
    with serving(app) as base, chromium_page(viewport={"width": 390, "height": 844},
                                             is_mobile=True, has_touch=True) as (b, page, errors):
        page.goto(base + "/")
        page.set_input_files("#photo", str(photo))
        page.click("#submit")
        page.wait_for_url("**/r/*")
        handles = page.locator("circle.outline-corner")
        expect(handles).to_have_count(4)
        for i in range(4):
            box = handles.nth(i).bounding_box()
            assert box["width"] >= TOUCH - 0.5 and box["height"] >= TOUCH - 0.5, box
        # a press in a corner's target, off its centre, takes it
        page.locator("#outline-svg").scroll_into_view_if_needed()
        box = handles.nth(0).bounding_box()
        cx = float(handles.nth(0).get_attribute("cx"))
        page.mouse.move(box["x"] + 6, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + 36, box["y"] + box["height"] / 2, steps=4)
        page.mouse.up()
        assert float(handles.nth(0).get_attribute("cx")) > cx
        expect(page.locator("#read-again-note")).to_have_count(0)
        page.select_option("#outline-size", "5")
        page.click("#outline-read")
        note = page.locator("#read-again-note")
        expect(note).to_be_visible(timeout=30_000)  # after the reload
        expect(note).to_contain_text("Read again: total")
        expect(page.locator("#grid")).to_be_visible()
        page.reload()  # said once: a later visit shows the page as it is
        expect(page.locator("#grid")).to_be_visible()
        expect(page.locator("#read-again-note")).to_have_count(0)
        assert errors == []
