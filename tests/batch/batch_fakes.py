"""A fake photo reader for the batch tests (module level, so worker processes can use it).

A fake "photo" is PNG magic bytes followed by ``KINGDOM:`` and JSON: either a ready ``score``
(tests of the batch machinery) or a ``kingdom`` that the real engine scores. Environment:
``KD_FAKE_CALLS`` file gets one line per call; ``KD_FAKE_STOP_AFTER=N`` raises KeyboardInterrupt
on call N+1; ``KD_FAKE_KILL_AFTER=N`` SIGKILLs the process on call N+1; ``KD_FAKE_PIDS`` file
gets the process id of each call; ``KD_FAKE_SLOW=S`` makes each call take S seconds. A payload
``{"raise": "TypeError"}`` makes the reader fail the way a bug in it would.

``fake_score_all`` is the fake whole-table reader (``kingdomino batch --all``): a payload
``{"kingdoms": [payload, ...]}`` is a table photo whose kingdoms are numbered in list order (an
entry may add ``"cut": true`` and ``"corners"``), ``{"kingdoms": []}`` a photo with no kingdom,
and any other payload a photo of that one kingdom. ``fake_score`` reads the first kingdom of a
table photo (the most prominent).
"""
from __future__ import annotations

import json
import os
import signal
import time

PNG = b"\x89PNG\r\n\x1a\n"
MARK = b"KINGDOM:"


class FakePhotoError(ValueError):
    pass


def _tiny_png() -> bytes:
    import cv2
    import numpy as np

    ok, buf = cv2.imencode(".png", np.full((12, 16, 3), (40, 160, 220), np.uint8))
    assert ok
    return buf.tobytes()


TINY_PNG = _tiny_png()


def photo(payload: dict, salt: str = "") -> bytes:
    """A real (decodable) tiny PNG with the fake reader's payload after its end."""
    return TINY_PNG + salt.encode() + MARK + json.dumps(payload).encode()


def scored(total: int, largest: int = 1, crowns: int = 0, review=()) -> bytes:
    return photo({"score": {"total": total, "tiebreak": {"largest_region": largest,
                                                          "crowns": crowns}},
                  "review": [list(r) for r in review]})


def _count() -> int:
    path = os.environ.get("KD_FAKE_CALLS")
    if not path:
        return 0
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"x\n")
    finally:
        os.close(fd)
    with open(path, "rb") as fh:
        return fh.read().count(b"\n")


def calls(path) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n")
    except FileNotFoundError:
        return 0


def _note_pid() -> None:
    path = os.environ.get("KD_FAKE_PIDS")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd)


def pids(path) -> set[int]:
    try:
        with open(path) as fh:
            return {int(line) for line in fh if line.strip()}
    except FileNotFoundError:
        return set()


def _payload(data: bytes) -> dict:
    """What every fake read does first: count the call, honour the environment, parse."""
    _note_pid()
    n = _count()
    slow = float(os.environ.get("KD_FAKE_SLOW") or 0)
    if slow:
        time.sleep(slow)  # a slow reader (the workload), not a wait in a test
    stop = os.environ.get("KD_FAKE_STOP_AFTER")
    if stop and n > int(stop):
        raise KeyboardInterrupt
    kill = os.environ.get("KD_FAKE_KILL_AFTER")
    if kill and n > int(kill):
        os.kill(os.getpid(), signal.SIGKILL)
    at = data.find(MARK)
    if at < 0:
        raise FakePhotoError("no kingdom found in this photo: photograph the whole kingdom from above")
    obj = json.loads(data[at + len(MARK):])
    if obj.get("crash"):
        os._exit(3)
    if obj.get("raise") == "TypeError":
        raise TypeError("Can't parse 'ksize'. Sequence item with index 0 has a wrong type")
    return obj


def _one(obj: dict, rules, bonuses) -> dict:
    if "kingdom" in obj:
        from kingdomino import service

        result = service.score_grid(obj["kingdom"], rules=rules, bonuses=bonuses)
        result["review"] = obj.get("review", [])
        return result
    cells = [[{"terrain": "castle" if (r, c) == (2, 2) else "empty", "crowns": 0,
               "confidence": 0.9} for c in range(5)] for r in range(5)]
    return {"rules": rules, "size": 5, "cells": cells, "review": obj.get("review", []),
            "score": obj["score"]}


def fake_score(data: bytes, rules, bonuses) -> dict:
    obj = _payload(data)
    if obj.get("kingdoms"):  # a table photo read one kingdom per photo: the first
        obj = obj["kingdoms"][0]
    return _one(obj, rules, bonuses)


def corners_of(k: int) -> list[list[float]]:
    """The outline the fake table reader gives kingdom ``k`` when its payload names none."""
    x = 100.0 + 900.0 * k
    return [[x, 100.0], [x + 800.0, 100.0], [x + 800.0, 900.0], [x, 900.0]]


CUT_WARNING = "this kingdom is cut by the photo's edge: it is not scored as complete"


def table(*entries: dict, salt: str = "") -> bytes:
    """A fake table photo: each entry is one kingdom's payload, numbered in this order."""
    return photo({"kingdoms": list(entries)}, salt)


def fake_score_all(data: bytes, rules, bonuses) -> dict:
    obj = _payload(data)
    entries = obj["kingdoms"] if "kingdoms" in obj else [obj]
    if not entries:
        raise FakePhotoError("no kingdom found in this photo: take it from above with every "
                             "kingdom whole in view")
    kingdoms = []
    for k, entry in enumerate(entries):
        one = _one(entry, rules, bonuses)
        one["kingdom"] = k
        one["corners"] = entry.get("corners") or corners_of(k)
        one["cut"] = bool(entry.get("cut"))
        one["warnings"] = [CUT_WARNING] if one["cut"] else []
        kingdoms.append(one)
    return {"kingdoms": kingdoms}
