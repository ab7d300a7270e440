"""The models the model contract refused, as the leaderboard lists them under its table.

``robustbnn bench`` runs the contract's cheap clauses before a model's first cell
(:mod:`robustbnn.run.tasks.contract`); a model that breaks one gets no numbers, and its run's
``run.json`` records it under ``refused``: ``{model: {"clauses": [...], "reason": "..."}}``.
A rerun rewrites ``run.json``, so a model fixed since is no longer listed. Every leaderboard
format shows the refusals: a section of ``leaderboard.md`` and ``.html``, a ``refused`` list in
``leaderboard.json`` and rows with a ``refused`` column in ``leaderboard.csv``. A run without
refusals renders byte for byte as before.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd

from robustbnn.report.escape import escape
from robustbnn.report.markdown import md_table

__all__ = ["TITLE", "refused_csv", "refused_html", "refused_json", "refused_markdown",
           "refused_models"]

TITLE = "Refused by the model contract"


def refused_models(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The refused models of every run, first run's reason first: ``{model: {"clauses",
    "reason"}}`` (a model refused in several runs is listed once)."""
    out: dict[str, dict[str, Any]] = {}
    for run in runs:
        refused = run.get("refused") or {}
        if not isinstance(refused, dict):
            continue
        for model, entry in refused.items():
            if isinstance(entry, dict) and model not in out:
                clauses = [str(c) for c in entry.get("clauses") or []]
                out[str(model)] = {"clauses": clauses, "reason": str(entry.get("reason", ""))}
    return out


def _clauses(entry: dict[str, Any]) -> str:
    return ", ".join(entry["clauses"]) or "?"


def refused_markdown(refused: dict[str, dict[str, Any]]) -> str:
    """The Markdown section (empty without refusals)."""
    if not refused:
        return ""
    rows = [[model, _clauses(e), e["reason"]] for model, e in refused.items()]  # md_table escapes
    return (f"\n## {TITLE}\n\nThese models broke a clause of the model contract before their "
            "first cell and got no numbers (`robustbnn check MODEL` runs every clause).\n\n"
            + md_table(["model", "clause", "reason"], rows, [False, False, False]))


def refused_html(refused: dict[str, dict[str, Any]]) -> str:
    """The HTML section (empty without refusals)."""
    if not refused:
        return ""
    rows = "".join(f"<tr><td>{escape(m, to='html')}</td><td>{escape(_clauses(e), to='html')}"
                   f"</td><td>{escape(e['reason'], to='html')}</td></tr>\n"
                   for m, e in refused.items())
    return (f'<h2>{TITLE}</h2>\n<p>These models broke a clause of the model contract before '
            "their first cell and got no numbers (<code>robustbnn check MODEL</code> runs every "
            'clause).</p>\n<table id="refused">\n<thead><tr><th>model</th><th>clause</th>'
            f"<th>reason</th></tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n")


def refused_json(text: str, refused: dict[str, dict[str, Any]]) -> str:
    """``leaderboard.json`` with a ``refused`` list (unchanged without refusals)."""
    if not refused:
        return text
    payload = json.loads(text)
    payload["refused"] = [{"model": m, **e} for m, e in refused.items()]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def refused_csv(text: str, refused: dict[str, dict[str, Any]]) -> str:
    """``leaderboard.csv`` with a row per refused model and a ``refused`` column (clauses:
    reason; empty for scored models); unchanged without refusals."""
    if not refused:
        return text
    frame = pd.read_csv(io.StringIO(text), keep_default_na=False, dtype=str)
    extra = pd.DataFrame([{"model": m, "refused": f"{_clauses(e)}: {e['reason']}"}
                          for m, e in refused.items()])
    frame = pd.concat([frame.assign(refused=""), extra], ignore_index=True).fillna("")
    return frame.to_csv(index=False, lineterminator="\n")
