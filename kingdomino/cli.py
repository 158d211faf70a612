"""``kingdomino`` command line (see ``../shared/CONTRACT.md``; extend, never break).

Exit codes: 0 all good; 1 some input could not be read or scored (the others still are): a
photo or grid file that is missing, a folder, not a kingdom, on both ``score`` and
``score-grid``; 2 usage errors (unknown option, unknown rule set or bonus, a bad ``--corners``);
141 the output was closed early (``kingdomino score ... | head``: the reader of the pipe is
gone, so the rest is dropped quietly, as a shell reports a command stopped by SIGPIPE); 130 ^C.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys

EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2
EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell shows for a command whose reader went away


class UsageError(Exception):
    """A mistake in how the command was called: exit code 2."""


def N_(message: str) -> str:
    """Marks a message for the catalogs (``webapp/translations``) without translating it."""
    return message


# argparse's own words ("usage:", its section titles, its errors), which it looks up with its
# module's gettext: marked here so the catalogs hold them (``_argparse_speaks`` says them)
ARGPARSE_WORDS = (
    N_("usage: "), N_("positional arguments"), N_("options"),
    N_("show this help message and exit"), N_("%(prog)s: error: %(message)s\n"),
    N_("the following arguments are required: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"), N_("unrecognized arguments: %s"),
    N_("argument %(argument_name)s: %(message)s"), N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"), N_("expected at least one argument"),
    N_("expected at most one argument"), N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"), N_("one of the arguments %s is required"),
    N_("ignored explicit argument %r"),
)


# what taught a learned square (``kingdomino learned`` lists it in the CLI's language)
LEARNED_KINDS = (N_("correction"), N_("confirmation"))


def _language():
    """The catalog of the CLI's language (LANGUAGE, LC_ALL, LC_MESSAGES, LANG), or None for
    English (the messages themselves: nothing to load)."""
    from kingdomino import i18n

    locale = i18n.locale_from_environment()
    return None if locale == i18n.DEFAULT else i18n.translations(locale)


def _identity(message: str) -> str:
    return message


def _words():
    """``(gettext, say)`` of the CLI's language: its messages, and the engine's, the reader's
    and the CLI's own English sentences said in it (``kingdomino.i18n.render``)."""
    from kingdomino import i18n

    tr = _language()
    if tr is None:
        return _identity, str
    return tr.gettext, lambda text: str(i18n.render(str(text), tr))


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose section headings ("options:") end with the colon of the CLI's
    language (argparse writes an ASCII one: Chinese writes "選項：")."""

    heading = "%(title)s:"

    def format_help(self) -> str:
        text = super().format_help()
        if self.heading == _Parser.heading:
            return text
        return re.sub(r"(?m)^(\S.*):$", lambda m: self.heading % {"title": m.group(1)}, text)


@contextlib.contextmanager
def _argparse_speaks(tr):
    """While the parser is built and used, argparse says its own words through ``tr`` (it looks
    them up with its module's ``_`` and ``ngettext``); ``tr`` None: English, as they are."""
    if tr is None:
        yield
        return
    saved = argparse._, argparse.ngettext
    argparse._, argparse.ngettext = tr.gettext, tr.ngettext
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


def _rules_help(_=_identity) -> str:
    import engine

    lines = [_("rule sets and their bonuses:")]
    for name in engine.rule_names():
        bonuses = ", ".join(engine.bonus_names(name)) or _("(none)")
        lines.append(f"  {name}: {bonuses}")
    return "\n".join(lines)


def _name_key(text: str) -> str:
    """A rule set's or bonus's name as typed, compared without case, spaces or underscores:
    "Age of Giants" and "age_of_giants" are both age-of-giants."""
    return "-".join(str(text).strip().lower().replace("_", " ").replace("-", " ").split())


def _known_name(given: str, names: dict[str, str]):
    """``names``: each accepted spelling (canonical names and aliases) -> its canonical name.
    Returns the canonical name ``given`` stands for, or None; close spellings are not guessed."""
    keys: dict[str, set] = {}
    for spelling, canonical in names.items():
        keys.setdefault(_name_key(spelling), set()).add(canonical)
    found = keys.get(_name_key(given), set())
    return next(iter(found)) if len(found) == 1 else None


def _did_you_mean(given: str, names: dict[str, str]) -> str:
    """ "did you mean X? " for the spellings of ``names`` (spelling -> canonical name) close
    to ``given``, each as its canonical name; "" when none is close."""
    import difflib

    close = difflib.get_close_matches(_name_key(given), list(names), n=3, cutoff=0.6)
    said = list(dict.fromkeys(names[c] for c in close))
    return f"did you mean {' or '.join(said)}? " if said else ""


def _rules_choices() -> str:
    """Every rule set with its aliases, as the error for an unknown one lists them."""
    import engine

    out = []
    for name in engine.rule_names():
        aliases = engine.get_rules(name).aliases
        out.append(f"{name} (also {', '.join(aliases)})" if aliases else name)
    return "; ".join(out)


def _check_rules(args, bonuses: bool = True) -> None:
    import engine

    spellings = {}
    for name in engine.rule_names():
        for spelling in (name, *engine.get_rules(name).aliases):
            spellings[spelling] = name
    canonical = _known_name(args.rules, spellings)
    if canonical is None:
        raise UsageError(f"unknown rule set {args.rules!r}; {_did_you_mean(args.rules, spellings)}"
                         f"the rule sets: {_rules_choices()}")
    args.rules = canonical  # aliases (neolithic, ...) and "Age of Giants" -> age-of-giants
    if bonuses:
        _check_bonuses(args)


def _check_bonuses(args) -> None:
    import engine

    allowed = engine.bonus_names(args.rules)
    checked = []
    for bonus in args.bonus:
        canonical = _known_name(bonus, {name: name for name in allowed})
        if canonical is None:
            raise UsageError(
                f"unknown bonus {bonus!r} for rules {args.rules!r}; "
                f"{_did_you_mean(bonus, {name: name for name in allowed})}"
                f"choose from: {', '.join(allowed) or '(this rule set has none)'}"
            )
        checked.append(canonical)
    args.bonus = checked


def _emit(obj: dict, as_json: bool) -> None:
    from kingdomino.report import format_result

    if as_json:
        print(json.dumps(obj), flush=True)
    else:
        print(format_result(obj), flush=True)


def _said(message, where: str = "") -> str:
    """``kingdomino: error: MESSAGE`` in the language LANG / LC_MESSAGES name (the message
    itself through the catalogs where it is one of the engine's sentences, else as it is)."""
    from kingdomino import i18n

    locale = i18n.locale_from_environment()
    if locale == i18n.DEFAULT:
        return f"kingdomino: error: {where}{message}"
    tr = i18n.translations(locale)
    return "kingdomino: " + tr.gettext(i18n.N_("error: %(message)s")) % {
        "message": where + str(i18n.render(str(message), tr))}  # a UsageError too


def _error_line(source, message: str, as_json: bool) -> None:
    if as_json:
        obj = {"error": message} if source is None else {"source": source, "error": message}
        print(json.dumps(obj), flush=True)
    else:
        # the path once: a message that names it already ("no such photo file: X") needs no
        # "X: " before it
        where = f"{source}: " if source is not None and str(source) not in message else ""
        print(_said(message, where), file=sys.stderr, flush=True)


def _photo_failed(path, exc: BaseException, args) -> None:
    """One photo of ``kingdomino score`` could not be read: its traceback to the debug log (and
    to stderr with ``--verbose``), its error line to the output (see ``_error_line``)."""
    import logging
    import traceback

    from kingdomino import service

    logging.getLogger("kingdomino.score").debug("reading %s failed", path, exc_info=exc)
    if getattr(args, "verbose", False):
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    _error_line(path, service.failure_message(
        exc, "run again with --verbose to see the details"), args.json)


def _check_corners(args):
    """The ``--corners`` outline as 4 points, or None; ``UsageError`` for bad text or for
    several photos (one outline belongs to one photo)."""
    text = getattr(args, "corners", None)
    if text is None:
        return None
    if len(args.photos) != 1:
        raise UsageError(f"--corners gives the outline of one photo, but {len(args.photos)} "
                         "photos were given: score each photo with its own --corners")
    from vision.find.by_hand import OutlineError, parse_corners

    _corner_numbers(text)
    try:
        return parse_corners(text)
    except OutlineError as exc:
        raise UsageError(f"--corners: {exc}") from None


def _corner_numbers(text: str) -> None:
    """``UsageError`` naming what in a ``--corners`` text is not a number (before the count:
    "abc" is not one number short of eight, it is not a number)."""
    parts = [p for p in re.split(r"[,\s;]+", text.strip()) if p]
    bad = []
    for part in parts:
        try:
            float(part)
        except ValueError:
            bad.append(part[:20])
    if bad:
        named = ", ".join(repr(b) for b in bad[:3]) + (" ..." if len(bad) > 3 else "")
        raise UsageError(f"--corners: {named} {'is' if len(bad) == 1 else 'are'} not "
                         f"{'a number' if len(bad) == 1 else 'numbers'}: give eight numbers "
                         "X1,Y1,X2,Y2,X3,Y3,X4,Y4, the kingdom's four outer corners in the "
                         "photo's pixels, e.g. 120,80,900,95,880,860,110,840")


def _open_store(path):
    """The ``--store`` of ``score`` and ``learned``; ``UsageError`` when it cannot be opened."""
    from kingdomino.store import Store

    try:
        return Store(path)
    except Exception as exc:  # OSError, sqlite3.DatabaseError (not a store)
        raise UsageError(f"cannot open the store {path or ''}: {exc}; give another file with "
                         "--store") from None


def cmd_score(args) -> int:
    from kingdomino import learning, service

    _check_rules(args)
    # --store: each photo read with what that store's corrections taught, and stored there
    store = _open_store(args.store) if getattr(args, "store", None) else None
    learn = store is not None and not getattr(args, "no_learning", False)
    try:
        if getattr(args, "all", False):  # whole-table photos: kingdomino.table
            with service.reading_with(learning.reading_examples(store, learn)):
                return cmd_score_all(args)
        return _score_photos(args, store, learn)
    finally:
        if store is not None:
            store.close()


def _score_photos(args, store, learn: bool) -> int:
    from kingdomino import learning, service

    if getattr(args, "players", None) is not None:
        raise UsageError("--players names the kingdoms of a whole-table photo: add --all")
    corners = _check_corners(args)
    status = EXIT_OK
    for path in args.photos:
        try:
            photo = path
            if store is not None:  # read once: the same bytes are read and stored
                from vision.photo import files as photo_io

                photo = photo_io.photo_bytes(path)
            # the store's examples as they are now: a correction made meanwhile counts
            with service.reading_with(learning.reading_examples(store, learn)):
                obj = service.score_photo(photo, rules=args.rules, bonuses=args.bonus,
                                          size=args.size, corners=corners)
        except Exception as exc:  # one photo's failure never stops the others (contract)
            _photo_failed(path, exc, args)
            status = EXIT_INPUT
            continue
        out = {"source": path, **obj}
        if store is not None:
            out["id"] = learning.keep_reading(store, photo, obj, path, args.rules, args.bonus)
        _emit(out, args.json)
        if store is not None and not args.json:
            _, _say = _words()
            print(_("stored as %(id)s: correct it at /r/%(id)s of `kingdomino serve --store "
                    "%(store)s`") % {"id": out["id"], "store": store.path}, flush=True)
    return status


def _format_standings(rows: list[dict], rules: str | None = None) -> str:
    """The game's standings (``kingdomino.table.standings``) as the lines ``score --all`` prints,
    in the CLI's language (the tie-break in the words of ``rules``' rulebook)."""
    from kingdomino import i18n

    tr = _language()
    _ = tr.gettext if tr is not None else _identity
    out = [_("standings:")]
    for row in rows:
        # kingdoms counted from 1 for people (the JSON's "kingdom" counts from 0)
        kingdom = _("(%(items)s)") % {"items": _("kingdom %(n)s") % {"n": row["kingdom"] + 1}}
        line = f"  {row['place']}. {row['player']} {kingdom}  {row['total']}"
        if row["tiebreak"]:
            line += "  [" + _("tie-break: %(order)s") % {
                "order": i18n.tiebreak_order(tr, row["tiebreak"], rules)} + "]"
        notes = ([_("shared place")] if row["shared"] else []) + (
            [_("kingdom cut by the photo's edge: incomplete")] if row["cut"] else [])
        if notes:
            semicolon = tr.pgettext("list", "; ") if tr is not None else "; "
            opening, closing = _("(%(items)s)").split("%(items)s")
            line += "  " + opening + semicolon.join(notes) + closing
        out.append(line)
    return "\n".join(out)


def cmd_score_all(args) -> int:
    """``kingdomino score PHOTO... --all``: every kingdom of each photo (``kingdomino.table``).

    JSON: one line per kingdom (the contract's object plus ``kingdom``, ``corners``, ``cut``);
    a photo with no kingdom gives one ``{"source", "error"}`` line and exit code 1. Table: each
    kingdom numbered and, with ``--players``, the game's standings per photo."""
    from kingdomino import table
    from kingdomino.report import format_result

    if getattr(args, "corners", None) is not None:
        raise UsageError("--corners gives one kingdom's outline and --all reads every kingdom: "
                         "use one or the other")
    try:
        players = table.parse_players(getattr(args, "players", None))
    except table.PlayersError as exc:
        raise UsageError(f"--players: {exc}") from None
    status = EXIT_OK
    for path in args.photos:
        try:
            objs = table.score_table(path, rules=args.rules, bonuses=args.bonus, size=args.size)
        except Exception as exc:  # one photo's failure never stops the others (contract)
            _photo_failed(path, exc, args)
            status = EXIT_INPUT
            continue
        if args.json:
            for obj in objs:
                print(json.dumps({"source": path, **obj}), flush=True)
            continue
        _, say = _words()
        print(_("%(path)s: 1 kingdom (numbered by centre, left to right)") % {"path": path}
              if len(objs) == 1 else
              _("%(path)s: %(n)s kingdoms (numbered by centre, left to right)")
              % {"path": path, "n": len(objs)}, flush=True)
        for obj in objs:
            k = obj["kingdom"]
            name = " " + _("(%(items)s)") % {"items": players[k]} if k < len(players) else ""
            title = _("kingdom %(n)s") % {"n": k + 1}
            print(format_result({**obj, "source": f"{title}{name}"}), flush=True)
            print(flush=True)
        if not players:
            continue
        warning = table.players_warning(objs, players)
        if warning:
            print(_("warning: %(message)s") % {"message": say(warning)}, flush=True)
        print(_format_standings(table.standings(objs, players), args.rules), flush=True)
    return status


def cmd_score_grid(args) -> int:
    from kingdomino import service

    # without --rules the file's own rule set decides which bonuses (quests) exist
    _check_rules(args, bonuses=args.rules_given)
    source = None if args.file == "-" else args.file
    # a file that cannot be read is that input's error (exit 1), as a photo is for ``score``
    try:
        if source is None:
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        _error_line(source, f"no such file: {source}; check the path", args.json)
        return EXIT_INPUT
    except IsADirectoryError:
        _error_line(source, f"{source} is a folder: give a Kingdom JSON or text grid file",
                    args.json)
        return EXIT_INPUT
    except OSError as exc:
        _error_line(source, f"cannot read the file: {exc.strerror or exc}", args.json)
        return EXIT_INPUT
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _error_line(source, "not a text file: give Kingdom JSON or the text grid format", args.json)
        return EXIT_INPUT
    if not args.rules_given and args.bonus:
        import engine

        try:
            args.rules = engine.load_kingdom(text).rules
        except ValueError:
            pass  # a bad file: scoring it below says what is wrong
        else:
            _check_bonuses(args)
    try:
        obj = service.score_grid(text, rules=args.rules if args.rules_given else None,
                                 bonuses=args.bonus)
    except ValueError as exc:
        _error_line(source, str(exc), args.json)
        return EXIT_INPUT
    if source is not None:
        obj = {"source": source, **obj}
    _emit(obj, args.json)
    return EXIT_OK


def cmd_batch(args) -> int:
    from kingdomino import batch

    _check_rules(args)
    return batch.run(args)


def cmd_serve(args) -> int:
    from kingdomino.store import default_store_path
    from webapp import serve

    return serve(host=args.host, port=args.port, db=args.db or default_store_path(),
                 trusted_hosts=args.trusted_host, learning=not args.no_learning)


def cmd_learned(args) -> int:
    """``kingdomino learned``: the squares a store's corrections taught; ``--forget ID`` and
    ``--forget-all`` delete them (``kingdomino.learning``)."""
    import time

    store = _open_store(args.store)
    try:
        _, _say = _words()
        if args.forget_all:
            removed = store.forget_examples()
            print(json.dumps({"removed": removed}) if args.json
                  else _("forgot %(n)s learned square(s)") % {"n": removed}, flush=True)
            return EXIT_OK
        if args.forget is not None:
            if not store.forget_example(args.forget):
                _error_line(None, f"no learned square with id {args.forget} in {store.path}: "
                            "`kingdomino learned` lists them", args.json)
                return EXIT_INPUT
            print(json.dumps({"removed": 1}) if args.json
                  else _("forgot learned square %(id)s") % {"id": args.forget}, flush=True)
            return EXIT_OK
        rows = store.examples(scope=args.scope)
        for row in rows:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created"]))
            if args.json:
                print(json.dumps({"id": row["id"], "terrain": row["terrain"],
                                  "crowns": row["crowns"], "square": [row["row"], row["col"]],
                                  "reading_id": row["reading_id"], "source": row["source"],
                                  "kind": row["kind"], "correction": row["correction_id"],
                                  "scope": row["scope"], "created": row["created"]}),
                      flush=True)
            else:
                from kingdomino import i18n

                terrain = _(i18n.TERRAINS.get(row["terrain"], row["terrain"]))
                crowns = (" " + _("%(n)s crown(s)") % {"n": row["crowns"]}) if row["crowns"] else ""
                print(f"{row['id']:>6}  {terrain}{crowns}  " + _(
                    "%(square)s of reading %(reading)s (%(source)s), %(kind)s, %(when)s") % {
                    "square": f"r{row['row'] + 1}c{row['col'] + 1}", "reading": row["reading_id"],
                    "source": row["source"] or _("no name"), "kind": _(row["kind"]),
                    "when": when}, flush=True)
        if not args.json:
            print(_("%(n)s learned square(s) in %(path)s") % {"n": len(rows), "path": store.path}
                  if rows else
                  _("0 learned square(s) in %(path)s: correct or confirm a reading (kingdomino "
                    "serve) to teach the reader") % {"path": store.path}, flush=True)
        return EXIT_OK
    finally:
        store.close()


def _photo_size(text: str) -> tuple:
    """``WIDTHxHEIGHT`` (e.g. 4000x3000), each side at least 120 pixels."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels such as 4000x3000, got {text!r}")
    if min(w, h) < 120:
        raise argparse.ArgumentTypeError(f"each side must be at least 120 pixels, got {text!r}")
    return w, h


def cmd_evaluate(args) -> int:
    if getattr(args, "queendomino", False):    # the Queendomino photos' town squares
        from vision.lab.evaluation import queendomino

        return queendomino.main(args)
    if getattr(args, "online", False):     # learning from corrections, photo after photo
        from vision.lab.evaluation import online

        return online.main(args)
    from vision.lab.evaluation import evaluate

    return evaluate.main(args)


def _tile_net_files() -> tuple[str, str]:
    """The tile networks' file names in models/, as the reader's configuration gives them:
    ``[detect] tile_net`` and ``[reader] second_tile_net`` ("" where a network is off)."""
    from vision import config

    cfg = config.load()
    return str(cfg["detect"]["tile_net"]), str(cfg["reader"]["second_tile_net"])


def cmd_train(args) -> int:
    if args.tiles:
        from pathlib import Path

        from models import MODELS_DIR
        from vision.lab.training import tiles as tilenet

        out = Path(args.out) if args.out else MODELS_DIR
        common = []
        if args.datasets:
            common += ["--datasets", args.datasets]
        if args.limit:  # smoke test: a few scenes, a few steps
            common += ["--scenes", str(args.limit), "--steps", str(10 * args.limit)]
        # the detector's network, then the reader's second one (vision.find.second_net), under
        # the names the reader loads them by
        for name, recipe in zip(_tile_net_files(), ([], ["--lit"])):
            if not name:
                continue                        # "": that network is off
            rc = tilenet.main(["--out", str(out / name)] + recipe + common)
            if rc:
                return rc
        return EXIT_OK
    from vision.lab.training import squares as train

    return train.main(args)


def _add_learning_option(p: argparse.ArgumentParser, _=_identity) -> None:
    p.add_argument("--no-learning", action="store_true",
                   help=_("read without what the store's corrections taught (and, for serve, "
                          "let corrections teach nothing new)"))


def _add_scoring_options(p: argparse.ArgumentParser, _=_identity) -> None:
    p.add_argument("--rules", default=None, metavar="NAME",
                   help=_("rule set (default: kingdomino; see `kingdomino --help`)"))
    p.add_argument("--bonus", action="append", default=[], metavar="NAME",
                   help=_("optional bonus, repeatable (e.g. middle-kingdom, harmony)"))
    p.add_argument("--json", action="store_true", help=_("print JSON Lines instead of a table"))


def build_parser(tr=None) -> argparse.ArgumentParser:
    """The parser; its help in the language of ``tr`` (a catalog of ``kingdomino.i18n``; None:
    English). argparse's own words follow it inside ``_argparse_speaks(tr)``."""
    from engine.kingdom import SIZES
    from kingdomino.store import STORE_HELP

    _ = tr.gettext if tr is not None else _identity
    # the subcommands' parsers are of the same class (argparse's add_subparsers)
    parser_class = type("Parser", (_Parser,), {"heading": _(N_("%(title)s:"))})
    parser = parser_class(
        prog="kingdomino",
        description=_("Score finished Kingdomino-family kingdoms from a photo or a grid."),
        epilog=_rules_help(_),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("score", help=_("read and score photos of kingdoms"))
    p.add_argument("photos", nargs="+", metavar="PHOTO")
    p.add_argument("--size", type=int, choices=SIZES, default=None,
                   help=_("kingdom frame size (default: decided from the photo)"))
    p.add_argument("--corners", metavar="X1,Y1,...,X4,Y4", default=None,
                   help=_("the kingdom's four outer corners in the photo's stored pixels "
                          "(any corner first, either direction): read inside this outline "
                          "instead of searching the photo (one photo only)"))
    p.add_argument("--all", action="store_true",
                   help=_("whole-table photo: read every kingdom, numbered by centre from "
                          "left to right (ties top to bottom)"))
    p.add_argument("--players", metavar="NAMES", default=None,
                   help=_("with --all: the players' names in kingdom order, e.g. "
                          "\"Ann,Bob,Cat\"; prints the game's standings"))
    p.add_argument("--verbose", action="store_true",
                   help=_("print the traceback of a photo that fails inside the reader"))
    p.add_argument("--store", default=None, metavar="PATH",
                   help=_("read each photo with what this store's corrections taught, and "
                          "keep the reading there (correct it in `kingdomino serve --store "
                          "PATH`); without it nothing is stored"))
    _add_learning_option(p, _)
    _add_scoring_options(p, _)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("score-grid", help=_("score a kingdom given as Kingdom JSON or text grid"))
    p.add_argument("file", metavar="FILE", help=_("a file, or - for standard input"))
    _add_scoring_options(p, _)
    p.set_defaults(func=cmd_score_grid)

    p = sub.add_parser("batch",
                       help=_("score many photos (folders and zips are walked) into a CSV"))
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--out", required=True, metavar="CSV", help=_("results table to write"))
    p.add_argument("--manifest", metavar="CSV",
                   help=_("photo,player,table,round (with --all also kingdom) -> standings"))
    p.add_argument("--jobs", type=int, default=None,
                   help=_("worker processes (default: all cores)"))
    p.add_argument("--store", "--db", dest="db", default=None, metavar="PATH",
                   help=_(STORE_HELP))
    p.add_argument("--verbose", action="store_true",
                   help=_("print the traceback when the reader fails on a photo"))
    p.add_argument("--keep-photos", choices=("review", "all", "none"), default="review",
                   help=_("store the photo bytes for the web app's review page: only photos "
                          "needing a look (default), all, or none"))
    p.add_argument("--retry-errors", action="store_true",
                   help=_("read again the photos that failed in an earlier run (default: keep "
                          "the error)"))
    p.add_argument("--all", action="store_true",
                   help=_("whole-table photos: every kingdom of each photo, one row per kingdom "
                          "(numbered by centre from left to right); the manifest may then name "
                          "players by kingdom number (column kingdom)"))
    _add_learning_option(p, _)
    _add_scoring_options(p, _)
    p.set_defaults(func=cmd_batch)

    p = sub.add_parser("serve", help=_("start the web app"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5000)
    p.add_argument("--store", "--db", dest="db", default=None, metavar="PATH",
                   help=_(STORE_HELP))
    p.add_argument("--trusted-host", action="append", default=[], metavar="NAME",
                   help=_("another host name the app answers to (repeatable; e.g. the name of a "
                          "reverse proxy); requests naming any other host get 400. The --host "
                          "address and the localhost names are always trusted; "
                          "$KINGDOMINO_TRUSTED_HOSTS (commas) adds more"))
    _add_learning_option(p, _)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("learned",
                       help=_("list or delete the squares a store's corrections taught"))
    p.add_argument("--store", "--db", dest="store", default=None, metavar="PATH",
                   help=_(STORE_HELP))
    p.add_argument("--json", action="store_true", help=_("print JSON Lines instead of a table"))
    p.add_argument("--scope", default=None, metavar="SCOPE",
                   help=_("only the squares learned in this scope (a batch's id)"))
    forget = p.add_mutually_exclusive_group()
    forget.add_argument("--forget", type=int, default=None, metavar="ID",
                        help=_("delete the learned square with this id (as the list shows it)"))
    forget.add_argument("--forget-all", action="store_true",
                        help=_("delete every learned square of the store"))
    p.set_defaults(func=cmd_learned)

    p = sub.add_parser("evaluate", help=_("kingdom-grouped cross-validation of the reader on "
                                          "the dev photos, frame quality, and the generated "
                                          "hard tables"))
    p.add_argument("--datasets", default=None, help="datasets folder (default: ../shared/datasets)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="score the shipped models instead of retraining per fold")
    p.add_argument("--no-synth", action="store_true", help="skip the generated-scene set (faster)")
    p.add_argument("--online", action="store_true",
                   help="instead: read the dev photos one after another, each with what the "
                        "corrections of the earlier ones taught (exact before/after, helped, "
                        "harmed, per source; and with the other sources' corrections only)")
    p.add_argument("--queendomino", action="store_true",
                   help="instead: read the six labelled Queendomino photos (found by the reader "
                        "and in their labelled rectangle) under queendomino and kingdomino rules: "
                        "town squares read as town, flagged or neither, the other squares wrong "
                        "or flagged, and whether a warning says some squares are not Kingdomino "
                        "terrain (six photos of one game: counts, not rates)")
    p.add_argument("--save-outputs", metavar="FILE", help="keep the out-of-fold network outputs")
    p.add_argument("--fold-models", metavar="DIR",
                   help="keep each fold's network in DIR (foldK.onnx, with foldK.json saying what "
                        "it was trained on); a later run with the same DIR reads with them instead "
                        "of retraining (a change to the reader measured in minutes)")
    p.add_argument("--from-outputs", metavar="FILE",
                   help="re-score saved outputs under the current config (no retraining)")
    p.add_argument("--record", action="store_true",
                   help="with --from-outputs of the shipped model's recipe: record these figures "
                        "(and the config's review settings) in models/squares.json")
    p.add_argument("--per-photo", action="append", metavar="SET",
                   choices=("aau", "phone", "phone-detected", "synth", "hard-tables", "harder",
                            "table-photos", "real-tables"),
                   help="also list each photo's result in this set (repeatable), e.g. phone-detected "
                        "(with its frame: grid, corner error, squares off the kingdom), hard-tables "
                        "or table-photos")
    p.add_argument("--hard-tables", type=int, default=None, metavar="N",
                   help="also read N generated hard-table scenes with the shipped models (default 20, "
                        "none with --from-outputs; 0 skips them)")
    p.add_argument("--hard-size", type=_photo_size, default=None, metavar="WxH",
                   help="size of the hard-table photos (default 4000x3000)")
    p.add_argument("--hard-seed", type=int, default=None, metavar="SEED",
                   help="first hard-table seed (default 9000; seeds below 9000 are for training)")
    p.add_argument("--hard-kinds", default=None, metavar="KINDS",
                   help="the hard tables' kinds: comma-separated (plain, felt, wood, stripes, "
                        "checks, print, tartan, camo, grid, marble), 'unseen' (tartan, camo, "
                        "grid, marble: drawn only when asked for, no network here was trained "
                        "on them) or 'all' (default: plain to print)")
    p.add_argument("--hard-boards", type=int, default=None, metavar="N",
                   help="also read N hard-table scenes holding the AAU dev photos (real tile art) "
                        "instead of drawn kingdoms, seeds from 9600 (default none; the square "
                        "classifier was trained on these boards, the detector was not)")
    p.add_argument("--harder", type=int, default=None, metavar="N",
                   help="also read N harder generated scenes (issue 54): a small kingdom seen "
                        "steeply on stripes, checks, wood or terrain-coloured felt, with a lamp's "
                        "glare, a loose domino or another kingdom's edge; figures per challenge "
                        "(default none; size --hard-size)")
    p.add_argument("--harder-boards", type=int, default=None, metavar="N",
                   help="also read N harder scenes holding the AAU dev photos (real tile art)")
    p.add_argument("--harder-seed", type=int, default=None, metavar="SEED",
                   help="first harder seed (default 9900, the seeds reported on; 9800-9899 are "
                        "for developing the reader)")
    p.add_argument("--harder-challenges", default=None, metavar="LIST",
                   help="the harder scenes' challenges, one after another: comma-separated among "
                        "steep, glare, loose, neighbour, all (default all five)")
    p.add_argument("--table-photos", type=int, default=None, metavar="N",
                   help="also read N generated whole-table photos (2-4 kingdoms each) with the "
                        "shipped models: kingdoms found, exact, phantom kingdoms, numbering, "
                        "seconds (default 12, none with --from-outputs; 0 skips them)")
    p.add_argument("--table-size", type=_photo_size, default=None, metavar="WxH",
                   help="size of the whole-table photos (default 4000x3000)")
    p.add_argument("--table-seed", type=int, default=None, metavar="SEED",
                   help="first whole-table photo seed (default 20000; seeds below 20000 may be "
                        "used for training)")
    p.add_argument("--real-tables", action="store_true",
                   help="also read whole tables of real kingdoms: composites of 2-3 dev phone "
                        "photos side by side, and --all on each dev phone photo against plain "
                        "score (kingdoms found, exact, phantom, wrongly cut, --all worse)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="also write every figure (each photo and scene too) as JSON to FILE")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("train",
                       help=_("rebuild the classifier files in models/ from the dev photos"))
    p.add_argument("--datasets", default=None,
                   help=_("datasets folder (default: ../shared/datasets)"))
    p.add_argument("--out", default=None, help=_("folder for the model files (default: models/)"))
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--limit", type=int, default=None,
                   help=_("use only the first N boards (smoke test)"))
    first, second = _tile_net_files()
    p.add_argument("--tiles", action="store_true",
                   help=_("rebuild the detector's tile networks (models/%(first)s and the "
                          "second, models/%(second)s) instead") % {"first": first,
                                                                    "second": second})
    p.set_defaults(func=cmd_train)
    return parser


def main(argv=None) -> int:
    tr = _language()
    with _argparse_speaks(tr):  # --help, usage and argparse's errors in the CLI's language
        parser = build_parser(tr)
        args = parser.parse_args(argv)
    if hasattr(args, "rules"):
        args.rules_given = args.rules is not None
        args.rules = args.rules or "kingdomino"
    try:
        return args.func(args)
    except UsageError as exc:
        parser.exit(EXIT_USAGE, _said(exc) + "\n")
    except KeyboardInterrupt:
        print("kingdomino: " + _words()[0](N_("interrupted")), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _pipe_closed()


def _pipe_closed() -> int:
    """The reader of our output went away (``| head``): no traceback, and nothing more is
    written; stdout goes to the null device so that Python's own flush at exit does not fail
    again. Exit 141, as a shell reports a command stopped by SIGPIPE."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is no file (a test's capture)
        pass
    return EXIT_PIPE


if __name__ == "__main__":
    sys.exit(main())
