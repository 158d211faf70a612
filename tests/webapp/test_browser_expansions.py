"""The expansions in a real headless Chromium: a Court kingdom and an Age of Giants kingdom
built by hand in the correction editor, scored live. Skips when Chromium or Playwright is missing.
"""
from __future__ import annotations

import pytest
from browser_support import chromium_page, save_keeps_total, serving_app
from webapp_helpers import FakeReader

pytestmark = pytest.mark.browser


@pytest.fixture
def live_server(tmp_path):
    with serving_app(tmp_path, FakeReader()) as base:
        yield base


def _square(page, r, c):
    page.click(f'#grid .sq[data-r="{r}"][data-c="{c}"]')


def test_build_a_court_kingdom_and_a_courtier_changes_the_total(live_server):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with chromium_page() as (browser, page, errors):
        page.goto(live_server + "/new?rules=the-court")
        expect(page.locator("#total")).to_have_text("0")
        expect(page.locator(".expansion-note")).to_contain_text("does not see giants or Court tiles")
        # a wood token on r3c2 (keyboard), a forest with 1 crown on r3c1: forest 2 x 1 = 2
        _square(page, 2, 1)
        page.keyboard.press("w")
        expect(page.locator('#grid .sq[data-r="2"][data-c="1"]')).to_have_class("sq t-forest sel")
        page.keyboard.press("r")
        expect(page.locator('#grid .sq[data-r="2"][data-c="1"]')).to_have_attribute(
            "aria-label", "row 3 column 2: forest, wood token")
        _square(page, 2, 0)
        page.keyboard.press("w")
        page.keyboard.press("1")
        expect(page.locator("#total")).to_have_text("2")
        # the lumberjack on r2c2, placed with the editor's list: 3 + 1 wood x 3 = 6 more
        _square(page, 1, 1)
        page.keyboard.press("w")
        expect(page.locator("#total")).to_have_text("3")
        page.select_option('#editor select[data-piece="court"]', "lumberjack")
        expect(page.locator("#total")).to_have_text("9")
        expect(page.locator("#breakdown tr.courtier td:nth-child(2)")).to_have_text(
            ["Lumberjack r2c2: 3 + 1 wood x 3 = 6"])
        # a building of 2 crowns by keyboard on r1c1 (forest): the forest region gains 2 crowns
        _square(page, 0, 1)
        page.keyboard.press("w")
        page.keyboard.press("b")
        page.keyboard.press("b")
        expect(page.locator('#grid .sq[data-r="0"][data-c="1"]')).to_have_attribute(
            "aria-label", "row 1 column 2: forest, building with 2 crowns")
        # forest r1c2, r2c2, r3c1, r3c2 = 4 squares x 3 crowns = 12; lumberjack 6 -> 18
        save_keeps_total(page, "18")
        assert errors == []


def test_giants_and_a_quest_chosen_on_the_page(live_server):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with chromium_page() as (browser, page, errors):
        page.goto(live_server + "/new?rules=age-of-giants")
        _square(page, 2, 1)
        page.keyboard.press("m")
        page.keyboard.press("3")
        expect(page.locator("#total")).to_have_text("3")
        page.keyboard.press("+")
        expect(page.locator("#total")).to_have_text("2")
        page.click('#editor [data-piece="giants"][data-value="3"]')
        expect(page.locator("#total")).to_have_text("0")
        # the quests in play: Local Business mine is met (the mine beside the castle)
        page.check("#choices input[value='local-business-mine']")
        expect(page.locator("#total")).to_have_text("5")
        page.check("#choices input[value='lost-corner']")
        expect(page.locator("#breakdown tr.bonus")).to_have_count(2)
        expect(page.locator("#breakdown")).to_contain_text("not met: the castle is on r3c3")
        assert errors == []
