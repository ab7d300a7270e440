"""GitHub Markdown tables, the one writer behind ``leaderboard.md``, ``ood.md`` and ``attack.md``.

Hand-written rather than tabulate's ``github`` format so that cells are not padded: a moved
number changes one line of a diff, not the widths of a whole column.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["escape", "md_table"]


def escape(text: str) -> str:
    """A cell that cannot break the table: ``|`` escaped, newlines as spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]],
             right: Sequence[bool] | None = None) -> str:
    """The table as lines ending in a newline; ``right[i]`` right-aligns column i.

    By default the first column is left-aligned and the others (numbers) right-aligned.
    """
    if right is None:
        right = [False] + [True] * (len(header) - 1)

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(escape(str(c)) for c in cells) + " |"

    rule = "|" + "|".join("---:" if r else "---" for r in right) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)]) + "\n"
