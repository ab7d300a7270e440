"""Where every figure is drawn and written: the Agg backend, text as text, atomic PNGs.

:mod:`robustbnn.report.figures`, :mod:`~robustbnn.report.robust_figures`,
:mod:`~robustbnn.report.shift_figures` and the reproductions' figures import
:func:`save_figure` from here, so the backend is set once, before any figure is drawn, and no
figure module imports another for it.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed; set before pyplot is imported
matplotlib.rcParams["text.parse_math"] = False  # names from data ($\foo$) are text, not TeX

import matplotlib.pyplot as plt  # noqa: E402

from robustbnn.results.store import write_bytes_atomic  # noqa: E402

__all__ = ["METADATA", "save_figure"]

METADATA = {"Software": None}  # no version string in the file: the PNG depends on data only


def save_figure(fig: plt.Figure, path: Path) -> Path:
    """Write ``fig`` to ``path`` as a PNG, atomically, and close it.

    Args:
        fig: The figure; closed even when writing fails.
        path: Where the PNG goes.

    Returns:
        ``path``. A partial PNG never replaces a good one.
    """
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=100, metadata=METADATA)
    finally:
        plt.close(fig)
    write_bytes_atomic(path, buffer.getvalue())
    return path
