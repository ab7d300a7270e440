"""Render every report of one or more run folders from their stored results alone.

``robustbnn bench`` calls :func:`render` on its own output folder, and ``robustbnn report``
calls it on stored folders, so both write the same bytes. No model code runs here.

Outputs in ``out_dir``: ``leaderboard.md`` / ``.csv`` / ``.json`` / ``.html``, the detail
tables ``ood.md``, ``ood.csv``, ``attack.md`` and ``shift.md``, and ``figures/*.png``. The
renderer lists every file it wrote in a manifest, ``out_dir/.robustbnn-render.json``; the next
render removes the files of that list it no longer writes (a figure of a model no longer in the
results, ``ood.md`` of a run without OOD rows), so a folder never mixes two runs' reports. A
file not in the manifest (a user's own figure, the results themselves) is never deleted.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path, PurePosixPath

import pandas as pd

from robustbnn.report.attack_detail import attack_markdown
from robustbnn.report.combine import check_seeds_of_one_configuration
from robustbnn.report.detail import ood_frame, ood_markdown
from robustbnn.report.figures import write_figures
from robustbnn.report.html import to_html
from robustbnn.report.leaderboard import Leaderboard, leaderboard, to_csv, to_json, to_markdown
from robustbnn.report.legend import legend
from robustbnn.report.refused import (
    refused_csv,
    refused_html,
    refused_json,
    refused_markdown,
    refused_models,
)
from robustbnn.report.shift_detail import shift_markdown
from robustbnn.report.store import RunFolderError, read_results, write_text_atomic

__all__ = ["MANIFEST", "RunFolderError", "load_runs", "render"]

logger = logging.getLogger(__name__)

TITLE = "robustbnn leaderboard"
MANIFEST = ".robustbnn-render.json"
# What a render can write: only such files are ever removed, whatever a manifest says.
OURS = frozenset({"leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html",
                  "ood.md", "ood.csv", "attack.md", "shift.md"})


def _load_one(run_dir: Path) -> tuple[pd.DataFrame, dict]:
    results = read_results(run_dir)
    hint = f"rerun robustbnn bench (`robustbnn bench --out {run_dir}`) to recreate it"
    try:
        run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"{run_dir}: no run.json (provenance) beside results.jsonl; "
                             f"{hint}") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise RunFolderError(f"{run_dir}/run.json is corrupt ({err}); {hint}") from None
    problem = _run_json_problem(run)
    if problem:
        raise RunFolderError(f"{run_dir}/run.json is corrupt ({problem}); {hint}")
    return results, run


# The run.json fields the reports read, and the JSON type each must have when present.
RUN_FIELDS = {"seed": int, "config": dict, "models": dict, "data": dict, "device": str,
              "suite": str, "refused": dict}


def _run_json_problem(run: object) -> str | None:
    """What is wrong with a parsed ``run.json`` for the reports, or None."""
    if not isinstance(run, dict):
        return f"expected a JSON object, got {type(run).__name__} {str(run)[:40]}"
    for field, kind in RUN_FIELDS.items():
        value = run.get(field)
        if value is None:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            return (f"field {field!r} must be a JSON {'integer' if kind is int else kind.__name__}"
                    f", got {value!r}"[:200])
    if any(not isinstance(m, dict) for m in run.get("models", {}).values()):
        return "field 'models' must map each model name to an object"
    return None


def load_runs(run_dirs: list[Path]) -> tuple[pd.DataFrame, list[dict]]:
    """The combined results of ``run_dirs`` (column ``run`` = position) and their run.json.

    Raises:
        RunFolderError: For a missing folder, a missing/corrupt ``results.jsonl`` or
            ``run.json``.
        CombineError: When several runs are not distinct seeds of one configuration
            (:mod:`robustbnn.report.combine`).
    """
    frames, runs = [], []
    for i, run_dir in enumerate(run_dirs):
        results, run = _load_one(Path(run_dir))
        frames.append(results.assign(run=i))
        runs.append(run)
    check_seeds_of_one_configuration(runs, [Path(d) for d in run_dirs])
    return pd.concat(frames, ignore_index=True), runs


def _ours(entry: object) -> bool:
    """Whether a manifest entry names a file a render writes (a path relative to the folder)."""
    if not isinstance(entry, str):
        return False
    path = PurePosixPath(entry)
    if entry in OURS:
        return True
    return (len(path.parts) == 2 and path.parts[0] == "figures" and path.suffix == ".png"
            and path.name not in (".", "..") and "\\" not in entry)


def _read_manifest(out_dir: Path) -> list[str]:
    """The files the previous render wrote (none when there is no readable manifest)."""
    path = out_dir / MANIFEST
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
        logger.warning("%s is unreadable (%s); no earlier report is removed", path, err)
        return []
    if not isinstance(files, list):
        logger.warning("%s lists no files; no earlier report is removed", path)
        return []
    return [f for f in files if _ours(f)]


def _replace_manifest(out_dir: Path, written: list[str], keep: list[str]) -> None:
    """Remove the previous render's files that this one did not write; record this render's."""
    previous = _read_manifest(out_dir)
    mine = set(written) | set(keep)
    for entry in previous:
        if entry not in mine:
            (out_dir / entry).unlink(missing_ok=True)
            logger.info("removed %s (written by an earlier render, not by this one)",
                        out_dir / entry)
    files = sorted(mine)
    write_text_atomic(out_dir / MANIFEST, json.dumps(
        {"about": "files written by robustbnn report; the next render removes the ones it "
                  "no longer writes, and nothing else", "files": files}, indent=2) + "\n")


def render(run_dirs: list[Path], out_dir: Path, *, sort: str | None = None,
           figures: bool = True) -> Leaderboard:
    """Write every report of ``run_dirs`` into ``out_dir``; return the leaderboard.

    Args:
        run_dirs: Run folders written by ``robustbnn bench`` (several = mean ± std).
        out_dir: Where the reports go (may be the single run folder itself).
        sort: Leaderboard column key to sort by (default clean accuracy).
        figures: Also draw ``figures/*.png`` (OOD figures from the first run's scores);
            without, the figures of an earlier render are left as they are.

    Raises:
        RunFolderError: See :func:`load_runs`.
        ConfigError: For an unknown ``sort`` column.
        MissingKnobError: When a task's rows lack a knob a leaderboard column needs.
        UnsafeNameError: For a model or task name that cannot name a file in ``out_dir``.
    """
    out_dir = Path(out_dir)
    results, runs = load_runs([Path(d) for d in run_dirs])
    board = leaderboard(results, sort=sort)
    items = legend(results, runs)
    written: list[Path] = []
    keep: list[str] = []
    if figures:
        written += write_figures(results, Path(run_dirs[0]), out_dir=out_dir)
    else:
        keep = [f for f in _read_manifest(out_dir)
                if f.startswith("figures/") and (out_dir / f).is_file()]
    links = [p.relative_to(out_dir).as_posix() for p in written]
    detail = ood_frame(results, runs)
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
    shifts = shift_markdown(results)
    if shifts is not None:
        write_text_atomic(out_dir / "shift.md", shifts)
        details.append("shift.md")
    refused = refused_models(runs)  # models the contract refused: listed under the table
    write_text_atomic(out_dir / "leaderboard.md",
                      to_markdown(board, items, title=TITLE) + refused_markdown(refused))
    write_text_atomic(out_dir / "leaderboard.csv", refused_csv(to_csv(board), refused))
    write_text_atomic(out_dir / "leaderboard.json",
                      refused_json(to_json(board, items, title=TITLE), refused))
    write_text_atomic(out_dir / "leaderboard.html",
                      to_html(board, items, title=TITLE, figures=links, details=details,
                              after_table=refused_html(refused)))
    leaderboards = [f"leaderboard.{ext}" for ext in ("md", "csv", "json", "html")]
    _replace_manifest(out_dir, [*links, *details, *leaderboards], keep)
    return board
