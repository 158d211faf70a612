"""Finding the kingdom in a photo: the tile maps (``tilemap``, ``tilenet``), the blob's outline
(``outline``, ``seams``), the rows x cols count and the 5x5 / 7x7 frame (``gridcount``,
``lattice``, ``frame``, ``reframe``), the corners on the seams (``corner_refine``), the detector's
candidate windows (``detect``, ``second_net``), every kingdom of a whole table (``whole_table``)
and an outline given by hand (``by_hand``)."""
