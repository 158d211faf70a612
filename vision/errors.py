"""Errors the reader raises for a person: each says what is wrong with the photo."""


class PhotoError(ValueError):
    """The photo cannot be decoded, is too large, or shows no readable kingdom."""
