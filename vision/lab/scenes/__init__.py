"""Scenes the lab draws: boards (``render``), phone photos of one kingdom (``synth``), hard tables
(``hard_tables``), whole tables (``whole_tables``), and the training scenes of the tile network
(``tile_scenes``) and of the square classifier's table squares (``table_squares``)."""
