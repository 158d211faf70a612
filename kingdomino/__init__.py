"""Command line, shared services and the result store of the Kingdomino score assistant."""

__version__ = "0.1.0"
