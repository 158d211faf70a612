"""Measuring the reader: ``kingdomino evaluate`` (``evaluate``), the frame under small changes of
the photo (``robust``), outlines given by hand (``hand_outline``) and the before / after check of
a change that must not change any reading (``snapshot``)."""
