"""Where every figure is drawn and written: the Agg backend, text as text, PNG and SVG.

Every figure is written twice, ``name.png`` and ``name.svg`` beside it, each atomically. The
SVG keeps its text as text (``svg.fonttype`` ``none``: searchable, and small) and is
deterministic: its element ids come from a fixed ``svg.hashsalt`` and it carries no date or
version, so re-rendering the same results writes the same bytes.

Figures with every model use :func:`family_panels` and :func:`family_legend`: one column of
panels per model family (:func:`robustbnn.report.families.panel_groups`), shared axes, and one
legend below with a column per family.

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
from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed; set before pyplot is imported
matplotlib.rcParams["text.parse_math"] = False  # names from data ($\foo$) are text, not TeX
matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text, not glyph paths
matplotlib.rcParams["svg.hashsalt"] = "robustbnn"  # fixed ids: the same figure, the same bytes

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axis import Axis  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import LogFormatter  # noqa: E402

from robustbnn.results.store import write_bytes_atomic  # noqa: E402

__all__ = ["METADATA", "SVG_METADATA", "PlainLogFormatter", "family_legend", "family_panels",
           "plain_log_ticks", "save_figure", "svg_twin"]

METADATA = {"Software": None}  # no version string in the file: the PNG depends on data only
SVG_METADATA = {"Creator": None, "Date": None}  # nor in the SVG: no version, no date


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


def svg_twin(path: Path) -> Path:
    """The SVG written beside the PNG ``path`` (``name.png`` -> ``name.svg``)."""
    return Path(path).with_suffix(".svg")


def save_figure(fig: plt.Figure, path: Path) -> Path:
    """Write ``fig`` to ``path`` as a PNG and beside it as an SVG, atomically, and close it.

    Args:
        fig: The figure; closed even when writing fails.
        path: Where the PNG goes; the SVG goes to :func:`svg_twin` of it.

    Returns:
        ``path``. A partial PNG or SVG never replaces a good one.
    """
    png, svg = io.BytesIO(), io.BytesIO()
    try:
        fig.savefig(png, format="png", dpi=100, metadata=METADATA)
        fig.savefig(svg, format="svg", metadata=SVG_METADATA)
    finally:
        plt.close(fig)
    write_bytes_atomic(path, png.getvalue())
    write_bytes_atomic(svg_twin(path), svg.getvalue())
    return path


def family_panels(rows: int, groups: Mapping[str, list[str]], *,
                  size: tuple[float, float] = (3.9, 3.1), by_row: bool = False,
                  sharey: bool | str = "row") -> tuple[plt.Figure, np.ndarray]:
    """A grid of panels, one column per group of models (one row per group with ``by_row``).

    Args:
        rows: Panels per group (an S_attack, an eps, a metric each).
        groups: ``{panel title: models}`` (:func:`robustbnn.report.families.panel_groups`).
        size: Width and height of one panel, in inches.
        by_row: Lay the groups out as rows instead of columns.
        sharey: As :func:`matplotlib.pyplot.subplots`, counted in ``axes[i][j]`` terms
            (``"row"``: the panels of one kind share it).

    Returns:
        The figure (constrained layout, which makes room for :func:`family_legend`) and the axes,
        shape (rows, groups) in either layout: ``axes[i][j]`` is kind ``i`` of group ``j``.
    """
    cols = max(1, len(groups))
    shape = (cols, rows) if by_row else (rows, cols)
    share = {"row": "col", "col": "row"}.get(sharey, sharey) if by_row else sharey
    room = (3.0, 0.0) if by_row else (0.0, 0.8)  # for the legend: at the right, or below
    fig, axes = plt.subplots(*shape, figsize=(size[0] * shape[1] + room[0],
                                              size[1] * shape[0] + room[1]),
                             squeeze=False, sharex=True, sharey=share, layout="constrained")
    return fig, (axes.T if by_row else axes)


def family_legend(fig: plt.Figure, groups: Mapping[str, list[str]],
                  styles: Mapping[str, Mapping[str, str]], *,
                  labels: Mapping[str, str] | None = None, right: bool = False,
                  **line: object) -> Legend:
    """One legend for every panel: a column per group below the panels, headed by its name,
    a line per model (or, with ``right``, the groups one under another at the right).

    Args:
        fig: A figure from :func:`family_panels`.
        groups: The groups its panels show, in their order.
        styles: Each model's look (:func:`robustbnn.report.styles.styles_for`).
        labels: A model's text in the legend, where not its name.
        right: Put the legend at the right, in one column (for ``by_row`` panels and long
            labels).
        line: Overrides for every legend line (``ls="-"`` where the line style means
            something else in the figure).

    Returns:
        The legend.
    """
    labels = labels or {}
    depth = 1 if right else max((len(m) for m in groups.values()), default=0) + 1
    blank = Line2D([], [], ls="none")
    handles: list[Line2D] = []
    texts: list[str] = []
    heads: list[int] = []
    for title, models in groups.items():  # column-major: each column one group, padded
        heads.append(len(texts))
        handles += [blank] + [Line2D([], [], ms=5, **{**styles[m], **line}) for m in models]
        texts += [title] + [labels.get(m, m) for m in models]
        pad = max(0, depth - 1 - len(models))
        handles += [blank] * pad
        texts += [""] * pad
    where = {"loc": "outside right center", "ncol": 1} if right else {
        "loc": "outside lower center", "ncol": max(1, len(groups))}
    legend = fig.legend(handles, texts, fontsize=7, frameon=False, handlelength=2.5, **where)
    for i in heads:
        legend.get_texts()[i].set_fontweight("bold")
    return legend
