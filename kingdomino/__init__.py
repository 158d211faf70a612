"""Command line, shared services and the result store of the Kingdomino score assistant."""

import os

# numpy's BLAS on one thread (set before numpy loads; a value already set is kept): the reader's
# matrix products are small (the per-pixel tile model, a 400 px map through a 12 x 32 layer) and
# OpenBLAS's own threads spent more CPU than they saved beside OpenCV's threads and the batch's
# workers (that product 22 -> 6 ms; a 12 MP read about 60 ms less CPU; issue 51)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
