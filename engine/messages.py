"""The engine's sentences for people, as a template plus its values (so they can be translated).

A :class:`Message` *is* today's English text (a ``str``: JSON, CSV, comparisons and printing are
unchanged) and also carries ``msgid`` (the English template, a gettext message id such as
``"%(n)s square(s) not joined to the %(start)s: %(listed)s"``) and ``args`` (the values). The
pages and the CLI table translate it through the catalogs (``kingdomino.i18n.render``); the
engine itself stays pure Python and English.

Values named in :data:`TERRAIN_ARGS` are machine names of terrains (``field``, ``castle``) that a
renderer shows in the reader's words; a value that is itself a :class:`Message` (or a tuple of
them, joined with ``", "``) is rendered the same way.
"""
from __future__ import annotations

# the values that hold a terrain's machine name (translated as the game's word when rendered)
TERRAIN_ARGS = frozenset({"terrain", "start"})

# every template the engine and the reader use, English text -> itself (for renderers that only
# have the English text, e.g. a stored reading's JSON: they match it against these)
TEMPLATES: dict[str, str] = {}


def N_(template: str) -> str:
    """Marks a template for the catalogs (``pybabel extract -k N_``) and registers it."""
    TEMPLATES[template] = template
    return template


def _text(value) -> str:
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


class Message(str):
    """English text (the ``str`` itself) with the template and values it was made from."""

    def __new__(cls, msgid: str, count: str | None = None, **args):
        if msgid not in TEMPLATES:
            raise ValueError(f"unknown message template {msgid!r}; declare it with "
                             f"engine.messages.N_ before use")
        if count is not None and count not in args:
            raise ValueError(f"count names the value {count!r}, which is not among {sorted(args)}")
        text = msgid % {k: _text(v) for k, v in args.items()}
        self = super().__new__(cls, text)
        object.__setattr__(self, "_parts", (msgid, count, dict(args)))
        return self

    def __setattr__(self, name, value):
        raise AttributeError("a Message is frozen")

    def __reduce__(self):
        msgid, count, args = self._parts
        return (_rebuild, (msgid, count, args))

    @property
    def msgid(self) -> str:
        return self._parts[0]

    @property
    def count(self) -> str | None:
        """The name of the value that decides plural forms (None: no count in the sentence)."""
        return self._parts[1]

    @property
    def args(self) -> dict:
        return dict(self._parts[2])

    def describe(self) -> dict:
        """``{"msg": template, "args": {...}}`` with nested messages described the same way."""
        def one(v):
            if isinstance(v, Message):
                return v.describe()
            if isinstance(v, tuple):
                return [one(x) for x in v]
            return v
        return {"msg": self.msgid, "args": {k: one(v) for k, v in self.args.items()}}


def _rebuild(msgid, count, args):
    return Message(msgid, count, **args)


# a square as a warning names it for a person (engine.kingdom.square_name), counted from 1
SQUARE = N_("square (row %(row)s, col %(col)s)")

# why the photo reader puts a square in review (vision.review.review_reasons)
LOW_CONFIDENCE = N_("low confidence (%(confidence)s)")
NEAR_CASTLE = N_("next to the castle (a 3D castle may hide crowns), confidence %(confidence)s")
RICH = N_("%(n)s crowns (each one multiplies its region's points), confidence %(confidence)s")
OUTSIDE = N_("the square lies outside the photo")
GAP = N_("read as bare table between two tiles (glare can wash a tile out)")
BARE_UNLIKE = N_("read as bare table beside a tile, but it looks unlike the table around the "
                 "kingdom (glare can wash a tile out)")
LIKE_TABLE = N_("read as a tile, but it looks like the table around the kingdom")
GLARE = N_("under glare (it can wash a crown or a tile out), confidence %(confidence)s")
UNLIKE_TILES = N_("looks like no Kingdomino tile the reader learned from (table, another game, "
                  "a drawing?)")
TOWN_LIKE = N_("looks like a Queendomino town, not Kingdomino terrain")
TOWN_READ = N_("read as a Queendomino town (the reader knows towns from a few photos only)")
# what the photo reader says of a whole reading (vision.reader.Reader.read_board)
UNLIKE_WARNING = N_("%(n)s square(s) look like no Kingdomino tile: check them")
TOWNS_WARNING = N_("%(n)s square(s) look like Queendomino towns, not Kingdomino terrain: this "
                   "looks like a Queendomino kingdom (score it with the Queendomino rules)")
