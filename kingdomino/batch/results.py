"""The batch's results: rows built from the store (a person's correction wins), the results
CSV, JSON Lines and the standings (see ``docs/batch.md``)."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from kingdomino import csvsafe
from kingdomino import standings as standings_mod
from kingdomino.store import Store

if TYPE_CHECKING:
    from kingdomino.batch.pool import Outcome

def _score_of(store: Store, reading: dict, rules: str, bonuses):
    """(scored JSON, review squares, corrected?, error) of a stored reading, correction first.

    Only corrections of this reading count (and of the reading it re-scores for other bonuses):
    another upload of the same bytes is another person's reading.
    """
    from kingdomino import service

    corrected = reading.get("corrected")
    if corrected is None:
        corrected = store.correction_of(reading["id"])
    if corrected:
        try:
            return service.score_grid(corrected, rules=rules, bonuses=bonuses), [], True, None
        except ValueError as exc:
            return None, [], True, f"the corrected kingdom cannot be scored: {exc}"
    if reading.get("error"):
        return None, [], False, reading["error"]
    machine = reading.get("machine") or {}
    if "score" not in machine:
        try:
            machine = service.score_grid({k: machine[k] for k in ("rules", "size", "cells")
                                          if k in machine}, rules=rules, bonuses=bonuses)
        except (ValueError, KeyError) as exc:
            return None, [], False, f"the stored reading cannot be scored: {exc}"
    return machine, list(machine.get("review") or []), False, None


def match_manifest(manifest: list[dict], outcomes: list[Outcome]) -> dict[int, dict]:
    """Manifest row index -> outcome index (or -1 when the photo is not among the inputs).

    A manifest photo matches an input whose source is the same, or ends with ``/photo`` or
    ``!photo`` (zip member). Raises ``ManifestError`` when it matches several inputs.
    """
    result: dict[int, int] = {}
    for m, row in enumerate(manifest):
        photo = row["photo"].replace("\\", "/")
        while photo.startswith("./"):
            photo = photo[2:]
        hits = [i for i, o in enumerate(outcomes)
                if o.item.source.replace("\\", "/") in (photo, row["photo"])
                or o.item.source.replace("\\", "/").endswith(("/" + photo, "!" + photo))]
        if len(hits) > 1:
            names = ", ".join(outcomes[i].item.source for i in hits[:3])
            raise standings_mod.ManifestError(
                f"manifest photo {row['photo']!r} matches several photos ({names}); "
                "write more of its path in the manifest")
        result[m] = hits[0] if hits else -1
    return result


def build_rows(store: Store, outcomes: list[Outcome], *, rules: str, bonuses=(),
               manifest: list[dict] | None = None) -> list[dict]:
    """One row per photo (and per manifest photo not found), from the store; look-first order."""
    rows = []
    for o in outcomes:
        row = {"source": o.item.source, "total": None, "status": "", "player": "", "table": "",
               "round": "", "tiebreak": {}, "review": [], "corrected": False,
               "reading_id": o.reading_id or "", "content_hash": o.content_hash or "",
               "result": None}
        if o.error:
            row["status"] = f"error: {o.error}"
        elif o.reading_id is None:
            row["status"] = "error: not read (the batch was stopped)"
        else:
            reading = store.get(o.reading_id)
            scored, review, corrected, error = _score_of(store, reading, rules, bonuses)
            row["corrected"] = corrected
            if error:
                row["status"] = f"error: {error}"
            else:
                score = scored["score"]
                row.update(total=score.get("total"), tiebreak=dict(score.get("tiebreak") or {}),
                           review=review, result=scored,
                           status="review" if review else "ok")
        rows.append(row)
    if manifest:
        for m, i in match_manifest(manifest, outcomes).items():
            info = manifest[m]
            if i < 0:
                rows.append({"source": info["photo"], "total": None, "tiebreak": {},
                             "status": "error: listed in the manifest but not among the photos "
                                       "given; check the name or add the photo",
                             "review": [], "corrected": False, "reading_id": "",
                             "content_hash": "", "result": None, "_manifest": m})
                row = rows[-1]
            else:
                row = rows[i]
            row.update(player=info["player"], table=info["table"], round=info["round"])
    order = {"error": 0, "review": 1, "ok": 2}
    indexed = sorted(enumerate(rows), key=lambda p: (order[p[1]["status"].split(":")[0]], p[0]))
    return [r for _, r in indexed]


def tiebreak_columns(rows) -> list[str]:
    cols: list[str] = []
    for r in rows:
        for k in r["tiebreak"]:
            if k not in cols:
                cols.append(k)
    return cols


BASE_COLUMNS = ["source", "total", "status", "player", "table", "round"]
TAIL_COLUMNS = ["review", "corrected", "reading_id", "link", "rules", "bonuses", "content_hash"]


def review_for_people(review) -> str:
    """The review squares as ``[[row, column], ...]`` counted from 1, as people read (the JSON
    keeps the contract's 0-based indexes)."""
    if not review:
        return ""
    return json.dumps([[r + 1, c + 1] for r, c, *_ in review], separators=(",", ":"))


def rows_to_csv(rows, *, rules: str, bonuses=()) -> str:
    """The results table as CSV; every cell is safe to open in a spreadsheet."""
    tb = tiebreak_columns(rows)
    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\n")
    w.writerow(BASE_COLUMNS + tb + TAIL_COLUMNS)
    for r in rows:
        w.writerow([
            r["source"], "" if r["total"] is None else r["total"], r["status"], r["player"],
            r["table"], r["round"], *(r["tiebreak"].get(k, "") for k in tb),
            review_for_people(r["review"]),
            "yes" if r["corrected"] else "", r["reading_id"],
            f"/r/{r['reading_id']}" if r["reading_id"] else "", rules, " ".join(sorted(bonuses)),
            r["content_hash"],
        ])
    return buf.getvalue()


def row_json(row: dict) -> dict:
    """A row as one JSON Lines object: like ``kingdomino score --json`` plus batch fields."""
    extra = {"status": row["status"], "player": row["player"], "table": row["table"],
             "round": row["round"], "reading_id": row["reading_id"] or None,
             "corrected": row["corrected"]}
    if row["result"] is None:
        return {"source": row["source"], "error": row["status"].partition(": ")[2], **extra}
    return {"source": row["source"], **row["result"], **extra}


def standings_for(rows) -> list:
    entries = [
        standings_mod.Entry(player=r["player"], table=r["table"], round=r["round"],
                            source=r["source"], total=r["total"], tiebreak=r["tiebreak"],
                            status=r["status"].split(":")[0])
        for r in rows if r["player"]
    ]
    return standings_mod.build(entries)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def standings_path(out: Path) -> Path:
    return out.with_name(out.stem + "-standings.csv")


