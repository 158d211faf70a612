"""A result read again (a new outline): the new machine reading replaces the old one, earlier
corrections stay in the record but apply neither to the result nor to a batch re-run."""
from kingdomino.store import Store


def kingdom(terrain):
    return {"rules": "kingdomino", "size": 5,
            "cells": [[{"terrain": terrain, "crowns": 0}] * 5 for _ in range(5)]}


def test_corrections_before_a_new_reading_are_set_aside(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    try:
        rid = store.add_reading(rules="kingdomino", machine=kingdom("field"), content_hash="h")
        other = store.add_reading(rules="kingdomino", machine=kingdom("lake"), content_hash="o")
        store.add_correction(rid, kingdom("forest"))
        store.add_correction(other, kingdom("swamp"))
        assert store.correction_of(rid) == kingdom("forest")
        assert store.replace_machine(rid, kingdom("mine")) == 1
        rec = store.get(rid)
        assert rec["machine"] == kingdom("mine") and rec["corrected"] is None
        assert store.correction_of(rid) is None
        assert [h["previous"] for h in store.rereadings(rid)] == [kingdom("field")]
        assert len(store.corrections(rid)) == 1  # kept in the record
        assert store.corrections(rid, live_only=True) == []  # but nothing to undo on the new one
        # another result's correction is untouched; a new correction applies again
        assert store.get(other)["corrected"] == kingdom("swamp")
        store.add_correction(rid, kingdom("grassland"))
        assert store.get(rid)["corrected"] == kingdom("grassland")
        assert store.correction_of(rid) == kingdom("grassland")
    finally:
        store.close()


def test_a_failed_reading_read_again_loses_its_error(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    try:
        rid = store.add_reading(rules="kingdomino", error="no kingdom found", photo=b"jpeg")
        assert store.replace_machine(rid, kingdom("field")) == 0
        rec = store.get(rid)
        assert rec["error"] is None and rec["machine"] == kingdom("field")
        assert store.rereadings(rid)[0]["previous_error"] == "no kingdom found"
    finally:
        store.close()
