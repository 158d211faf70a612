"""``kingdomino batch``: the command (options, progress, summary, files written).

Exit codes: 0 all photos ok, 1 some photo failed (the others are still read), 2 usage, 130 ^C.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from pathlib import Path

from kingdomino import standings as standings_mod
from kingdomino.batch.inputs import collect
from kingdomino.batch.limits import (EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
                                     BatchUsageError)
from kingdomino.batch.pool import Batch, Outcome
from kingdomino.batch.results import (_write_atomic, build_rows, match_manifest, row_json,
                                      rows_to_csv, standings_for, standings_path)
from kingdomino.store import Store


def _language():
    """``gettext`` and the sentence renderer of the CLI's language (LANG / LC_MESSAGES)."""
    from kingdomino import i18n

    tr = i18n.translations(i18n.locale_from_environment())
    return tr.gettext, lambda text: str(i18n.render(text, tr))


def N_(message: str) -> str:
    """Marks a message for the catalogs without translating it."""
    return message


def _batch_id(paths, rules, bonuses, all_kingdoms: bool = False) -> str:
    key = [sorted(os.path.abspath(str(p)) for p in paths), rules, sorted(bonuses)]
    key = json.dumps(key + ["all"] if all_kingdoms else key)
    return "cli-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def _progress_bar(total: int, desc: str = "reading photos"):
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="photo", file=sys.stderr, dynamic_ncols=True,
                desc=desc)


def run(args, score_fn=None) -> int:
    """``kingdomino batch``; returns the exit code (0 ok, 1 some photo failed, 2 usage, 130 ^C)."""
    err = sys.stderr
    _, say = _language()  # what a person reads is in the CLI's language; the CSV stays English

    def error(message: str, **values) -> None:
        """``kingdomino: error: ...`` on stderr, in the CLI's language."""
        print("kingdomino: " + _("error: %(message)s") % {
            "message": _(message) % values if values else say(_(message))}, file=err)

    _log_to(err, verbose=getattr(args, "verbose", False))
    out = Path(args.out)
    if not out.parent.exists():
        error(N_("the folder for --out does not exist: %(folder)s"), folder=out.parent)
        return EXIT_USAGE
    if out.is_dir():
        error(N_("--out is a folder; give a file name such as %(example)s"),
              example=out / "results.csv")
        return EXIT_USAGE
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        error(N_("--jobs must be 1 or more"))
        return EXIT_USAGE
    all_kingdoms = bool(getattr(args, "all", False))  # --all: every kingdom of each photo
    manifest = None
    if getattr(args, "manifest", None):
        try:
            text = Path(args.manifest).read_text(encoding="utf-8-sig")
            manifest = standings_mod.read_manifest(text, kingdoms=all_kingdoms)
        except FileNotFoundError:
            error(N_("no such manifest: %(path)s"), path=args.manifest)
            return EXIT_USAGE
        except (OSError, UnicodeDecodeError) as exc:
            error(N_("cannot read the manifest %(path)s: %(why)s"), path=args.manifest, why=exc)
            return EXIT_USAGE
        except standings_mod.ManifestError as exc:
            print(f"kingdomino: error: {args.manifest}: {exc}", file=err)
            return EXIT_USAGE
    try:
        coll = collect(args.paths)
    except BatchUsageError as exc:
        error(str(exc))
        return EXIT_USAGE
    if manifest:
        try:  # a manifest that cannot be matched is found before anything is read
            match_manifest(manifest, [Outcome(item) for item in coll.items])
        except standings_mod.ManifestError as exc:
            print(f"kingdomino: error: {args.manifest}: {exc}", file=err)
            coll.close()
            return EXIT_USAGE
    rules, bonuses = args.rules, tuple(sorted(args.bonus))
    try:
        store = Store(getattr(args, "db", None))
    except (OSError, ValueError) as exc:  # sqlite3.Error is not one: caught below
        error(N_("cannot open the store: %(why)s"), why=exc)
        coll.close()
        return EXIT_USAGE
    except Exception as exc:  # sqlite3.DatabaseError: not a store
        error(N_("cannot open the store %(path)s: %(why)s; give another file with --store"),
              path=args.db or "", why=exc)
        coll.close()
        return EXIT_USAGE
    bar = _progress_bar(len(coll.items), _("reading photos"))
    counts = {"reused": 0}

    def tick(outcome: Outcome) -> None:
        counts["reused"] += outcome.reused
        if bar is not None:
            bar.update(1)
            if counts["reused"]:
                bar.set_postfix(already_done=counts["reused"], refresh=False)

    batch = Batch(store, rules=rules, bonuses=bonuses,
                  batch_id=_batch_id(args.paths, rules, bonuses, all_kingdoms), score_fn=score_fn,
                  jobs=jobs, keep_photos=getattr(args, "keep_photos", "review") or "review",
                  retry_errors=getattr(args, "retry_errors", False), progress=tick,
                  all_kingdoms=all_kingdoms,
                  # read with what the store's corrections taught, unless --no-learning
                  learning=not getattr(args, "no_learning", False))
    try:
        try:
            outcomes = batch.run(coll.items)
        finally:
            if bar is not None:
                bar.close()
    except KeyboardInterrupt:
        print("kingdomino: " + _("interrupted; %(n)s photo(s) read in this run are saved in "
                                 "%(store)s: run the same command again to finish the rest")
              % {"n": batch.scored, "store": store.path}, file=err)
        store.close()
        coll.close()
        return EXIT_INTERRUPTED
    coll.close()
    try:
        rows = build_rows(store, outcomes, rules=rules, bonuses=bonuses, manifest=manifest,
                          all_kingdoms=all_kingdoms)
    except standings_mod.ManifestError as exc:
        print(f"kingdomino: error: {args.manifest}: {exc}", file=err)
        store.close()
        return EXIT_USAGE
    store.close()
    _write_atomic(out, rows_to_csv(rows, rules=rules, bonuses=bonuses, all_kingdoms=all_kingdoms))
    table = None
    if manifest:
        table = standings_for(rows)
        _write_atomic(standings_path(out), standings_mod.to_csv(table))
    n_err = sum(r["status"].startswith("error") for r in rows)
    n_rev = sum(r["status"] == "review" for r in rows)
    if getattr(args, "json", False):
        for r in rows:
            print(json.dumps(row_json(r)), flush=True)
    else:
        said = {"n": len(rows), "photos": len(outcomes), "ok": len(rows) - n_err - n_rev,
                "review": n_rev, "errors": n_err, "read": batch.scored, "reused": counts["reused"]}
        print(_("%(n)s row(s) from %(photos)s table photo(s): %(ok)s ok, %(review)s to review, "
                "%(errors)s error(s); %(read)s read now, %(reused)s already in the store")
              % said if all_kingdoms else
              _("%(n)s photo(s): %(ok)s ok, %(review)s to review, %(errors)s error(s); "
                "%(read)s read now, %(reused)s already in the store") % said)
        if coll.skipped:
            print(_("skipped %(n)s file(s) that are not photos") % {"n": coll.skipped})
        print(_("results: %(path)s") % {"path": out})
        if table is not None:
            print(_("standings: %(path)s") % {"path": standings_path(out)})
            print(standings_mod.format_table(table))
        if n_err or n_rev:
            print(_("kingdoms needing a look are listed first in the CSV; open /r/<reading_id> "
                    "in `kingdomino serve` to check or correct them") if all_kingdoms else
                  _("photos needing a look are listed first in the CSV; open /r/<reading_id> "
                    "in `kingdomino serve` to check or correct them"))
    return EXIT_INPUT if n_err else EXIT_OK


def _log_to(stream, verbose: bool) -> None:
    """With --verbose, a reader's failure is logged with its traceback; without, the error row
    (which says to run with --verbose) is all."""
    logger = logging.getLogger("kingdomino.batch")
    for h in list(logger.handlers):
        if getattr(h, "_kingdomino", False):
            logger.removeHandler(h)
    handler = logging.StreamHandler(stream) if verbose else logging.NullHandler()
    handler._kingdomino = True
    handler.setFormatter(logging.Formatter("kingdomino: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
