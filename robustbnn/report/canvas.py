"""Where every figure is drawn and written: the Agg backend, text as text, atomic PNGs.

Text is never parsed as mathtext (``text.parse_math`` is off), so a model name from the data
such as ``$\\foo$`` prints as typed. Matplotlib's log-scale formatters write their labels as
mathtext (``$\\mathdefault{10^{-1}}$``), which would then print raw: every log axis goes
through :func:`plain_log_ticks`, which labels the same ticks as plain numbers (0.01, 0.3, 100).

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
from matplotlib.axis import Axis  # noqa: E402
from matplotlib.ticker import LogFormatter  # noqa: E402

from robustbnn.results.store import write_bytes_atomic  # noqa: E402

__all__ = ["METADATA", "PlainLogFormatter", "plain_log_ticks", "save_figure"]

METADATA = {"Software": None}  # no version string in the file: the PNG depends on data only


class PlainLogFormatter(LogFormatter):
    """:class:`~matplotlib.ticker.LogFormatter`'s choice of ticks to label, as plain numbers.

    Example:
        >>> fig, ax = plt.subplots()
        >>> ax.set_xscale("log"); plain_log_ticks(ax.xaxis)
        >>> _ = ax.set_xlim(0.01, 0.5)
        >>> fig.canvas.draw()
        >>> [t.get_text() for t in ax.get_xticklabels() if 0.01 <= t.get_position()[0] <= 0.5]
        ['0.01', '0.1']
        >>> plt.close(fig)
    """

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:g}"


def plain_log_ticks(axis: Axis) -> None:
    """Label a log-scale ``axis`` (``ax.xaxis`` / ``ax.yaxis``) with plain numbers.

    Call it after every ``set_xscale("log")`` / ``set_yscale("log")``: setting the scale,
    on this axis or on one it shares, puts matplotlib's mathtext formatters back.
    """
    axis.set_major_formatter(PlainLogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))


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
