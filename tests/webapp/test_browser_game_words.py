"""The editor's game words come from the rule sets' metadata (``rules_meta``), not from a copy
in the page script: terrain keys, the Origins pieces' names, the totems, The Court's tokens.
In a real headless Chromium; skips when Chromium or Playwright is missing."""
from __future__ import annotations

import re

import pytest
from browser_support import chromium_page, serving_app
from webapp_helpers import FakeReader

from engine.kingdom import CAVEMEN, LETTER_OF, RESOURCES, WARRIORS

pytestmark = pytest.mark.browser
DESERT = re.compile(r"\bt-desert\b")


@pytest.fixture
def live_server(tmp_path):
    with serving_app(tmp_path, FakeReader()) as base:
        yield base


def _options(page, label):
    select = page.locator("#editor label", has_text=label).locator("select")
    return select.evaluate("s => Array.from(s.options).map(o => [o.value, o.textContent])")


def test_origins_pieces_and_terrain_keys_come_from_the_rule_sets(live_server):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with chromium_page() as (browser, page, errors):
        page.goto(live_server + "/new?rules=origins-tribe")
        page.click('#grid .sq[data-r="0"][data-c="0"]')
        # a terrain button shows its key; the key sets that terrain
        expect(page.locator('#editor [data-terrain="desert"]')).to_have_text(
            f"{LETTER_OF['desert']} desert")
        page.keyboard.press("d")
        expect(page.locator('#grid .sq[data-r="0"][data-c="0"]')).to_have_class(DESERT)
        assert _options(page, "Resource") == [["", "none"]] + [[r, r] for r in RESOURCES]
        assert _options(page, "Caveman") == [["", "none"]] + [[c, c] for c in CAVEMEN]
        warriors = _options(page, "Warrior")
        assert warriors == [["0", "none"]] + [[str(p), f"{n} ({p})"] for n, p in WARRIORS.items()]
        assert warriors[1] == ["1", "small (1)"]
        # a key of a terrain this rule set lacks does nothing (no field in Origins)
        page.keyboard.press("f")
        expect(page.locator('#grid .sq[data-r="0"][data-c="0"]')).to_have_class(DESERT)

        page.goto(live_server + "/new?rules=origins-totem")
        totems = page.locator("#choices label", has_text="totem",
                              has=page.locator('input[type="checkbox"]'))
        expect(totems).to_have_count(len(RESOURCES))
        assert totems.all_text_contents() == [f" {r} totem" for r in RESOURCES]
        assert not errors, errors
