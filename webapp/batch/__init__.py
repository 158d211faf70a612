"""Batch page of the web app: many photos (or zips) -> standings, review queue, CSV downloads.

Two parts: ``routes`` (the blueprint ``batch`` under ``/batch``: forms, JSON answers, pages and
downloads) and ``jobs`` (the batches this server holds, their uploads on disk, their limits and
the one queue that reads them into the store). Each module's docstring tells its part.
"""
from __future__ import annotations

from .routes import bp

__all__ = ["bp"]
