"""Paper cuts of the pages (issue 52), in a real headless Chromium; skips without Chromium or
Playwright. On a 390 px phone no table cell breaks a word or a number inside itself (paper cut
2: "Square/s", "Crown/s", "Point/s" on the result page, "Plac/e", "Tabl/e" and a total 138 as
"13/8" in the batch standings, "Tot/al" on the game page, even at 1280 px): the result page,
the batch result page and the game page. A table too wide for the phone scrolls sideways in its
own box; the page itself does not. The upload page's "Whole table" checkbox sits beside its
words (paper cut 12)."""
from __future__ import annotations

import io

import pytest
from browser_support import chromium_page, keep_screenshot, serving
from webapp_helpers import FakeTableReader, png_bytes

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}

# Every word (a run of letters or digits: a break after a hyphen or a slash is a fair one) of
# every table cell, with the lines it is drawn on; a word drawn on two lines is broken inside.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("table th, table td")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const words = /[^\\s\\-\\/]+/g;
      for (let m = words.exec(node.data); m; m = words.exec(node.data)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set(Array.from(range.getClientRects())
          .filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) { broken.push(m[0] + " (in: " + cell.textContent.trim().slice(0, 40) + ")"); }
      }
    }
  }
  return broken;
}"""


# seven regions, three of them worth nothing, and a total of three digits (as a real one)
GRID = ["F3 F3 F3 W2 W2",
        "F3 F3 L3 W3 W2",
        "G0 G0 C0 L0 L0",
        "S3 S3 M3 M3 L0",
        "S3 S3 L0 L0 L0"]
LETTERS = {"F": "field", "W": "forest", "L": "lake", "G": "grassland", "S": "swamp",
           "M": "mine", "C": "castle"}


def big_reader(photo, rules, bonuses=()):
    """The kingdom of ``GRID``, with one square to check."""
    from kingdomino import service

    cells = [[{"terrain": LETTERS[t[0]], "crowns": int(t[1])} for t in row.split()]
             for row in GRID]
    obj = service.score_grid({"rules": rules, "size": 5, "cells": cells}, rules=rules,
                             bonuses=bonuses)
    obj["review"] = [[0, 0]]
    return obj


@pytest.fixture
def app(tmp_path):
    from webapp import create_app

    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "n.sqlite3"),
                       "INSTANCE_PATH": str(tmp_path / "instance"), "READER": big_reader,
                       "TABLE_READER": FakeTableReader(), "BATCH_JOBS": 1, "BATCH_WAIT": True})


def _upload(client, **form) -> dict:
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes()), "k.png"), **form},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def _batch(client) -> str:
    """A finished web batch of three players (one photo to check): its page's path."""
    import re

    html = client.get("/batch/").get_data(as_text=True)
    h = {"X-CSRF-Token": re.search(r'name="csrf-token" content="([^"]+)"', html).group(1),
         "Accept": "application/json"}
    manifest = ("photo,player,table,round\na.png,Annabelle Longname,Table one,Round 1\n"
                "b.png,Bob,Table one,Round 1\nc.png,Cat,Table one,Round 1\n")
    resp = client.post("/batch/", data={"rules": "kingdomino",
                                        "manifest": (io.BytesIO(manifest.encode()), "m.csv")},
                       headers=h, content_type="multipart/form-data")
    assert resp.status_code == 201, resp.get_data(as_text=True)
    job = resp.get_json()
    for i, name in enumerate(("a.png", "b.png", "c.png")):
        photo = png_bytes(600 + 10 * i)  # three photos, not one photo three times
        r = client.post(job["upload"], data={"photos": (io.BytesIO(photo), name)}, headers=h,
                        content_type="multipart/form-data")
        assert r.status_code == 200, r.get_data(as_text=True)
    assert client.post(job["start"], headers=h).status_code == 202
    return job["page"]


def test_no_table_cell_breaks_inside_a_word_or_a_number_on_a_phone(app, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    client = app.test_client()
    # Age of Giants with four quests: long reasons beside the numbers
    one = _upload(client, rules="age-of-giants", bonus=["middle-kingdom", "folie-des-grandeurs",
                                                        "bleak-king", "four-corners-field"])
    game = _upload(client, all="1", players="Annabelle,Bob")["game"]
    batch_page = _batch(client)
    with serving(app) as base, chromium_page(viewport=PHONE, is_mobile=True) as (b, page, errors):
        pages = [("result", f"/r/{one['id']}", "#breakdown tfoot"),
                 ("batch", batch_page, "#standings table"),
                 ("game", game.split("://", 1)[1].split("/", 1)[1], "table.kingdoms")]
        for name, path, ready in pages:
            page.goto(base + "/" + path.lstrip("/"))
            expect(page.locator(ready).first).to_be_visible()
            assert page.locator("table td").count() > 0, name
            broken = page.evaluate(BROKEN_WORDS)
            keep_screenshot(page, f"narrow-{name}.png", tmp_path, full_page=True)
            assert broken == [], f"{name} page at 390 px breaks inside: {broken}"
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"the {name} page is {width} px wide on a phone"
        # the game page broke "Tot/al" on a desktop too: its name fields took the room
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(base + "/" + pages[2][1].lstrip("/"))
        expect(page.locator("table.kingdoms")).to_be_visible()
        assert page.evaluate(BROKEN_WORDS) == []
        assert errors == []


@pytest.mark.parametrize("width", [390, 1280])
def test_the_whole_table_checkbox_sits_beside_its_words(app, width):
    """It floated centred above its label (a label is a column elsewhere): it now sits on the
    words' line, before them."""
    with serving(app) as base, chromium_page(viewport={"width": width, "height": 900}) as (
            b, page, errors):
        page.goto(base + "/")
        box = page.locator('#whole-table input[name="all"]').bounding_box()
        words = page.evaluate("""() => {
          const label = document.querySelector('#whole-table input[name="all"]').parentElement;
          const text = Array.from(label.childNodes).find(n => n.nodeType === 3 && n.data.trim());
          const range = document.createRange();
          range.selectNodeContents(text);
          const r = range.getClientRects()[0];
          return {x: r.left, top: r.top, bottom: r.bottom};
        }""")
        middle = box["y"] + box["height"] / 2
        assert words["top"] <= middle <= words["bottom"], (box, words)  # on the first line
        assert box["x"] + box["width"] <= words["x"]  # before them
        assert errors == []
