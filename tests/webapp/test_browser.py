"""End to end in a real headless Chromium: upload, fix one square, see the total change.

Uses the real reader on ``samples/kingdom-5x5.jpg`` when the models and the sample exist, the
fake reader otherwise. Skips when Chromium or Playwright is missing.
"""
from __future__ import annotations

import copy
import json
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import chromium_page, keep_screenshot, save_keeps_total, serving_app
from webapp_helpers import FakeReader, png_bytes

from webapp.reading import default_reader

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "kingdom-5x5.jpg"
MODEL = ROOT / "models" / "squares.onnx"


@pytest.fixture
def live_server(tmp_path):
    real = SAMPLE.exists() and MODEL.exists()
    with serving_app(tmp_path, default_reader if real else FakeReader()) as base:
        yield base, real


def _get_json(url):
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.load(resp)


def _stored_when(base, rid, ok, timeout=60):
    """The stored reading once ``ok(reading)`` holds (the page's saves have reached the store);
    fails with the last reading seen when it does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        stored = _get_json(f"{base}/api/readings/{rid}")
        if ok(stored):
            return stored
        assert time.monotonic() < deadline, f"the store never got there: {stored['kingdom']}"
        time.sleep(0.05)  # polling the condition, not waiting for a fixed time


def _settled(page, expect, total):
    """The page shows ``total`` and has nothing in flight (every save answered)."""
    expect(page.locator("#total")).to_have_text(str(total), timeout=60_000)
    page.wait_for_load_state("networkidle")
    expect(page.locator("#status")).not_to_have_text("scoring\u2026", timeout=60_000)


def _score(base, kingdom):
    req = urllib.request.Request(base + "/api/score-grid", data=json.dumps(kingdom).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)["score"]["total"]


def _a_change_that_moves_the_total(base, kingdom, bonuses):
    """A square and a (terrain, crowns) that give a different total, worked out by the engine."""
    before = _score(base, {**kingdom, "bonuses": bonuses})
    for r, row in enumerate(kingdom["cells"]):
        for c, cell in enumerate(row):
            if cell["terrain"] in ("castle", "hut"):
                continue
            for terrain, crowns in (("mine", 3), ("field", 1), ("lake", 0)):
                changed = copy.deepcopy(kingdom)
                changed["cells"][r][c] = {"terrain": terrain, "crowns": crowns}
                after = _score(base, {**changed, "bonuses": bonuses})
                if after != before:
                    return (r, c), terrain, crowns, before, after
    pytest.fail("no single-square change moves the total")


def _photo(real, tmp_path):
    """The photo the browser uploads: the rendered sample with the real reader, else a plain PNG
    the fake reader reads as its known kingdom."""
    if real:
        return SAMPLE
    photo = tmp_path / "kingdom.png"
    photo.write_bytes(png_bytes())
    return photo


def _upload(page, base, photo, **fields) -> str:
    """Upload ``photo`` from the home page (``fields``: form selectors -> values to fill first)
    and wait for its result page; returns the reading's id."""
    page.goto(base + "/")
    page.set_input_files("#photo", str(photo))
    for selector, value in fields.items():
        if selector.startswith("select"):
            page.select_option(selector.split(":", 1)[1], value)
        else:
            page.fill(selector, value)
    page.click("#submit")
    page.wait_for_url("**/r/*", timeout=120_000)
    return page.url.rsplit("/", 1)[1]


@pytest.mark.slow
def test_upload_correct_and_see_the_total_change(live_server, tmp_path):
    base, real = live_server
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    photo = _photo(real, tmp_path)
    with chromium_page(viewport={"width": 1280, "height": 900}) as (browser, page, errors):
        rid = _upload(page, base, photo, **{"select:#rules": "kingdomino",
                                            "input[name=claimed]": "40"})
        view = _get_json(f"{base}/api/readings/{rid}")
        shown = page.text_content("#total").strip()
        assert shown == str(view["score"]["total"])
        assert page.locator("#grid .sq").count() == view["kingdom"]["size"] ** 2
        assert page.locator("#overlay polygon.outline").count() == 1  # outline on the photo
        assert page.locator("#dispute").is_visible()

        (r, c), terrain, crowns, before, after = _a_change_that_moves_the_total(
            base, view["kingdom"], view["bonuses"])
        assert shown == str(before)
        # fix one square with the mouse: terrain chip, then crowns chip
        machine_cell = view["kingdom"]["cells"][r][c]
        page.click(f'#grid .sq[data-r="{r}"][data-c="{c}"]')
        page.click(f'#editor [data-terrain="{terrain}"]')
        page.click(f'#editor [data-crowns="{crowns}"]')
        _settled(page, expect, after)
        stored = _stored_when(base, rid, lambda v: v["kingdom"]["cells"][r][c] ==
                              {"terrain": terrain, "crowns": crowns})
        assert stored["score"]["total"] == after

        # hovering a region highlights its squares on both views
        page.hover("#breakdown tr.region >> nth=0")
        region = stored["score"]["regions"][0]
        assert page.locator("#grid .sq.hl").count() == len(region["cells"])
        assert page.locator("#overlay polygon.hl").count() == len(region["cells"])

        # two undos (crowns, then terrain) bring the machine's total back, and the store too
        page.click("#undo")
        page.click("#undo")
        _settled(page, expect, before)
        _stored_when(base, rid, lambda v: v["kingdom"]["cells"][r][c] == machine_cell)
        # keyboard: arrows move, a letter sets the terrain
        page.focus("#grid")
        page.keyboard.press("ArrowRight" if c == 0 else "ArrowLeft")
        page.keyboard.press("ArrowLeft" if c == 0 else "ArrowRight")
        page.keyboard.press(terrain[0].upper() if terrain != "lake" else "l")
        page.keyboard.press(str(crowns))
        _settled(page, expect, after)
        _stored_when(base, rid, lambda v: v["kingdom"]["cells"][r][c] ==
                     {"terrain": terrain, "crowns": crowns} and v["score"]["total"] == after)
        keep_screenshot(page, "webapp-result.png", tmp_path, full_page=True)

        # the permalink shows the corrected total after a reload
        page.reload()
        assert page.text_content("#total").strip() == str(after)

        # Undo survives the reload: it comes from the stored corrections
        expect(page.locator("#undo")).to_be_enabled()
        while page.locator("#undo").is_enabled():
            page.click("#undo")
        _settled(page, expect, before)
        _stored_when(base, rid, lambda v: v["kingdom"]["cells"][r][c] == machine_cell
                     and v["score"]["total"] == before)

        # a phone screen: no horizontal scrolling
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        phone.goto(page.url)
        width = phone.evaluate("document.documentElement.scrollWidth")
        keep_screenshot(phone, "webapp-phone.png", tmp_path, full_page=True)
        assert width <= 390
        assert errors == []


def _two_town_squares(page, base, expect):
    """A new Queendomino kingdom with town squares at row 3, columns 4-5; the first selected."""
    page.goto(base + "/new?rules=queendomino")
    expect(page.locator("#total")).to_have_text("0")
    for c in (3, 4):
        page.click(f'#grid .sq[data-r="2"][data-c="{c}"]')
        page.click('#editor [data-terrain="town"]')
    page.click('#grid .sq[data-r="2"][data-c="3"]')


def test_build_a_queendomino_kingdom_by_hand(live_server):
    base, _ = live_server
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with chromium_page() as (browser, page, errors):
        # two town squares beside the castle, a building with 1 crown worth 5 points,
        # 7 coins: town region 2 x 1 = 2, building 5, coins 7 // 3 = 2 -> 9
        _two_town_squares(page, base, expect)
        page.click("text=Place a building")
        page.fill("#editor .pieces-row input >> nth=0", "1")
        page.keyboard.press("Tab")
        expect(page.locator("#total")).to_have_text("2")
        page.fill("#editor .pieces-row input >> nth=1", "5")
        page.keyboard.press("Tab")
        expect(page.locator("#total")).to_have_text("7")
        page.fill("#choices input[type=number] >> nth=0", "7")
        page.keyboard.press("Tab")
        save_keeps_total(page, "9")
        assert errors == []


def test_an_answer_from_the_server_keeps_the_field_being_typed_into(live_server):
    """The score comes back while a field of the editor has the focus: the field must stay
    (the page used to rebuild the editor on every answer, so what was typed next was lost)."""
    base, _ = live_server
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with chromium_page() as (browser, page, errors):
        _two_town_squares(page, base, expect)
        expect(page.locator("#status")).to_have_text("")
        held = []
        page.route("**/api/score-grid", lambda route: held.append(route))
        page.click("text=Place a building")                 # its score request is held back
        page.locator("#editor .pieces-row input >> nth=0").focus()   # about to type
        deadline = time.monotonic() + 30
        while not held and time.monotonic() < deadline:   # until the request is held back
            page.wait_for_timeout(20)
        assert len(held) == 1
        held[0].continue_()                                 # the answer arrives now
        page.unroute("**/api/score-grid")
        expect(page.locator("#status")).to_have_text("")
        page.keyboard.press("Control+a")
        page.keyboard.type("1")
        page.keyboard.press("Tab")
        expect(page.locator("#total")).to_have_text("2")
        assert errors == []


@pytest.mark.slow
def test_no_page_scrolls_sideways_on_a_phone(live_server, tmp_path):
    """390 px is a common phone width: the upload page once came out 470 px wide (the Rules
    drop-down's longest title), so a referee had to scroll sideways."""
    base, real = live_server
    photo = _photo(real, tmp_path)
    with chromium_page() as (browser, desk, errors):
        _upload(desk, base, photo)
        result = desk.url
        page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for url in (base + "/", base + "/batch/", result, base + "/new?rules=queendomino",
                    base + "/new?rules=origins-tribe&size=7"):
            page.goto(url)
            page.wait_for_load_state("networkidle")
            width = page.evaluate("document.documentElement.scrollWidth")
            name = url.replace(base, "").strip("/").replace("/", "-").replace("?", "-") or "home"
            keep_screenshot(page, f"phone-{name}.png", tmp_path, full_page=True)
            assert width <= 390, f"{url} is {width} px wide on a 390 px phone"
        assert errors == []


def test_regions_worth_nothing_are_folded_into_one_row(live_server):
    base, _ = live_server
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with chromium_page() as (browser, page, errors):
        page.goto(base + "/new?rules=kingdomino")
        expect(page.locator("#total")).to_have_text("0")
        # a forest and a lake without crowns, a field with one: 1 point, two regions worth 0
        for (r, c), terrain in (((2, 1), "forest"), ((2, 3), "lake"), ((1, 2), "field")):
            page.click(f'#grid .sq[data-r="{r}"][data-c="{c}"]')
            page.click(f'#editor [data-terrain="{terrain}"]')
        page.click('#editor [data-crowns="1"]')
        expect(page.locator("#total")).to_have_text("1")
        group = page.locator("#breakdown tr.zero-group")
        expect(group).to_have_count(1)
        expect(group).to_contain_text("2 regions without crowns")
        zero = page.locator("#breakdown tr.region.zero")
        expect(zero).to_have_count(2)
        expect(zero.first).to_be_hidden()
        expect(page.locator("#breakdown tr.region:not(.zero)")).to_have_count(1)
        group.locator("button").click()  # unfold: one row each
        expect(zero.first).to_be_visible()
        expect(zero.nth(1)).to_be_visible()
        assert sorted(zero.nth(i).locator("td").nth(1).inner_text() for i in range(2)) == \
            ["forest", "lake"]
        assert errors == []


def test_quick_corrections_are_stored_in_the_order_they_were_made(live_server, tmp_path):
    """Two corrections in quick succession: the second must be what is stored, even when the
    first save is slow (the page used to send both at once, and the slow one landed last)."""
    base, real = live_server
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    photo = _photo(real, tmp_path)
    with chromium_page() as (browser, page, errors):
        rid = _upload(page, base, photo)
        view = _get_json(f"{base}/api/readings/{rid}")
        (r, c), terrain, crowns, before, after = _a_change_that_moves_the_total(
            base, view["kingdom"], view["bonuses"])
        held, sent = [], []

        def hold_the_first(route):
            sent.append(route.request.post_data)
            if not held:
                held.append(route)    # the first save is slow
            else:
                route.continue_()

        page.route("**/api/readings/*/kingdom", hold_the_first)
        page.click(f'#grid .sq[data-r="{r}"][data-c="{c}"]')
        page.click(f'#editor [data-terrain="{terrain}"]')
        page.click(f'#editor [data-crowns="{crowns}"]')
        deadline = time.monotonic() + 30
        while not held and time.monotonic() < deadline:   # until the first save is held back
            page.wait_for_timeout(20)
        assert len(held) == 1
        held[0].continue_()
        _settled(page, expect, after)
        assert len(sent) == 2
        stored = _get_json(f"{base}/api/readings/{rid}")
        assert stored["kingdom"]["cells"][r][c] == {"terrain": terrain, "crowns": crowns}
        assert stored["score"]["total"] == after
        assert errors == []
