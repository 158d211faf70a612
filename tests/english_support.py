"""What counts as English left in a translated text (issue 52): a run of three or more ASCII
words, once what stays ASCII in any language is set aside: file names and paths, image formats,
"Kingdomino", options, square names (r1c1), machine names (middle-kingdom, the rule sets'
aliases), quoted or code examples and comma-joined column lists (photo,player,table,round)."""
from __future__ import annotations

import re

ALLOWED = re.compile(
    r'"[^"\n]*"|`[^`\n]*`|\$\w+|[\w.-]+\.(?:png|jpe?g|zip|csv|txt|heic|sqlite3)\b|'
    r"\bkingdomino(?: batch| serve| score)?\b|"
    r"\b(?:JPEG|PNG|HEIC|AVIF|WebP|BMP|MB|GB|FIFO|iPhone|CSV|JSON|Lines|zip|Tab|Shift|Ctrl|"
    r"Delete|SQLite|Linux|macOS|Windows|traceback|socket|localhost|id)\b|"
    r"--[\w-]+|\br\d+c\d+\b|\S*/\S*|\b\w+(?:,\w+)+\b|\b[a-z]+(?:-[a-z]+)+\b")
WORD = r"[A-Za-z]+(?:['’][A-Za-z]+)*"
ENGLISH_RUN = re.compile(rf"{WORD}(?:[ ,]+{WORD}){{2,}}")


def _machine_names() -> re.Pattern:
    """The rule sets' names and aliases and the bonuses' names: what a person types (--rules
    origins), the same in every language."""
    import engine

    names = set()
    for name in engine.rule_names():
        names.update((name, *engine.get_rules(name).aliases, *engine.bonus_names(name)))
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                      + r")(?![\w-])")


MACHINE_NAMES = _machine_names()


def english_in(text: str) -> list[str]:
    """The runs of three or more ASCII words left in ``text`` (an English sentence's trace)."""
    return ENGLISH_RUN.findall(ALLOWED.sub(" ", MACHINE_NAMES.sub(" ", text)))


def assert_no_english(text: str, where: str) -> None:
    found = english_in(text)
    assert not found, f"{where}: English left: {found[:5]}"
