"""Errors the reader raises for a person: each says what is wrong with the photo."""


class PhotoError(ValueError):
    """The photo cannot be decoded, is too large, or shows no readable kingdom."""


NO_KINGDOM = ("no kingdom found in the photo: take the photo from above with the whole "
              "kingdom in view, on a plain table, in good light")
