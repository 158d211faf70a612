"""The one place where a reading or a kingdom becomes the contract's scored JSON.

The CLI, the web app and the batch all call these two functions, so a photo scored from any of
them gives the same object (see ``../shared/CONTRACT.md``).
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from functools import lru_cache

import engine
from engine import messages
from kingdomino.i18n import N_

# The pieces a photo reading cannot see (the reader reads terrains and crowns only), by the
# Kingdom JSON field that holds them (the rule sets' cell_pieces and kingdom_pieces), in the
# words a person adds them by; fields sharing a word are said once
UNREAD_PIECES = {
    "giants": N_("giants"), "resource": N_("resources"), "court": N_("courtiers"),
    "building_crowns": N_("court buildings"), "fire_tokens": N_("fire tokens"),
    "caveman": N_("cavemen"), "warrior": N_("warriors"), "totems": N_("totems"),
    "building": N_("buildings"), "coins": N_("coins"), "knights": N_("knights"),
    "queen": N_("queen"),
}
# a template of the engine's kind (registered, so a stored English text is matched back to it)
NOT_READ = messages.N_("Not read from the photo: %(pieces)s. Add them by hand; the total counts "
                       "none of them until then.")


def pieces_not_read(rules: str | None):
    """The sentence saying which of this rule set's pieces a photo reading leaves out (a
    ``Message``: English, and in the reader's language through ``kingdomino.i18n.render``), or
    None for a rule set of terrains and crowns only."""
    try:
        kind = engine.get_rules(rules)
    except ValueError:
        return None
    words = []
    for field in (*kind.cell_pieces, *kind.kingdom_pieces):
        word = UNREAD_PIECES.get(field, field.replace("_", " "))
        if word not in words:
            words.append(word)
    return messages.Message(NOT_READ, pieces=tuple(words)) if words else None


def score_grid(obj_or_text, rules: str | None = None, bonuses=()) -> dict:
    """Score a kingdom given as Kingdom JSON (dict), or its text (JSON or text grid).

    ``rules`` overrides the kingdom's own ``"rules"`` field when given. Raises ``ValueError``
    (``engine.KingdomError`` / ``engine.RulesError``) with a message for a person.
    """
    if isinstance(obj_or_text, (str, bytes)):
        text = obj_or_text.decode("utf-8") if isinstance(obj_or_text, bytes) else obj_or_text
        kingdom = engine.load_kingdom(text)
    else:
        kingdom = engine.Kingdom.from_json(obj_or_text)
    result = kingdom.to_json()
    if rules:
        result["rules"] = rules
    result["score"] = engine.score(kingdom, rules=rules, bonuses=tuple(bonuses)).to_json()
    return result


@lru_cache(maxsize=1)
def _build_reader():
    import vision

    return vision.Reader()


def reader():
    """The process-wide reader: models are loaded once, on first use. It reads with the
    learned examples this thread asked for (``reading_with``)."""
    found = _build_reader()
    _use_examples(found)
    return found


# -- reading with what corrections taught (kingdomino.learning): each thread says which
# examples its next readings use; the reader's classifier is given them before it reads (the
# web app reads one photo at a time, under its READ_LOCK, so a reading never sees another
# thread's examples)

_learning = threading.local()
_given = weakref.WeakKeyDictionary()  # classifier -> the examples it was last given


@contextmanager
def reading_with(examples):
    """Within this block, this thread's readings use ``examples`` (a
    ``vision.read.learned.Examples``; None: read as the network alone does)."""
    before = getattr(_learning, "examples", None)
    _learning.examples = examples
    try:
        yield
    finally:
        _learning.examples = before


def examples_in_use():
    """The examples this thread's readings use now (``reading_with``), or None."""
    return getattr(_learning, "examples", None)


def _use_examples(found) -> None:
    """Give the reader's square classifier this thread's examples when they are not the ones
    it has (a reader without a classifier that learns, such as a test's, is left alone)."""
    classifier = getattr(found, "classifier", None)
    setter = getattr(classifier, "set_examples", None)
    if setter is None:
        return
    want = examples_in_use()
    try:
        if classifier in _given and _given[classifier] is want:
            return
    except TypeError:  # a classifier that cannot be weakly referenced: give them every time
        setter(_fitting(classifier, want))
        return
    setter(_fitting(classifier, want))
    _given[classifier] = want


_feature_sizes = weakref.WeakKeyDictionary()  # classifier -> the length of its features


def _fitting(classifier, examples):
    """``examples``, or None when they were learned with another square classifier (they
    say another network than this one's ``identity``, or their features have another length
    than this one's: the model was rebuilt since): a reading is then made as the network
    alone reads, never refused."""
    made_by, reads_with = getattr(examples, "network", None), getattr(classifier, "identity", None)
    if isinstance(made_by, str) and isinstance(reads_with, str) and made_by != reads_with:
        import logging

        logging.getLogger("kingdomino.learning").warning(
            "the store's examples were made by the square network %s, the reader reads with "
            "%s: reading without them", made_by, reads_with)
        return None
    width = getattr(getattr(examples, "features", None), "shape", (0, 0))
    if examples is None or len(width) != 2 or not hasattr(classifier, "features"):
        return examples
    try:
        size = _feature_sizes.get(classifier)
        if size is None:
            import numpy as np

            side = int(getattr(classifier, "input_size", 64))
            size = classifier.features(np.zeros((1, side, side, 3), np.uint8)).shape[1]
            _feature_sizes[classifier] = size
    except (RuntimeError, TypeError, ValueError, AttributeError):
        return examples  # the classifier says nothing of its features: let it judge
    if width[1] != size:
        import logging

        logging.getLogger("kingdomino.learning").warning(
            "the store's examples have %s features, the square classifier's %s: they were "
            "learned with another model; reading without them", width[1], size)
        return None
    return examples


def score_reading(reading, rules: str | None = None, bonuses=()) -> dict:
    """Score a ``vision.Reading``: the contract's JSON (without ``source``). Under a rule set
    with towns (Queendomino) the squares the reader saw as towns are read as ``town``."""
    if _has_towns(rules) and hasattr(reading, "with_towns"):
        reading = reading.with_towns()
    obj = reading.to_json()
    obj["rules"] = rules or "kingdomino"
    kingdom = engine.Kingdom.from_json({k: obj[k] for k in ("rules", "size", "cells")})
    obj["score"] = engine.score(kingdom, rules=rules, bonuses=tuple(bonuses)).to_json()
    # the top-level warnings are all of them: the reader's, then the score's (also kept there)
    warnings = list(obj.get("warnings") or [])
    warnings += [w for w in obj["score"].get("warnings", []) if w not in warnings]
    unread = pieces_not_read(obj["rules"])  # what the photo cannot show: said once, here
    if unread is not None and unread not in warnings:
        warnings.append(unread)
    obj["warnings"] = warnings
    ordered = {"rules": obj.pop("rules"), "size": obj.pop("size"), "cells": obj.pop("cells")}
    ordered.update(obj)
    return ordered


def _has_towns(rules: str | None) -> bool:
    try:
        return "town" in engine.get_rules(rules).terrains
    except ValueError:
        return False


def score_photo(path_or_bytes, rules: str | None = None, bonuses=(), size: int | None = None,
                corners=None) -> dict:
    """Decode a photo (path or bytes) and score it. Raises ``vision.PhotoError`` (a ValueError).

    ``corners``: the kingdom's outline given by hand (4 points in the photo's stored pixels, any
    order; see ``vision.find.by_hand``) instead of the detector's search; the result then has
    ``"outline": {"by": "hand", "corners": [...]}`` (the given points, ordered tl, tr, br, bl,
    stored pixels) next to ``corners`` (the same outline in the upright photo's pixels).
    """
    from vision.photo import scale as photo

    if corners is not None:
        return score_outline(path_or_bytes, corners, rules=rules, bonuses=bonuses, size=size)
    # a large JPEG is decoded at the size the reader needs (vision.photo), and read again
    # whole when its kingdom's squares come out too small there
    found = reader()
    _use_examples(found)
    reading, factor = photo.read_photo(path_or_bytes, lambda image: found.read(image, size=size),
                                       photo.square_side)
    return score_reading(photo.to_photo_pixels(reading, factor), rules=rules, bonuses=bonuses)


def score_outline(path_or_bytes, corners, rules: str | None = None, bonuses=(),
                  size: int | None = None) -> dict:
    """Read and score the kingdom inside an outline given by hand (see ``score_photo``)."""
    from vision.photo import files as photo_io
    from vision.find import by_hand as outline_hand

    data = photo_io.photo_bytes(path_or_bytes)
    found = reader()
    _use_examples(found)
    reading, upright = outline_hand.read_photo_outline(found, data, corners, size=size)
    obj = score_reading(reading, rules=rules, bonuses=bonuses)
    stored = [[round(float(x), 2), round(float(y), 2)]
              for x, y in _stored_order(corners, upright, reading.corners)]
    obj["outline"] = {"by": "hand", "corners": stored}
    return obj


def _stored_order(given, upright, used):
    """The given (stored-pixel) points in the order the reader used them (tl, tr, br, bl)."""
    import numpy as np

    given = np.asarray(given, float).reshape(4, 2)
    upright = np.asarray(upright, float).reshape(4, 2)
    order = [int(np.argmin(np.linalg.norm(upright - np.asarray(p, float), axis=1))) for p in used]
    return given[order]


def failure_message(exc: BaseException, details: str = "the details are in the log") -> str:
    """What to tell a person about a photo whose reading raised ``exc`` (one sentence).

    ``vision.PhotoError`` and the engine's errors are ValueErrors that carry their own; anything
    else is a fault of the reader and is named as one, ending with where ``details`` are (its
    traceback belongs in a log, never in the message).
    """
    if isinstance(exc, ValueError):
        return str(exc) or "the photo could not be read"
    if isinstance(exc, MemoryError):
        return "there was not enough memory to read this photo: send a smaller photo"
    if isinstance(exc, OSError):
        return f"the photo file cannot be read: {exc.strerror or exc}"
    return (f"the reader failed on this photo (an internal error, {type(exc).__name__}): "
            f"please report it with the photo ({details})")
