"""Issue 48, second round of hardening: the outline endpoint's numbers and nesting (4), decoding
memory held by pixels in flight (10), idle connections beside an ordinary request (11), the
game page's standings (14) and players' names (15)."""
from __future__ import annotations

import io
import re

import pytest
from webapp_helpers import FakeReader, page_token, png_bytes


# ---------------------------------------------------------------- 4: the outline endpoint


class ReadAgain:
    """A fake ``READ_OUTLINE`` that only counts its calls (the refusals come before it)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, photo, corners, size, rules, bonuses=()):
        self.calls += 1
        return FakeReader()(photo, rules, bonuses)


@pytest.fixture
def outline_app(make_app):
    again = ReadAgain()
    client = make_app(READ_OUTLINE=again).test_client()
    token = page_token(client)
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes()), "k.png"),
                                           "csrf_token": token},
                       content_type="multipart/form-data")
    assert resp.status_code == 200
    return client, token, resp.get_json()["id"], again


@pytest.mark.parametrize("corners", [
    [[int("9" * 400), 10], [500, 10], [500, 400], [10, 400]],
    [[10, 10], [500, -int("7" * 400)], [500, 400], [10, 400]],
    [10, 10, 500, 10, 500, 400, 10, int("1" * 400)],
    ",".join(["1" * 400] * 8),
], ids=["pairs, huge x", "pairs, huge negative y", "flat list", "text"])
def test_outline_with_a_huge_number_is_400_saying_so(outline_app, corners):
    client, token, rid, again = outline_app
    resp = client.post(f"/api/readings/{rid}/outline", json={"corners": corners},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 400, resp.get_data(as_text=True)
    error = resp.get_json()["error"]
    assert "corners" in error and ("number" in error or "finite" in error)
    assert len(error) < 400 and again.calls == 0


def test_outline_with_deeply_nested_json_is_400_saying_so(outline_app):
    client, token, rid, again = outline_app
    depth = 100_000
    body = '{"corners": ' + "[" * depth + "]" * depth + "}"
    resp = client.post(f"/api/readings/{rid}/outline", data=body,
                       headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
    assert resp.status_code == 400, resp.get_data(as_text=True)[:300]
    assert "nested too deeply" in resp.get_json()["error"] and again.calls == 0


# ---------------------------------------------------------------- 14: the game page's standings


def _read_one(client, token, **fields):
    data = {"photo": (io.BytesIO(png_bytes()), "k.png"), "csrf_token": token, **fields}
    resp = client.post("/api/score", data=data, content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()["id"]


def _standings(html: str) -> list[tuple[str, str, str]]:
    """``(place, label, kingdom number)`` of each standings row of a game page."""
    import re

    return re.findall(r'<li value="(\d+)">(.+?) \(kingdom (\d+)\): \d+', html)


def test_a_name_in_the_link_equal_to_a_stored_player_keeps_two_kingdoms_apart(client):
    token = page_token(client)
    first = _read_one(client, token)
    second = _read_one(client, token, player="kingdom 0")
    html = client.get(f"/game/{first}.{second}?name=kingdom+0").get_data(as_text=True)
    rows = _standings(html)
    assert len(rows) == 2, html
    assert sorted(number for _, _, number in rows) == ["1", "2"]  # people count from 1
    assert len({label for _, label, _ in rows}) == 2  # distinct kingdoms, distinct labels
    names = re.findall(r'name="name" maxlength="80" value="([^"]*)"', html)
    assert len(set(names)) == 2 and "kingdom 0" in names


def test_kingdoms_under_different_rule_sets_are_ranked_each_with_its_own(client):
    token = page_token(client)
    first = _read_one(client, token, rules="kingdomino")
    second = _read_one(client, token, rules="age-of-giants")
    resp = client.get(f"/game/{first}.{second}")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200
    assert "No kingdom could be scored" not in html
    assert "different rule sets" in html
    rows = _standings(html)
    assert sorted(number for _, _, number in rows) == ["1", "2"]  # people count from 1
    assert [place for place, _, _ in rows] == ["1", "1"]  # each first under its own rules


# ---------------------------------------------------------------- 15: players' names


@pytest.fixture
def table_client(make_app, table_reader):
    reader = table_reader
    sizes = []

    def read(photo, rules, bonuses=(), size=None):
        sizes.append(size)
        return reader(photo, rules, bonuses)

    client = make_app(TABLE_READER=read).test_client()
    return client, sizes


def _post_table(client, **fields):
    data = {"photo": (io.BytesIO(png_bytes(1600, 600)), "table.png"), "all": "1", **fields}
    return client.post("/api/score", data=data, content_type="multipart/form-data")


def test_players_are_cleaned_as_a_single_player_is(table_client, client):
    tclient, _ = table_client
    resp = _post_table(tclient, players="A\x00nn,\u202eBob\u200b")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    stored = [tclient.get(f"/api/readings/{k['id']}").get_json()["player"]
              for k in resp.get_json()["kingdoms"]]
    one = _read_one(client, page_token(client), player="\u202eBob\u200b")
    assert stored == ["Ann", "Bob"]
    assert client.get(f"/api/readings/{one}").get_json()["player"] == "Bob"
    # cleaning happens before the checks: two names that clean to one name are one name twice
    resp = _post_table(tclient, players="Ann,A\x00nn")
    assert resp.status_code == 400 and "twice" in resp.get_json()["error"]


@pytest.mark.parametrize("players", ["x" * 10_000, "Ann," * 2_500 + "Ann", "a," * 5_000 + ","],
                         ids=["one long name", "a name 2,501 times", "an empty name"])
def test_a_bad_players_field_is_400_without_echoing_it_all(table_client, players):
    tclient, sizes = table_client
    resp = _post_table(tclient, players=players)
    assert resp.status_code == 400
    assert len(resp.get_json()["error"]) < 300 and sizes == []


def test_all_refuses_an_invalid_size_and_uses_a_valid_one(table_client):
    tclient, sizes = table_client
    resp = _post_table(tclient, size="9")
    assert resp.status_code == 400 and "5 or 7" in resp.get_json()["error"] and sizes == []
    assert _post_table(tclient, size="5").status_code == 200 and sizes == [5]
    assert _post_table(tclient).status_code == 200 and sizes == [5, None]


# ---------------------------------------------------------------- 11: idle connections


@pytest.mark.slow
def test_an_ordinary_request_is_answered_beside_205_idle_connections(kingdomino_server):
    import socket
    import time

    idle = []
    try:
        for _ in range(205):
            idle.append(socket.create_connection(("127.0.0.1", kingdomino_server.port),
                                                 timeout=10))
        start = time.monotonic()
        try:
            status = kingdomino_server.status("/api/rules", 15)
        except OSError as exc:  # timed out: the server never took the connection
            status = type(exc).__name__
        took = time.monotonic() - start
        assert status == 200 and took < 3, f"status {status} after {took:.1f} s"
    finally:
        for s in idle:
            s.close()


# ---------------------------------------------------------------- 10: pixels in flight


def _until(condition, limit: float = 30.0) -> None:
    """Poll ``condition`` until it holds; fail after ``limit`` seconds."""
    import time

    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def test_two_large_decodes_never_run_at_once_under_a_budget_that_fits_one():
    import threading

    from webapp.security import PixelBudget

    budget = PixelBudget(150_000_000)
    running, most, lock = [], [0], threading.Lock()
    release = {name: threading.Event() for name in ("a", "b")}

    def fake_decode(name):  # a 120 MP decode that lasts until the test lets it end
        with budget.hold(120_000_000, wait_s=60):
            with lock:
                running.append(name)
                most[0] = max(most[0], len(running))
            release[name].wait(60)
            with lock:
                running.remove(name)

    first = threading.Thread(target=fake_decode, args=("a",))
    first.start()
    _until(lambda: running == ["a"])
    second = threading.Thread(target=fake_decode, args=("b",))
    second.start()
    _until(lambda: budget.waiting() == 1)   # b is queued behind a, not decoding
    assert running == ["a"] and budget.in_use() == 120_000_000
    release["a"].set()
    _until(lambda: running == ["b"])
    release["b"].set()
    first.join(30)
    second.join(30)
    assert most[0] == 1 and budget.in_use() == 0


def test_small_photos_share_the_budget_and_a_wait_too_long_is_busy():
    import threading

    from vision.photo.files import PhotoBusy
    from webapp.security import PixelBudget

    budget = PixelBudget(150_000_000)
    with budget.hold(12_000_000, wait_s=1), budget.hold(130_000_000, wait_s=1):
        # re-entrant: the thread's second hold only adds what the first did not cover
        assert budget.in_use() == 130_000_000
    assert budget.in_use() == 0
    with budget.hold(12_000_000, wait_s=1):
        with budget.hold(12_000_000, wait_s=1):  # same thread: nothing more
            assert budget.in_use() == 12_000_000
        refused = []

        def other():
            try:
                with budget.hold(140_000_000, wait_s=0.05):
                    pass
            except PhotoBusy as exc:
                refused.append(str(exc))

        t = threading.Thread(target=other)
        t.start()
        t.join(30)
        assert refused and "try again" in refused[0]
    # a photo larger than the whole budget still runs, alone
    with budget.hold(500_000_000, wait_s=1):
        assert budget.in_use() == 150_000_000


def test_an_upload_holds_its_pixels_from_decoding_until_it_is_read(make_app):
    from webapp import security

    seen = []

    def reader(photo, rules, bonuses=()):
        seen.append(security.pixel_budget().in_use())
        return FakeReader()(photo, rules, bonuses)

    app = make_app(READER=reader)
    client = app.test_client()
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes(600, 500)), "k.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 200
    with app.app_context():
        assert seen == [600 * 500] and security.pixel_budget().in_use() == 0
