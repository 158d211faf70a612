"""Opening a photo: its bytes checked against the limits and decoded (``files``: formats, EXIF,
sizes, one decode at a time), and decoded at the scale the reader needs with its reading put
back in the photo's pixels (``scale``)."""
from vision.photo.scale import *  # noqa: F401,F403  (the old ``vision.photo`` names, until every caller moves)
from vision.photo.scale import FACTORS, load_for_reading, reduced_map, reduction, to_photo_pixels, to_reduced_pixels  # noqa: F401
