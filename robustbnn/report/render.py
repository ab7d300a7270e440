"""Render every report of one or more run folders from their stored results alone.

``robustbnn bench`` calls :func:`render` on its own output folder, and ``robustbnn report``
calls it on stored folders, so both write the same bytes. No model code runs here.

Outputs in ``out_dir``: ``leaderboard.md`` / ``.csv`` / ``.json`` / ``.html``, the detail
tables ``ood.md``, ``ood.csv`` and ``attack.md``, and ``figures/*.png``. Figures drawn by an
earlier render that no longer apply are removed, so a folder never mixes two runs' figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from robustbnn.errors import UserError
from robustbnn.report.attack_detail import attack_markdown
from robustbnn.report.detail import ood_frame, ood_markdown
from robustbnn.report.figures import write_figures
from robustbnn.report.html import to_html
from robustbnn.report.leaderboard import Leaderboard, leaderboard, to_csv, to_json, to_markdown
from robustbnn.report.legend import legend
from robustbnn.report.schema import COLUMNS
from robustbnn.report.store import read_results, write_text_atomic

__all__ = ["RunFolderError", "load_runs", "render"]

TITLE = "robustbnn leaderboard"


class RunFolderError(UserError):
    """A run folder that is missing, or whose results cannot be read."""


def _load_one(run_dir: Path) -> tuple[pd.DataFrame, dict]:
    hint = f"run `robustbnn bench --out {run_dir}` to (re)create it"
    if not (run_dir / "results.csv").is_file():
        raise RunFolderError(f"{run_dir}: no results.csv here (not a run folder); {hint}")
    try:
        results = read_results(run_dir)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise RunFolderError(f"{run_dir}/results.csv is corrupt ({err}); {hint}") from None
    if list(results.columns) != list(COLUMNS):
        raise RunFolderError(f"{run_dir}/results.csv has columns {list(results.columns)}, "
                             f"expected {list(COLUMNS)}; {hint}")
    if results.empty:
        raise RunFolderError(f"{run_dir}/results.csv holds no results; {hint}")
    try:
        run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"{run_dir}: no run.json (provenance) beside results.csv; "
                             f"{hint}") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise RunFolderError(f"{run_dir}/run.json is corrupt ({err}); {hint}") from None
    return results, run


def load_runs(run_dirs: list[Path]) -> tuple[pd.DataFrame, list[dict]]:
    """The combined results of ``run_dirs`` (column ``run`` = position) and their run.json.

    Raises:
        RunFolderError: For a missing folder, a missing/corrupt ``results.csv`` or
            ``run.json``.
    """
    frames, runs = [], []
    for i, run_dir in enumerate(run_dirs):
        results, run = _load_one(Path(run_dir))
        frames.append(results.assign(run=i))
        runs.append(run)
    return pd.concat(frames, ignore_index=True), runs


def _prune(folder: Path, keep: list[Path]) -> None:
    """Remove PNGs in ``folder`` that this render did not write (stale runs' figures)."""
    if folder.is_dir():
        for path in folder.glob("*.png"):
            if path not in keep:
                path.unlink()


def render(run_dirs: list[Path], out_dir: Path, *, sort: str | None = None,
           figures: bool = True) -> Leaderboard:
    """Write every report of ``run_dirs`` into ``out_dir``; return the leaderboard.

    Args:
        run_dirs: Run folders written by ``robustbnn bench`` (several = mean ± std).
        out_dir: Where the reports go (may be the single run folder itself).
        sort: Leaderboard column key to sort by (default clean accuracy).
        figures: Also draw ``figures/*.png`` (OOD figures from the first run's scores).

    Raises:
        RunFolderError: See :func:`load_runs`.
        ConfigError: For an unknown ``sort`` column.
    """
    out_dir = Path(out_dir)
    results, runs = load_runs([Path(d) for d in run_dirs])
    board = leaderboard(results, sort=sort)
    items = legend(results, runs)
    written: list[Path] = []
    if figures:
        written = write_figures(results, Path(run_dirs[0]), out_dir=out_dir)
        _prune(out_dir / "figures", written)
    detail = ood_frame(results)
    details = []
    if len(detail):
        write_text_atomic(out_dir / "ood.md", ood_markdown(detail))
        write_text_atomic(out_dir / "ood.csv", detail.to_csv(index=False, float_format="%.10g",
                                                             lineterminator="\n"))
        details = ["ood.md", "ood.csv"]
    attacks = attack_markdown(results)
    if attacks is not None:
        write_text_atomic(out_dir / "attack.md", attacks)
        details.append("attack.md")
    write_text_atomic(out_dir / "leaderboard.md", to_markdown(board, items, title=TITLE))
    write_text_atomic(out_dir / "leaderboard.csv", to_csv(board))
    write_text_atomic(out_dir / "leaderboard.json", to_json(board, items, title=TITLE))
    links = [p.relative_to(out_dir).as_posix() for p in written]
    write_text_atomic(out_dir / "leaderboard.html",
                      to_html(board, items, title=TITLE, figures=links, details=details))
    return board
