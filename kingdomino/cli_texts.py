"""The command line's refusals as templates of the catalogs (issue 52): ``kingdomino.cli`` raises
and prints them in English, as its ``--json`` lines keep them, and says them in the language
LANG / LC_MESSAGES name through ``kingdomino.i18n.render`` (``kingdomino.cli._said``), which
matches an English sentence back to its template here. ``tests/test_cli_languages.py`` makes the
CLI refuse and holds each line against the catalogs."""
from __future__ import annotations

from engine.messages import N_

# --rules, --bonus (did you mean ...: the close names; the rule sets with their aliases)
UNKNOWN_RULES = N_("unknown rule set %(name)s; the rule sets: %(choices)s")
UNKNOWN_RULES_CLOSE = N_("unknown rule set %(name)s; did you mean %(names)s? the rule sets: "
                         "%(choices)s")
RULES_ALIASES = N_("%(name)s (also %(aliases)s)")
UNKNOWN_BONUS = N_("unknown bonus %(name)s for rules %(rules)s; choose from: %(choices)s")
UNKNOWN_BONUS_CLOSE = N_("unknown bonus %(name)s for rules %(rules)s; did you mean %(names)s? "
                         "choose from: %(choices)s")
NO_BONUS = N_("(this rule set has none)")
# --corners, --players, --all, --store
CORNERS_ONE_PHOTO = N_("--corners gives the outline of one photo, but %(n)s photos were given: "
                       "score each photo with its own --corners")
CORNERS_OR_ALL = N_("--corners gives one kingdom's outline and --all reads every kingdom: use one "
                    "or the other")
CORNERS_WHY = N_("--corners: %(why)s")
PLAYERS_WITHOUT_ALL = N_("--players names the kingdoms of a whole-table photo: add --all")
PLAYERS_WHY = N_("--players: %(why)s")
STORE_UNREADABLE = N_("cannot open the store %(path)s: %(why)s; give another file with --store")
# score-grid
NO_SUCH_FILE = N_("no such file: %(name)s; check the path")
GRID_FOLDER = N_("%(name)s is a folder: give a Kingdom JSON or text grid file")
FILE_UNREADABLE = N_("cannot read the file: %(why)s")
NOT_TEXT = N_("not a text file: give Kingdom JSON or the text grid format")
# learned
NO_LEARNED = N_("no learned square with id %(id)s in %(path)s: `kingdomino learned` lists them")
# --players (kingdomino.table)
PLAYERS_COUNT = N_("%(n)s players named but %(kingdoms)s kingdoms found: names go to kingdoms in "
                   "numbering order (kingdom 1 is the leftmost); check the numbers on the photo")
PLAYERS_EMPTY = N_("an empty name in the players %(shown)s: give one name per kingdom, separated "
                   "by commas, e.g. \"Ann,Bob,Cat\"")
PLAYERS_TWICE = N_("a name is given twice in the players %(shown)s: give each player once")
PLAYERS_LONG = N_("a player's name is longer than 80 characters: shorten it")
