"""Opening a photo: its bytes checked against the limits and decoded (``files``: formats, EXIF,
sizes, one decode at a time), and decoded at the scale the reader needs with its reading put
back in the photo's pixels (``scale``)."""
