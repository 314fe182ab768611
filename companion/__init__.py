"""The table companion: rules, game session, web page and the `companion` command."""

import os

# NumPy's work here is small matrices (3x3 poses, a few thousand points): BLAS threads
# gain nothing, and an idle OpenBLAS worker was seen spinning on a whole core, taking it
# from the tracking pipeline. Set before anything imports NumPy; a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
