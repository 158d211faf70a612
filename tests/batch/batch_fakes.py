"""A fake photo reader for the batch tests (module level, so worker processes can use it).

A fake "photo" is PNG magic bytes followed by ``KINGDOM:`` and JSON: either a ready ``score``
(tests of the batch machinery) or a ``kingdom`` that the real engine scores. Environment:
``KD_FAKE_CALLS`` file gets one line per call; ``KD_FAKE_STOP_AFTER=N`` raises KeyboardInterrupt
on call N+1; ``KD_FAKE_KILL_AFTER=N`` SIGKILLs the process on call N+1; ``KD_FAKE_PIDS`` file
gets the process id of each call; ``KD_FAKE_SLOW=S`` makes each call take S seconds. A payload
``{"raise": "TypeError"}`` makes the reader fail the way a bug in it would.
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


def fake_score(data: bytes, rules, bonuses) -> dict:
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
    if "kingdom" in obj:
        from kingdomino import service

        result = service.score_grid(obj["kingdom"], rules=rules, bonuses=bonuses)
        result["review"] = obj.get("review", [])
        return result
    cells = [[{"terrain": "castle" if (r, c) == (2, 2) else "empty", "crowns": 0,
               "confidence": 0.9} for c in range(5)] for r in range(5)]
    return {"rules": rules, "size": 5, "cells": cells, "review": obj.get("review", []),
            "score": obj["score"]}
