"""In a real headless Chromium: switch the result page's language, correct a square through the
localized editor, see the total change; every language at phone width (390 px) without cut-offs.

Screenshots go to the test's tmp folder and to $KINGDOMINO_SHOTS when set (to look at them).
"""
from __future__ import annotations

import copy
import json
import re
import urllib.request

import pytest
from browser_support import chromium_page, keep_screenshot, serving_app
from webapp_helpers import FakeReader, png_bytes

pytestmark = pytest.mark.browser

# locale -> (<html lang>, the breakdown's "Terrain" head, the status after one and two corrections)
LANGUAGES = {
    "ko": ("ko", "지형", ("저장됨(수정 1회)", "저장됨(수정 2회)")),
    "zh_Hant": ("zh-Hant", "地形", ("已儲存（修正 1 次）", "已儲存（修正 2 次）")),
    "zh_Hans": ("zh-Hans", "领土", ("已保存（修正 1 次）", "已保存（修正 2 次）")),
    "en": ("en", "Terrain", ("saved (1 correction)", "saved (2 corrections)")),
}


@pytest.fixture
def live_server(tmp_path):
    with serving_app(tmp_path, FakeReader()) as base:
        yield base


def _score(base, kingdom) -> int:
    req = urllib.request.Request(base + "/api/score-grid", data=json.dumps(kingdom).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)["score"]["total"]


def _reading(base, rid) -> dict:
    with urllib.request.urlopen(f"{base}/api/readings/{rid}", timeout=30) as resp:
        return json.load(resp)


def _a_change_to_mine_3(base, kingdom):
    """A square that, made a mine of 3 crowns, changes the total (the engine says)."""
    before = _score(base, kingdom)
    for r, row in enumerate(kingdom["cells"]):
        for c, cell in enumerate(row):
            if cell["terrain"] == "castle":
                continue
            changed = copy.deepcopy(kingdom)
            changed["cells"][r][c] = {"terrain": "mine", "crowns": 3}
            after = _score(base, changed)
            if after != before:
                return (r, c), before, after
    pytest.fail("no square changes the total")


def _upload(page, base, tmp_path) -> str:
    photo = tmp_path / "kingdom.png"
    photo.write_bytes(png_bytes())
    page.goto(base + "/")
    page.set_input_files("#photo", str(photo))
    page.click("#submit")
    page.wait_for_url("**/r/*", timeout=120_000)
    return page.url.rsplit("/", 1)[1]


@pytest.mark.parametrize("locale", ["ko", "zh_Hant"])
def test_switch_language_on_the_result_page_and_correct_a_square(live_server, tmp_path, locale):
    base = live_server
    lang, terrain_head, saved = LANGUAGES[locale]
    expect = pytest.importorskip("playwright.sync_api").expect
    with chromium_page(locale="en-US") as (browser, page, errors):
        rid = _upload(page, base, tmp_path)
        expect(page.locator("html")).to_have_attribute("lang", "en")
        page.click(f"#languages a[data-locale={locale}]")
        expect(page.locator("html")).to_have_attribute("lang", lang)
        page.wait_for_url(f"**/r/{rid}")
        expect(page.locator("#breakdown thead th").nth(1)).to_have_text(terrain_head)
        kingdom = _reading(base, rid)["kingdom"]
        (r, c), before, after = _a_change_to_mine_3(base, kingdom)
        expect(page.locator("#total")).to_have_text(str(before))
        page.click(f"#grid .sq[data-r='{r}'][data-c='{c}']")
        mine = page.locator("#editor button[data-terrain=mine]")
        mine_name = {"ko": "광산", "zh_Hant": "山脈"}[locale]
        expect(mine).to_contain_text(mine_name)  # the editor speaks the rulebook's words
        mine.click()
        expect(page.locator("#status")).to_have_text(saved[0], timeout=60_000)
        page.click("#editor button[data-crowns='3']")
        expect(page.locator("#total")).to_have_text(str(after), timeout=60_000)
        expect(page.locator("#status")).to_have_text(saved[1], timeout=60_000)
        stored = _reading(base, rid)["kingdom"]["cells"][r][c]
        assert stored["terrain"] == "mine" and stored["crowns"] == 3
        # the language stays chosen on the next page (the cookie), and the grid's labels follow
        page.goto(base + "/new")
        expect(page.locator("html")).to_have_attribute("lang", lang)
        empty = {"ko": "빈칸", "zh_Hant": "空格"}[locale]  # the grid's labels for screen readers
        expect(page.locator("#grid .sq").first).to_have_attribute("aria-label", re.compile(empty))
        keep_screenshot(page, f"lang-{locale}-new.png", tmp_path)
        assert errors == []


@pytest.mark.slow
def test_every_language_fits_a_phone(live_server, tmp_path):
    """No page is wider than a 390 px phone in any language (a long word or title would push
    it sideways and cut it off); screenshots of each to look at."""
    base = live_server
    with chromium_page() as (browser, desk, errors):
        rid = _upload(desk, base, tmp_path)
        page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for locale, (lang, terrain_head, _saved) in LANGUAGES.items():
            page.goto(f"{base}/lang/{locale}?next=/r/{rid}")
            page.wait_for_load_state("networkidle")
            assert page.get_attribute("html", "lang") == lang
            assert page.inner_text("#breakdown thead th >> nth=1") == terrain_head
            for path in (f"/r/{rid}", "/", "/batch/", "/new?rules=age-of-giants", "/nowhere"):
                page.goto(base + path)
                page.wait_for_load_state("networkidle")
                width = page.evaluate("document.documentElement.scrollWidth")
                name = path.strip("/").replace("/", "-").replace("?", "-").replace("=", "-") or "home"
                keep_screenshot(page, f"phone-{locale}-{name}.png", tmp_path, full_page=True)
                assert width <= 390, f"{path} in {locale} is {width} px wide on a 390 px phone"
        assert errors == []


@pytest.mark.parametrize("locale, warning", [("zh_Hant", "1 格未與城堡相連：第 1 列第 1 行"),
                                             ("ko", "왕궁에 이어지지 않은 칸 1개: 1행 1열"),
                                             ("en", "1 square(s) not joined to the castle: row 1 col 1")])
def test_a_new_scores_warning_shows_in_the_page_language(live_server, locale, warning):
    """The engine's warning about a square the editor just placed, in the page's words."""
    expect = pytest.importorskip("playwright.sync_api").expect
    with chromium_page() as (browser, page, errors):
        page.goto(f"{live_server}/lang/{locale}?next=/new")
        expect(page.locator("html")).to_have_attribute("lang", LANGUAGES[locale][0])
        page.click("#grid .sq[data-r='0'][data-c='0']")
        page.click("#editor button[data-terrain=field]")
        expect(page.locator("#warnings li")).to_have_text([warning], timeout=60_000)
        assert errors == []
