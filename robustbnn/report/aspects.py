"""The aspect tables: every column of the full leaderboard in the table of its aspect.

Each :class:`~robustbnn.report.column.Column` names its aspect
(:data:`~robustbnn.report.column.ASPECTS`: attacks, robustness, OOD detection, calibration and
dataset shift, sanity checks and cost), so every number of the full table is in exactly one
aspect table, rows in the headline's order. An aspect table is written as
``table_<aspect>.md`` and ``.csv`` (:func:`aspect_file`): the ``table_`` prefix keeps them
apart from the detail tables ``attack.md``, ``ood.md`` and ``shift.md``, which they link.
"""

from __future__ import annotations

from robustbnn.report.column import ASPECTS
from robustbnn.report.escape import escape
from robustbnn.report.leaderboard import Leaderboard, to_markdown

__all__ = ["DETAILS", "aspect_boards", "aspect_file", "aspect_markdown", "aspect_links"]

# The detail files each aspect table links, when the render wrote them.
DETAILS = {"attacks": ("attack.md",), "ood": ("ood.md", "ood.csv"), "shift": ("shift.md",),
           "fidelity": ("fidelity.md",)}


def aspect_file(aspect: str) -> str:
    """The file stem of an aspect table.

    Example:
        >>> aspect_file("attacks")
        'table_attacks'
    """
    return f"table_{aspect}"


def aspect_boards(board: Leaderboard) -> dict[str, Leaderboard]:
    """Per aspect with at least one column, in :data:`ASPECTS` order, its table: the columns
    of that aspect, in the full table's order, rows in the full table's order."""
    out = {}
    for aspect in ASPECTS:
        keys = [c.key for c in board.columns if c.aspect == aspect]
        if keys:
            out[aspect] = board.select(keys)
    return out


def _link(name: str) -> str:
    return f"[{escape(name)}]({name})"


def aspect_links(aspects: list[str]) -> str:
    """The Markdown line under the headline that links every aspect table."""
    if not aspects:
        return ""
    links = ", ".join(f"{escape(ASPECTS[a])}: {_link(aspect_file(a) + '.md')}" for a in aspects)
    return (f"Every other number, by aspect: {links}. All columns in one table: "
            f"{_link('all_columns.csv')} ({_link('all_columns.json')}).\n\n")


def aspect_markdown(aspect: str, board: Leaderboard, legend: list[str], *, title: str,
                    details: list[str]) -> str:
    """An aspect table as GitHub Markdown: its title, the order, the table, links to the
    headline and to the detail files of ``details`` it has, and its legend items.

    Args:
        aspect: A key of :data:`ASPECTS`.
        board: Its table (:func:`aspect_boards`).
        legend: Its protocol items (:func:`robustbnn.report.legend.aspect_legend`).
        title: The leaderboard's title; the page is titled "<title>: <aspect title>".
        details: The detail files the render wrote (only this aspect's are linked).
    """
    mine = [d for d in DETAILS.get(aspect, ()) if d in details]
    more = f" Per cell: {', '.join(_link(d) for d in mine)}." if mine else ""
    after = f"Headline: {_link('leaderboard.md')}.{more}\n\n"
    return to_markdown(board, legend, title=f"{title}: {ASPECTS[aspect]}", after_table=after)
