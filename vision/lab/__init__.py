"""The lab beside the reader: training, fitting, generated scenes, datasets and evaluation.

Nothing in ``vision`` (the reader) imports from here; ``kingdomino evaluate`` and
``kingdomino train`` do. Training needs the ``train`` extra (torch, onnx); fitting the
detector's pixel model needs scikit-learn.
"""
