"""The batch's look-ups of a photo already read (kingdomino.store): one-kingdom readings and
whole-table reads are told apart, by rules and bonuses, failed and re-scoring readings only
where each look-up takes them."""
from kingdomino.store import Store


def kingdom(number=None):
    obj = {"rules": "kingdomino", "size": 5,
           "cells": [[{"terrain": "field", "crowns": 0}] * 5 for _ in range(5)]}
    return obj if number is None else {**obj, "kingdom": number}


def test_single_and_table_lookups_find_only_their_own(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    try:
        assert store.find_batch_reading("h", "kingdomino", ["harmony"]) is None
        assert store.find_batch_photo("h", "kingdomino") is None
        assert store.find_batch_table("h", "kingdomino", ["harmony"]) is None
        assert store.find_batch_table_photo("h", "kingdomino") is None
        # not a batch's: never found
        store.add_reading(rules="kingdomino", machine=kingdom(), content_hash="h")
        assert store.find_batch_photo("h", "kingdomino") is None
        one = store.add_reading(rules="kingdomino", bonuses=["harmony"], machine=kingdom(),
                                content_hash="h", batch="b")
        failed = store.add_reading(rules="kingdomino", error="no kingdom", content_hash="h",
                                   batch="b")
        group, ids = store.add_table_readings(rules="kingdomino", bonuses=["harmony"],
                                              kingdoms=[kingdom(0), kingdom(1)],
                                              content_hash="h", batch="b")
        # the newest one-kingdom reading under these bonuses, failed or not
        assert store.find_batch_reading("h", "kingdomino", [])["id"] == failed
        assert store.find_batch_reading("h", "kingdomino", ["harmony"])["id"] == one
        assert store.find_batch_reading("h", "kingdomino", ["middle"]) is None
        # any bonuses, successful only: not the failure, never a table's kingdom
        assert store.find_batch_photo("h", "kingdomino")["id"] == one
        assert store.find_batch_photo("h", "laconia") is None
        assert [r["id"] for r in store.find_batch_table("h", "kingdomino", ["harmony"])] == ids
        assert store.find_batch_table("h", "kingdomino", []) is None
        assert [r["id"] for r in store.find_batch_table_photo("h", "kingdomino")] == ids
        # a re-scoring for other bonuses is found by bonuses, never as the photo's own reading
        store.add_reading(rules="kingdomino", bonuses=["middle"], machine=kingdom(),
                          content_hash="h", batch="b", derived_from=one)
        store.add_table_readings(rules="kingdomino", bonuses=["middle"],
                                 kingdoms=[kingdom(0), kingdom(1)], content_hash="h",
                                 batch="b", derived_from=ids)
        assert store.find_batch_reading("h", "kingdomino", ["middle"])["derived_from"] == one
        assert store.find_batch_photo("h", "kingdomino")["id"] == one
        assert len(store.find_batch_table("h", "kingdomino", ["middle"])) == 2
        assert [r["id"] for r in store.find_batch_table_photo("h", "kingdomino")] == ids
        # a failed table read is found by bonuses, not as the photo's successful read
        _, [bad] = store.add_table_readings(rules="kingdomino", bonuses=[], error="no kingdom",
                                            content_hash="h", batch="b")
        assert [r["id"] for r in store.find_batch_table("h", "kingdomino", [])] == [bad]
        assert [r["id"] for r in store.find_batch_table_photo("h", "kingdomino")] == ids
    finally:
        store.close()


def test_every_field_given_is_stored(tmp_path):
    """One insert serves a single reading and a table's kingdoms: each field lands in its
    column (bonuses sorted, the machine reading as given, a table's kingdoms named and
    numbered) and the store's photo is kept."""
    store = Store(tmp_path / "s.sqlite3")
    try:
        rid = store.add_reading(rules="laconia", bonuses=["middle", "harmony"],
                                machine=kingdom(), source="a.jpg", content_hash="h",
                                player="Ann", claimed=42, batch="b", photo=b"jpeg",
                                derived_from="x")
        rec = store.get(rid)
        assert {k: rec[k] for k in ("id", "rules", "bonuses", "machine", "error", "source",
                                    "content_hash", "player", "claimed", "batch",
                                    "derived_from", "has_photo", "kingdom", "table_read")} == {
            "id": rid, "rules": "laconia", "bonuses": ["harmony", "middle"],
            "machine": kingdom(), "error": None, "source": "a.jpg", "content_hash": "h",
            "player": "Ann", "claimed": 42, "batch": "b", "derived_from": "x",
            "has_photo": True, "kingdom": None, "table_read": None}
        assert store.photo(rid) == b"jpeg" and isinstance(rec["created"], float)
        group, ids = store.add_table_readings(rules="kingdomino", bonuses=["harmony"],
                                              kingdoms=[kingdom(0), kingdom(1)],
                                              source="t.jpg", content_hash="t", batch="b",
                                              photo=b"png", derived_from=[None, rid])
        recs = [store.get(i) for i in ids]
        assert [(r["source"], r["kingdom"], r["table_read"], r["derived_from"]) for r in recs] \
            == [("t.jpg #1", 0, group, None), ("t.jpg #2", 1, group, rid)]  # names from 1
        assert all(r["machine"]["kingdom"] == r["kingdom"] and r["bonuses"] == ["harmony"]
                   and r["error"] is None and r["player"] is None and r["has_photo"]
                   for r in recs)
        _, [bad] = store.add_table_readings(rules="kingdomino", error="no kingdom",
                                            source="e.jpg", content_hash="e")
        rec = store.get(bad)
        assert (rec["source"], rec["error"], rec["machine"], rec["kingdom"]) == (
            "e.jpg", "no kingdom", None, None)
        assert rec["table_read"] is not None and not rec["has_photo"]
    finally:
        store.close()
