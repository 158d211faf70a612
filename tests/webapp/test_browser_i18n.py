"""In a real headless Chromium, pages in Chinese and Korean say the server's refusals in their
language (issue 52): a photo whose outline, placed by hand, holds no kingdom either."""
from __future__ import annotations

import pytest
from browser_support import chromium_page, serving
from webapp_helpers import png_bytes

from kingdomino import i18n
from vision.errors import NO_KINGDOM, PhotoError
from webapp import create_app

pytestmark = pytest.mark.browser


def _blind(*_args, **_kwargs):
    raise PhotoError(NO_KINGDOM)


@pytest.mark.parametrize("locale, catalog", [("zh-TW", "zh_Hant"), ("ko-KR", "ko")])
def test_a_failed_read_again_is_said_in_the_page_language(tmp_path, locale, catalog):
    sync_api = pytest.importorskip("playwright.sync_api")
    photo = tmp_path / "table.png"
    photo.write_bytes(png_bytes())
    app = create_app({"DATABASE": str(tmp_path / "b.sqlite3"), "INSTANCE_PATH": str(tmp_path / "i"),
                      "READER": _blind, "READ_OUTLINE": _blind})
    said = i18n.render(NO_KINGDOM, i18n.translations(catalog))
    with serving(app) as base, chromium_page(locale=locale) as (_browser, page, errors):
        page.goto(base + "/")
        page.set_input_files("#photo", str(photo))
        page.click("#submit")
        page.wait_for_url("**/r/*", timeout=60_000)
        sync_api.expect(page.locator(".error").first).to_contain_text(said)  # the result page
        page.click("#outline-read")
        sync_api.expect(page.locator("#outline-status")).to_have_text(said, timeout=30_000)
        assert errors == []
