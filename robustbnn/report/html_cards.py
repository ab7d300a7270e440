"""One card per model in the HTML report: a ``<details>`` holding everything about the model.

A card shows the model's family, its config (from ``run.json``) as a table, its training curve
(the per-epoch validation accuracy, ``fit.val_accuracy``) as a small SVG drawn here without
JavaScript, every number of the model in the headline and per-aspect tables, and the figures
drawn for it. Every string from data goes through :func:`robustbnn.report.escape.escape`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from robustbnn.report.escape import escape
from robustbnn.report.html_assets import Figure, figure_html
from robustbnn.report.leaderboard import Leaderboard, format_cell
from robustbnn.report.markdown import MISSING
from robustbnn.results.paths import UnsafeNameError, safe_name

__all__ = ["card_id", "model_card", "training_curve"]

# The curve's drawing area in SVG user units, and the margin left for the axis labels.
WIDTH, HEIGHT, LEFT, BOTTOM = 260, 90, 40, 16


def _e(text: object) -> str:
    return escape(text, to="html")


def card_id(model: str, position: int) -> str:
    """The card's element id: ``model-<safe name>`` (``model-<position>`` for a name that
    cannot be one)."""
    try:
        return f"model-{safe_name(model)}"
    except UnsafeNameError:
        return f"model-{position}"


def training_curve(values: object) -> str:
    """The validation accuracy per epoch as an inline SVG polyline, or a sentence without one.

    Args:
        values: ``fit.val_accuracy`` from ``run.json``: a list of numbers (non-finite and
            non-numeric entries are left out), or anything else for a model without a curve.

    Returns:
        HTML: an ``<svg class="curve">`` with the line, the y range and the epoch count.
    """
    points = ([(i, float(v)) for i, v in enumerate(values, start=1)
               if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]
              if isinstance(values, list) else [])
    if not points:
        return ('<p class="no-curve">No training curve recorded (<code>fit.val_accuracy</code>).'
                "</p>")
    low, high = min(v for _, v in points), max(v for _, v in points)
    span = (high - low) or 1.0
    last = max(len(values), 2) - 1  # epochs 1..n spread over the width

    def xy(epoch: int, value: float) -> tuple[float, float]:
        return (LEFT + (epoch - 1) / last * (WIDTH - LEFT - 4),
                4 + (high - value) / span * (HEIGHT - BOTTOM - 8))

    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(e, v) for e, v in points))
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2"><title>epoch {e}: {v:.4f}</title>'
                   "</circle>" for (e, v), (x, y) in zip(points, (xy(e, v) for e, v in points),
                                                         strict=True))
    base = HEIGHT - BOTTOM + 4
    return (f'<svg class="curve" width="{WIDTH}" height="{HEIGHT + 4}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT + 4}" role="img" aria-label="validation accuracy '
            f'per epoch, {low:.4f} to {high:.4f} over {len(values)} epochs">'
            f"<title>validation accuracy per epoch</title>"
            f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - 2}" y2="{base}" class="axis"/>'
            f'<line x1="{LEFT}" y1="2" x2="{LEFT}" y2="{base}" class="axis"/>'
            f'<text x="{LEFT - 3}" y="10" text-anchor="end">{high:.3f}</text>'
            f'<text x="{LEFT - 3}" y="{HEIGHT - BOTTOM}" text-anchor="end">{low:.3f}</text>'
            f'<text x="{LEFT}" y="{HEIGHT + 2}">epoch 1</text>'
            f'<text x="{WIDTH - 2}" y="{HEIGHT + 2}" text-anchor="end">{len(values)}</text>'
            f'<polyline points="{line}" fill="none"/>{dots}</svg>')


def _value(value: object) -> str:
    """A config value as text: strings as they are, everything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _pairs(title: str, rows: list[tuple[str, str]]) -> str:
    if not rows:
        return ""
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<div class="part"><h4>{_e(title)}</h4>\n<table class="pairs">{body}</table></div>\n'


def _numbers(model: str, boards: dict[str, Leaderboard]) -> str:
    """Every measured number of ``model`` in the headline and the per-aspect tables."""
    parts = []
    for title, board in boards.items():
        if model not in board.table.index:
            continue
        rows = [(c.title, format_cell(board, model, c)) for c in board.columns]
        rows = [(k, v) for k, v in rows if v not in (MISSING, "")]
        parts.append(_pairs(title, rows))
    return "".join(parts) or '<p class="part">No numbers for this model.</p>\n'


def model_card(model: str, position: int, *, family: str, entry: dict[str, Any],
               boards: dict[str, Leaderboard], figures: list[Figure], family_class: str) -> str:
    """The card of one model.

    Args:
        model: The model name.
        position: The model's place on the page (its fallback id).
        family: The model's family.
        entry: The model's ``run.json`` ``models`` entry (``config``, ``fit``); may be empty.
        boards: Table title -> table (the headline first), the numbers shown.
        figures: The figures drawn for this model, embedded.
        family_class: The family's CSS class, which the family filter hides.

    Returns:
        HTML: a ``<details class="card">`` element.
    """
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    fit = entry.get("fit") if isinstance(entry.get("fit"), dict) else {}
    facts = [(str(k), f"{v:.6g}" if isinstance(v, float) else _value(v))
             for k, v in fit.items() if k != "val_accuracy" and not isinstance(v, list | dict)]
    images = "".join(figure_html(f) for f in figures)
    return (f'<details class="card {family_class}" id="{_e(card_id(model, position))}" '
            f'data-model="{_e(model)}">\n'
            f'<summary><span class="name">{_e(model)}</span> '
            f'<span class="family">{_e(family)}</span></summary>\n'
            f'<p>Family: <strong>{_e(family)}</strong></p>\n<div class="card-body">\n'
            f'<div class="part"><h4>Training curve</h4>\n'
            f"{training_curve(fit.get('val_accuracy'))}</div>\n"
            + (_pairs("Config", [(str(k), _value(v)) for k, v in config.items()])
               or '<p class="part">No config recorded in <code>run.json</code>.</p>\n')
            + _pairs("Fit", facts) + _numbers(model, boards) + "</div>\n"
            + (f'<h4>Figures</h4>\n<div class="figures">\n{images}</div>\n' if images else "")
            + "</details>\n")
