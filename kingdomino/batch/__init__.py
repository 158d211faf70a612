"""``kingdomino batch``: score many photos (folders and zips) into a results CSV and standings.

One module per job (see ``docs/batch.md``):

- ``inputs``: walking files, folders and zips into a sorted list of ``Item`` s;
- ``limits``: what one photo, one zip and one run may be; exit codes;
- ``photo``: reading one photo's bytes (the one place a photo is opened);
- ``pool``: ``Batch``, the worker processes and the store's claims;
- ``results``: rows from the store, the results CSV, JSON Lines, standings;
- ``command``: the ``kingdomino batch`` command.

The scoring function is a parameter (``score_fn(data, rules, bonuses) -> scored JSON``; with
``--all``, ``-> {"kingdoms": [scored JSON with "kingdom", "corners", "cut"], ...}``), so tests
can swap the photo reader for a fake one. The names below are the package's public interface
(the web app's batch page uses them).
"""
from __future__ import annotations

from kingdomino.batch import limits
from kingdomino.batch.command import run
from kingdomino.batch.inputs import Collection, Item, collect, collect_uploads
from kingdomino.batch.limits import (EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
                                     IMAGE_EXTENSIONS, BatchUsageError)
from kingdomino.batch.photo import ItemError, looks_like_image, photo_copy, read_item
from kingdomino.batch.pool import Batch, Outcome, score_photo_bytes, score_table_bytes
from kingdomino.batch.results import (BASE_COLUMNS, TAIL_COLUMNS, build_rows, match_manifest,
                                      review_for_people, row_json, rows_to_csv, standings_for,
                                      standings_path, tiebreak_columns)

__all__ = [
    "BASE_COLUMNS", "TAIL_COLUMNS", "EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE",
    "IMAGE_EXTENSIONS", "Batch", "BatchUsageError", "Collection", "Item", "ItemError", "Outcome",
    "build_rows", "collect", "collect_uploads", "limits", "looks_like_image",
    "match_manifest", "photo_copy", "read_item", "review_for_people", "row_json", "rows_to_csv",
    "run", "score_photo_bytes", "score_table_bytes", "standings_for", "standings_path",
    "tiebreak_columns",
]
