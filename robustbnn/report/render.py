"""Render every report of one or more run folders from their stored results alone.

``robustbnn bench`` calls :func:`render` on its own output folder, and ``robustbnn report``
calls it on stored folders, so both write the same bytes. No model code runs here.

Outputs in ``out_dir``:

* ``leaderboard.md`` / ``.csv`` / ``.json``: the headline leaderboard, at most ten columns
  (:mod:`robustbnn.report.headline`), sorted by the honest robust accuracy by default;
* ``leaderboard.html``: one self-contained page with the headline, the aspect tables, a card
  per model and every figure (:func:`robustbnn.report.html.to_html`);
* ``table_<aspect>.md`` / ``.csv``: every other number, one table per aspect (attacks,
  robustness, ood, shift, sanity; :mod:`robustbnn.report.aspects`). The ``table_`` prefix
  keeps them apart from the detail tables below, which they link;
* ``all_columns.csv`` / ``.json``: every column in one table for machines (the format
  ``leaderboard.csv`` / ``.json`` had before the headline); the CI regression check compares
  it (:mod:`robustbnn.report.regression`);
* ``all_columns_seeds.json``, for several runs only: every numeric column's per-seed values,
  the seed spread a new run is checked against (:mod:`robustbnn.report.spread`);
* the detail tables ``ood.md``, ``ood.csv``, ``attack.md`` and ``shift.md``, and
  ``figures/*.png`` / ``.svg``.

The renderer lists every file it wrote in a manifest, ``out_dir/.robustbnn-render.json``; the next
render removes the files of that list it no longer writes (a figure of a model no longer in the
results, ``ood.md`` of a run without OOD rows), so a folder never mixes two runs' reports. A
file not in the manifest (a user's own figure, the results themselves) is never deleted, and
nothing is written or deleted through a symbolic link: a linked ``figures`` is refused by
name. A run folder takes only the reports of its own configuration and seed: rendering another
run into it is refused.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path, PurePosixPath

import pandas as pd

from robustbnn.report.aspects import aspect_boards, aspect_file, aspect_links, aspect_markdown
from robustbnn.report.attack_detail import attack_markdown
from robustbnn.report.canvas import svg_twin
from robustbnn.report.column import ASPECTS
from robustbnn.report.combine import check_seeds_of_one_configuration
from robustbnn.report.detail import ood_frame, ood_markdown
from robustbnn.report.families import model_families
from robustbnn.report.faults import ood_faults
from robustbnn.report.fidelity import fidelity_figure, fidelity_markdown
from robustbnn.report.figures import write_figures
from robustbnn.report.headline import headline, headline_legend
from robustbnn.report.html import to_html
from robustbnn.report.html_page import HtmlPage
from robustbnn.report.leaderboard import Leaderboard, leaderboard, to_csv, to_json, to_markdown
from robustbnn.report.legend import aspect_legend, legend_items
from robustbnn.report.partial import partial_html, partial_json, partial_markdown
from robustbnn.report.ranking import ranking_legend
from robustbnn.report.refused import (
    refused_csv,
    refused_html,
    refused_json,
    refused_markdown,
    refused_models,
)
from robustbnn.report.separable import groups_legend
from robustbnn.report.shift_detail import shift_markdown
from robustbnn.report.spread import SEEDS_FILE, seed_values, seeds_json
from robustbnn.results.examples import group_key, read_run_examples
from robustbnn.results.manifest import MANIFEST, read_manifest
from robustbnn.results.paths import link_error, linked_part, refuse_links
from robustbnn.results.store import RunFolderError, read_results, write_text_atomic

__all__ = ["MANIFEST", "RunFolderError", "load_runs", "render"]

logger = logging.getLogger(__name__)

TITLE = "robustbnn leaderboard"
# A folder holding one of these holds a run of its own (robustbnn bench's output).
RUN_MARKERS = ("results.jsonl", "run.json", "cells/identity.json")
# The run.json fields that make two runs one configuration and seed.
IDENTITY_FIELDS = ("seed", "suite", "device", "config", "data")


def _load_one(run_dir: Path) -> tuple[pd.DataFrame, dict]:
    try:  # every row is checked against the run's record (its errors are told below)
        known = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        known = None
    results = read_results(run_dir, run=known if isinstance(known, dict)
                           and _run_json_problem(known) is None else None)
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


def with_examples(results: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """``results`` of one run with column ``examples``: per row, the per-example parts behind
    its value (:mod:`robustbnn.results.examples`), or None (a row without them, or a run of
    an older robustbnn)."""
    found = read_run_examples(run_dir, results["model"])
    keys = [group_key(r) for r in results[["task", "dataset", "setting", "measure"]]
            .to_dict("records")]
    parts = [found[m].get(k) for m, k in zip(results["model"], keys, strict=True)]
    return results.assign(examples=pd.Series(parts, index=results.index, dtype=object))


def load_runs(run_dirs: list[Path]) -> tuple[pd.DataFrame, list[dict]]:
    """The combined results of ``run_dirs`` (column ``run`` = position) and their run.json,
    with each row's examples (:func:`with_examples`).

    Raises:
        RunFolderError: For a missing folder, a missing/corrupt ``results.jsonl`` or
            ``run.json``.
        CombineError: When several runs are not distinct seeds of one configuration
            (:mod:`robustbnn.report.combine`).
    """
    frames, runs = [], []
    for i, run_dir in enumerate(run_dirs):
        results, run = _load_one(Path(run_dir))
        frames.append(with_examples(results, Path(run_dir)).assign(run=i))
        runs.append(run)
    check_seeds_of_one_configuration(runs, [Path(d) for d in run_dirs])
    return pd.concat(frames, ignore_index=True), runs


def _refuse_other_run(out_dir: Path, run_dirs: list[Path], runs: list[dict]) -> None:
    """Refuse to render into a run folder of another configuration than the runs rendered
    (another seed, suite, device, config or data): its reports would sit beside results they
    do not describe.

    Raises:
        RunFolderError: Naming the folder and how it differs.
    """
    marker = next((m for m in RUN_MARKERS if os.path.lexists(out_dir / m)), None)
    if marker is None:
        return
    try:
        if len(run_dirs) == 1 and os.path.samefile(run_dirs[0], out_dir):
            return
    except OSError:
        pass
    try:
        theirs = json.loads((out_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        theirs = None
    what = "these runs" if len(run_dirs) > 1 else f"the run {run_dirs[0]}"
    for run in runs:
        if not isinstance(theirs, dict):
            differs = f"{marker}, no readable run.json"
        else:
            fields = [k for k in IDENTITY_FIELDS if run.get(k) != theirs.get(k)]
            if not fields:
                continue
            field = fields[0]
            differs = (f"of another {field}: {_short(theirs.get(field))}, not "
                       f"{_short(run.get(field))}")
        raise RunFolderError(
            f"--out {out_dir} holds a run of its own ({differs}), and its reports must describe "
            f"its results; render the reports of {what} into another folder (--out NEW_DIR)")


def _short(value: object) -> str:
    """A value for a one-line message, at most 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _replace_manifest(out_dir: Path, written: list[str], keep: list[str]) -> None:
    """Remove the previous render's files that this one did not write; record this render's."""
    previous = read_manifest(out_dir)
    mine = set(written) | set(keep)
    for entry in previous:
        if entry not in mine:
            link = linked_part(out_dir, str(PurePosixPath(entry).parent))
            if link is not None:  # checked before any work; a link made since is refused too
                raise link_error(link)
            (out_dir / entry).unlink(missing_ok=True)
            logger.info("removed %s (written by an earlier render, not by this one)",
                        out_dir / entry)
    files = sorted(mine)
    write_text_atomic(out_dir / MANIFEST, json.dumps(
        {"about": "files written by robustbnn report; the next render removes the ones it "
                  "no longer writes, and nothing else", "files": files}, indent=2) + "\n")


def render(run_dirs: list[Path], out_dir: Path, *, sort: str | None = None,
           figures: bool = True) -> Leaderboard:
    """Write every report of ``run_dirs`` into ``out_dir``; return the full leaderboard.

    Args:
        run_dirs: Run folders written by ``robustbnn bench`` (several = mean ± std).
        out_dir: Where the reports go (may be the single run folder itself).
        sort: Column key (of ``all_columns.csv``) to sort every table by (default: the honest
            robust accuracy, or clean accuracy for a run without it).
        figures: Also draw ``figures/*.png`` (OOD figures from the first run's scores);
            without, the figures of an earlier render are left as they are.

    Raises:
        RunFolderError: See :func:`load_runs`.
        ConfigError: For an unknown ``sort`` column.
        MissingKnobError: When a task's rows lack a knob a leaderboard column needs.
        UnsafeNameError: For a model or task name that cannot name a file in ``out_dir``.
    """
    out_dir = Path(out_dir)
    refuse_links(out_dir, ("figures", MANIFEST))  # never write or delete through a link
    results, runs = load_runs([Path(d) for d in run_dirs])
    _refuse_other_run(out_dir, [Path(d) for d in run_dirs], runs)
    board = leaderboard(results, sort=sort)
    families = model_families(runs, board.table.index)
    head = headline(board, families)
    aspects = aspect_boards(board)
    tagged = legend_items(results, runs)
    items = [item for _, item in tagged]
    written: list[Path] = []
    keep: list[str] = []
    if figures:
        written += write_figures(results, Path(run_dirs[0]), out_dir=out_dir, families=families)
    else:
        keep = [f for f in read_manifest(out_dir)
                if f.startswith("figures/") and (out_dir / f).is_file()]
    links = [p.relative_to(out_dir).as_posix() for p in written]
    detail = ood_frame(results, runs)
    details = []
    if len(detail):
        write_text_atomic(out_dir / "ood.md", ood_markdown(detail, ood_faults(results)))
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
    fidelity = fidelity_markdown(board, families)  # a run with fidelity cells (docs/fidelity.md)
    if fidelity is not None:
        write_text_atomic(out_dir / "fidelity.md", fidelity)
        details.append("fidelity.md")
        if figures:
            drawn = fidelity_figure(board, out_dir / "figures" / "fidelity.png")
            if drawn is not None:
                written += [drawn, svg_twin(drawn)]
                links = [p.relative_to(out_dir).as_posix() for p in written]
    tables = []
    for aspect, table in aspects.items():  # every number, by aspect
        name = aspect_file(aspect)
        legend = aspect_legend(tagged, aspect)
        if board.ranking is not None and any(c.key == board.sort for c in table.columns):
            legend = [ranking_legend(board.ranking, title=board.column(board.sort).title),
                      *legend]
        elif board.groups and any(c.key == board.sort for c in table.columns):
            legend = [groups_legend(board.groups, title=board.column(board.sort).title,
                                    seeds=board.seeds), *legend]
        write_text_atomic(out_dir / f"{name}.md", partial_markdown(aspect_markdown(
            aspect, table, legend, title=TITLE, details=details), runs))
        write_text_atomic(out_dir / f"{name}.csv", to_csv(table))
        tables += [f"{name}.md", f"{name}.csv"]
    refused = refused_models(runs)  # models the contract refused: listed under the table
    head_items = [*headline_legend(head), *items]
    # A partial run (failed cells) says so at the top of each leaderboard (report.partial).
    write_text_atomic(out_dir / "leaderboard.md", partial_markdown(
        to_markdown(head, head_items, title=TITLE, after_table=aspect_links(list(aspects)))
        + refused_markdown(refused), runs))
    write_text_atomic(out_dir / "leaderboard.csv", refused_csv(to_csv(head), refused))
    write_text_atomic(out_dir / "leaderboard.json", partial_json(
        refused_json(to_json(head, head_items, title=TITLE), refused), runs))
    write_text_atomic(out_dir / "all_columns.csv", refused_csv(to_csv(board), refused))
    write_text_atomic(out_dir / "all_columns.json", partial_json(
        refused_json(to_json(board, items, title=TITLE), refused), runs))
    seeds = [SEEDS_FILE] if board.runs > 1 else []  # one run has no spread
    if seeds:
        write_text_atomic(out_dir / SEEDS_FILE, seeds_json(seed_values(results)))
    models = {m: e for run in reversed(runs) for m, e in (run.get("models") or {}).items()}
    page = HtmlPage(title=TITLE, headline=head,
                    aspects={ASPECTS[a]: t for a, t in aspects.items()}, legend=head_items,
                    figures=[*written, *(out_dir / f for f in keep)], families=families,
                    models=models, details=[*tables, "all_columns.csv", "all_columns.json",
                                            *seeds, *details],
                    after_table=refused_html(refused))
    write_text_atomic(out_dir / "leaderboard.html", partial_html(to_html(page), runs))
    leaderboards = [f"leaderboard.{ext}" for ext in ("md", "csv", "json", "html")]
    _replace_manifest(out_dir, [*links, *details, *tables, *leaderboards,
                                "all_columns.csv", "all_columns.json", *seeds], keep)
    return board
