"""A reading corrected many times (issue 48, item 13): every correction is kept, but what a
correction's answer and the result page carry stays bounded (the newest undo steps, and the
page says so), and each correction costs the same work however many came before."""
from __future__ import annotations

import copy
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webapp_helpers import page_token, png_bytes

from kingdomino.store import Store
from webapp import reading, service

SHOWN = getattr(service, "HISTORY_SHOWN", 50)  # undo steps the page carries (the fix's constant)


def _reading(client) -> tuple[str, str, dict]:
    token = page_token(client)
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 303, resp.get_data(as_text=True)[:300]
    rid = resp.headers["Location"].rsplit("/", 1)[1]
    return rid, token, client.get(f"/api/readings/{rid}").get_json()["kingdom"]


def _changed(kingdom: dict, i: int) -> dict:
    """The i-th change: one more crown (mod 3) on one of the ten squares of rows 0 and 1, a
    different square each time, so that no change takes the previous one back."""
    out = copy.deepcopy(kingdom)
    cell = out["cells"][(i % 10) // 5][i % 5]
    cell["crowns"] = (cell["crowns"] + 1) % 3
    return out


def _post(client, rid, token, kingdom) -> dict:
    resp = client.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_data(as_text=True)[:300]
    return resp


def _make_changes(client, rid, token, kingdom, n):
    """Post ``n`` changes; every kingdom along the way (``states[i]`` before change i) and the
    answers' sizes."""
    states, sizes = [kingdom], []
    for i in range(n):
        states.append(_changed(states[-1], i))
        sizes.append(len(_post(client, rid, token, states[-1]).data))
    return states, sizes


def _cells(history):
    """The squares of each undo step (the machine's reading, when Undo reaches it, carries the
    reader's confidence too)."""
    return [service.kingdom_of(h["kingdom"])["cells"] for h in history]


def test_a_correction_answer_does_not_grow_with_the_history(client):
    rid, token, kingdom = _reading(client)
    states, sizes = _make_changes(client, rid, token, kingdom, 60)
    # the answer to the 60th correction is no bigger than the 20th's (the counts' digits aside)
    assert sizes[59] <= sizes[19] + 50, (sizes[19], sizes[59])
    last = _post(client, rid, token, _changed(states[-1], 60)).get_json()
    assert last["corrections"] == 61
    assert len(last["history"]) <= service.HISTORY_ANSWER < 61
    assert last["history_total"] == 61 and last["history_truncated"] is True
    # what it carries is the newest undo steps: the last one goes back to the 60th kingdom
    assert last["history"][-1]["kingdom"]["cells"] == states[60]["cells"]
    assert last["kingdom"]["cells"] == _changed(states[-1], 60)["cells"]


def test_the_page_keeps_the_newest_undo_steps_and_says_so(client, app):
    rid, token, kingdom = _reading(client)
    n = SHOWN + 15
    states, _sizes = _make_changes(client, rid, token, kingdom, n)
    view = client.get(f"/api/readings/{rid}").get_json()
    assert view["corrections"] == n
    assert view["history_total"] == n and view["history_truncated"] is True
    assert len(view["history"]) == SHOWN
    # oldest first, as before: Undo goes back to states[n-1], then n-2, ... down to states[15]
    assert _cells(view["history"]) == [s["cells"] for s in states[n - SHOWN:n]]
    html = client.get(f"/r/{rid}").get_data(as_text=True)
    assert 'id="history-note"' in html and f"{SHOWN}" in html and f"{n}" in html
    # nothing a person corrected is lost: the store keeps every correction
    store = Store(app.config["DATABASE"])
    try:
        assert len(store.corrections(rid)) == n
    finally:
        store.close()
    # a short history is shown whole, without the note
    rid2, token2, kingdom2 = _reading(client)
    _make_changes(client, rid2, token2, kingdom2, 3)
    short = client.get(f"/api/readings/{rid2}").get_json()
    assert short["history_total"] == 3 and short["history_truncated"] is False
    assert len(short["history"]) == 3
    assert 'id="history-note"' not in client.get(f"/r/{rid2}").get_data(as_text=True)


def test_undo_goes_back_past_the_steps_shown_after_a_reload(client):
    rid, token, kingdom = _reading(client)
    n = SHOWN + 15
    states, _sizes = _make_changes(client, rid, token, kingdom, n)
    # undo every step the page shows, as the page does: post the kingdom Undo goes back to
    history = client.get(f"/api/readings/{rid}").get_json()["history"]
    for step in reversed(history):
        body = _post(client, rid, token, {**step["kingdom"], "rules": step["rules"],
                                          "bonuses": step["bonuses"]}).get_json()
    assert body["kingdom"]["cells"] == states[n - SHOWN]["cells"]
    assert body["history_total"] == n - SHOWN
    # a reload offers the older steps: Undo goes on back to the machine's reading
    again = client.get(f"/api/readings/{rid}").get_json()
    assert _cells(again["history"]) == [s["cells"] for s in states[:n - SHOWN]]
    assert again["history_truncated"] is False
    # a new change after undoing is one step on top of where the kingdom is now
    body = _post(client, rid, token, _changed(states[n - SHOWN], 3)).get_json()
    assert body["history_total"] == n - SHOWN + 1
    assert body["history"][-1]["kingdom"]["cells"] == states[n - SHOWN]["cells"]


def test_each_correction_costs_the_same_however_many_came_before(client, monkeypatch):
    """The work per correction (kingdoms normalised into editor states) does not grow: posting
    many corrections is linear, not quadratic."""
    rid, token, kingdom = _reading(client)
    calls = {"n": 0}
    real = reading._state

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(reading, "_state", counting)
    per_post = []
    state = kingdom
    for i in range(40):
        state = _changed(state, i)
        before = calls["n"]
        _post(client, rid, token, state)
        per_post.append(calls["n"] - before)
    assert per_post[39] <= per_post[9], per_post


def test_a_store_from_before_the_links_shows_the_same_history(client, app):
    """Corrections stored before the undo links (or by an older version) get their links the
    first time the result is shown; Undo goes back exactly as it did."""
    rid, token, kingdom = _reading(client)
    states = [kingdom]
    store = Store(app.config["DATABASE"])
    try:
        for i in range(6):
            states.append(_changed(states[-1], i))
            store._db.execute("INSERT INTO corrections (reading_id, created, kingdom)"
                              " VALUES (?, 0, ?)", (rid, json.dumps({**states[-1], "bonuses": []})))
        store._db.execute("INSERT INTO corrections (reading_id, created, kingdom)"  # an undo
                          " VALUES (?, 0, ?)", (rid, json.dumps({**states[5], "bonuses": []})))
        store._db.commit()
    finally:
        store.close()
    view = client.get(f"/api/readings/{rid}").get_json()
    assert view["history_total"] == 5
    assert _cells(view["history"]) == [s["cells"] for s in states[:5]]
    body = _post(client, rid, token, states[4]).get_json()  # one more undo
    assert body["kingdom"]["cells"] == states[4]["cells"] and body["history_total"] == 4


# ---------------------------------------------------------------- the links match the replay

MACHINE = {"rules": "kingdomino", "size": 5,
           "cells": [[{"terrain": "field", "crowns": 0, "confidence": 0.9}] * 5
                     for _ in range(5)]}


def _kingdom(n: int) -> dict:
    """A small set of distinct kingdoms, so that sequences repeat and undo often."""
    cells = [[{"terrain": "field", "crowns": 0} for _ in range(5)] for _ in range(5)]
    cells[0][0]["crowns"] = n
    return {"rules": "kingdomino", "size": 5, "cells": cells}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machine=st.booleans(),
       moves=st.lists(st.one_of(st.integers(0, 3), st.just("undo")), max_size=25))
def test_the_stored_links_give_the_replayed_undo_stack(machine, moves):
    store = Store(":memory:")
    try:
        rid = store.add_reading(rules="kingdomino", machine=MACHINE if machine else None)
        key = reading.state_key("kingdomino", [])
        posted = []
        for move in moves:
            stack = reading.undo_stack(MACHINE if machine else None, "kingdomino", [], posted)
            if move == "undo":
                if not stack:
                    continue
                kingdom = stack[-1]["kingdom"]
            else:
                kingdom = _kingdom(move)
            posted.append(kingdom)
            store.add_correction(rid, kingdom, key=key)
            expected = reading.undo_stack(MACHINE if machine else None, "kingdomino", [], posted)
            kingdoms, total = store.undo_history(rid, limit=100, key=key)
            assert total == len(expected)
            got = [reading._state(k, "kingdomino", []) for k in kingdoms]
            assert got == expected
            few, _total = store.undo_history(rid, limit=2, key=key)
            assert few == kingdoms[-2:] if kingdoms else few == []
    finally:
        store.close()
