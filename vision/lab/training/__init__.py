"""One module per shipped model: the square classifier (``squares``: ``models/squares.onnx``), the
tile networks (``tiles``: ``models/tiles.onnx``, ``models/tiles_lit.onnx``) and the per-pixel tile
model (``pixels``: ``models/pixel_model.json``)."""
