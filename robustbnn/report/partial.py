"""The notice of a partial run: cells that failed, so the leaderboard misses numbers.

A run whose cells failed still writes its results and reports (the finished cells are kept),
and ``run.json`` records the failures under ``cells``: ``{"failed": {label: error},
"skipped": {label: reason}}``. The leaderboard says so at its top, naming the failed cells:
a paragraph under the title of ``leaderboard.md`` and ``.html``, and a ``partial`` object in
``leaderboard.json``. ``leaderboard.csv`` is a table of numbers and stays one. Cells of models
the model contract refused are left to their own section (:mod:`robustbnn.report.refused`).
A run without failures renders byte for byte as before.

Example:
    >>> run = {"cells": {"failed": {"train m": "RuntimeError: boom"}, "skipped": {"clean m": ""}}}
    >>> partial_cells([run])
    {'failed': [{'cell': 'train m', 'error': 'RuntimeError: boom'}], 'skipped': 1}
"""

from __future__ import annotations

import html
import json
from typing import Any

from robustbnn.report.markdown import escape

__all__ = ["partial_cells", "partial_html", "partial_json", "partial_markdown"]

HINT = ("rerunning the same `robustbnn bench` command retries only what did not finish, and "
        "`run.json` holds every error")


def partial_cells(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The failed cells of every run (``{"failed": [{"cell", "error"}], "skipped": n}``), or
    None for complete runs. With several runs, a cell's label names its run's seed."""
    failed: list[dict[str, str]] = []
    skipped = 0
    for run in runs:
        cells = run.get("cells") if isinstance(run, dict) else None
        if not isinstance(cells, dict):
            continue
        refused = run.get("refused") if isinstance(run.get("refused"), dict) else {}

        def of_refused(label: str, refused: dict = refused) -> bool:
            return any(str(m) in label.split() for m in refused)

        where = f" (seed {run.get('seed')})" if len(runs) > 1 else ""
        for label, error in (cells.get("failed") or {}).items():
            if not of_refused(str(label)):
                failed.append({"cell": f"{label}{where}", "error": str(error)})
        skipped += sum(not of_refused(str(label)) for label in (cells.get("skipped") or {}))
    if not failed and not skipped:
        return None
    return {"failed": failed, "skipped": skipped}


def _sentence(partial: dict[str, Any], cell: Any, hint: str) -> str:
    """The notice; ``cell`` formats one failed cell, ``hint`` is the closing sentence."""
    n = len(partial["failed"])
    names = "; ".join(cell(f) for f in partial["failed"])
    skipped = (f"; {partial['skipped']} cell(s) depending on {'it' if n == 1 else 'them'} did "
               "not run" if partial["skipped"] else "")
    return (f"Partial run: {n} cell(s) failed, so numbers are missing below: {names}{skipped}. "
            f"{hint[0].upper()}{hint[1:]}.")


def partial_markdown(text: str, runs: list[dict[str, Any]]) -> str:
    """``leaderboard.md`` with the notice under its title (unchanged for complete runs)."""
    partial = partial_cells(runs)
    if partial is None:
        return text
    notice = _sentence(partial, lambda f: f"{escape(f['cell'])} ({escape(f['error'])})", HINT)
    title, sep, rest = text.partition("\n\n")
    return f"{title}{sep}**{notice}**\n\n{rest}" if sep else f"**{notice}**\n\n{text}"


def partial_html(text: str, runs: list[dict[str, Any]]) -> str:
    """``leaderboard.html`` with the notice under its ``<h1>`` (unchanged for complete runs)."""
    partial = partial_cells(runs)
    if partial is None:
        return text
    hint = HINT.replace("`robustbnn bench`", "<code>robustbnn bench</code>").replace(
        "`run.json`", "<code>run.json</code>")
    notice = _sentence(partial, lambda f: f"<code>{html.escape(f['cell'])}</code> "
                                          f"({html.escape(f['error'])})", hint)
    block = f'<p class="partial"><strong>{notice}</strong></p>\n'
    head, sep, rest = text.partition("</h1>\n")
    return f"{head}{sep}{block}{rest}" if sep else block + text


def partial_json(text: str, runs: list[dict[str, Any]]) -> str:
    """``leaderboard.json`` with a ``partial`` object (unchanged for complete runs)."""
    partial = partial_cells(runs)
    if partial is None:
        return text
    payload = json.loads(text)
    payload["partial"] = partial
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
