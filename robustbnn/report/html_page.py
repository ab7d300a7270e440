"""What the HTML report shows: one frozen record, built by :mod:`robustbnn.report.render`.

:func:`robustbnn.report.html.to_html` turns an :class:`HtmlPage` into one self-contained file:
the headline table (sortable, filterable by family), the per-aspect tables, one card per model
and every figure embedded. The page holds no logic of its own about which numbers matter; the
renderer chooses the tables and passes them here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from robustbnn.report.leaderboard import Leaderboard

__all__ = ["HtmlPage"]


@dataclasses.dataclass(frozen=True)
class HtmlPage:
    """The input of the HTML report.

    Attributes:
        title: The page title (``<title>`` and ``<h1>``).
        headline: The headline table (at most about 10 columns), in its sort order.
        aspects: Per-aspect tables, aspect title -> table, in page order.
        legend: Protocol items, Markdown (bold and code spans are rendered, the rest escaped).
        figures: Every figure file written (PNG and SVG), absolute paths. A figure whose file
            stem ends in a model's :func:`robustbnn.results.paths.safe_name` goes on that
            model's card; the others are headline figures.
        families: Model -> family, for the family filter and the cards.
        models: ``run.json`` ``"models"`` entries: model -> ``{"config": {...}, "fit": {...}}``;
            ``fit`` may hold ``"val_accuracy"``, the per-epoch validation accuracies.
        details: Other report files to link, relative to the page (``ood.md``, ``attack.md``).
        after_table: HTML placed right under the headline table (the refused models).
    """

    title: str
    headline: Leaderboard
    aspects: dict[str, Leaderboard] = dataclasses.field(default_factory=dict)
    legend: list[str] = dataclasses.field(default_factory=list)
    figures: list[Path] = dataclasses.field(default_factory=list)
    families: dict[str, str] = dataclasses.field(default_factory=dict)
    models: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    details: list[str] = dataclasses.field(default_factory=list)
    after_table: str = ""
