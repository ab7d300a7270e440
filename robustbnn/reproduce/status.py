"""Each experiment's status, read from its committed reports alone: never run, or what ran.

A reports folder (``reports/reproductions/``, its ``full/`` subfolder where the ``full``
budget's reports go, and folders inside ``full/`` for partial runs kept apart) holds
``NAME.csv`` and ``NAME.md`` and, from the writer that records it on, ``NAME.json``
(:func:`robustbnn.reproduce.report.write_report`): the budget, variant, seeds, date and runs
of the invocation that wrote the report. For a report written before the sidecar, the
Markdown header gives the budget, variant, seeds and the runs not run, and the date is
unknown. The largest |Δ| comes from the CSV, over the cells where Δ is shown: the published
value held under our protocol. Nothing here runs an experiment.

``python -m robustbnn.reproduce.status --write docs/reproducing.md`` regenerates the table
between the page's status markers; ``--check`` exits 1 when the page is stale.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import re
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from robustbnn._atomic import write_text_atomic
from robustbnn.errors import PathError
from robustbnn.report.markdown import md_table
from robustbnn.reproduce.experiment import Experiment

__all__ = ["BEGIN", "END", "Delta", "ReportStatus", "experiment_status", "largest_delta",
           "list_text", "main", "markdown_table", "read_report", "status_line", "update_page"]

BEGIN = "<!-- status:begin -->"
END = "<!-- status:end -->"
FULL = "full"  # the subfolder of a reports folder where the full budget's reports go
WIDTH = 120  # --list stays readable in a terminal this wide

# The header write_report has written since the first committed reports.
_HEADER = re.compile(r"Budget \*\*(?P<budget>[^*]+)\*\*, variant \*\*(?P<variant>[^*]+)\*\*"
                     r".*?, seeds (?P<seeds>\[[^\]]*\])", re.S)
_NOT_RUN = re.compile(r"Ran only the runs \[[^\]]*\]; not run: (?P<runs>\[[^\]]*\])")
_MINUTES = re.compile(r"the cells took (?P<min>[0-9.]+) min")


@dataclasses.dataclass(frozen=True)
class Delta:
    """One table cell's Δ = ours − published, under the published protocol.

    Attributes:
        value: Δ in the cell's unit.
        row: The paper's row label.
        column: The paper's column label.
        unit: ``percent`` (points), ``bits`` or ``count``.
    """

    value: float
    row: str
    column: str
    unit: str


@dataclasses.dataclass(frozen=True)
class ReportStatus:
    """What one committed report says ran.

    Attributes:
        folder: Where the report lies, relative to the reports folder (``""``, ``"full"`` or
            ``"full/SUB"``).
        budget: ``ci`` or ``full``.
        variant: The variant that ran.
        seeds: The seeds that ran.
        date: ``YYYY-MM-DD`` the report was written, or ``""`` when it did not record it.
        not_run: The experiment's runs at that budget that did not run (a partial report).
        largest: The largest |Δ| under the published protocol, or None where no cell has Δ.
        compared: How many published numbers have Δ (held under our protocol).
        published: How many cells have a published number.
        minutes: The cells' compute time in minutes, where the report states it.
    """

    folder: str
    budget: str
    variant: str
    seeds: tuple[int, ...]
    date: str
    not_run: tuple[str, ...]
    largest: Delta | None
    compared: int
    published: int
    minutes: float | None = None

    @property
    def partial(self) -> bool:
        """Whether some of the experiment's runs did not run."""
        return bool(self.not_run)


def largest_delta(frame: pd.DataFrame) -> Delta | None:
    """The cell with the largest |Δ| of a report CSV (the first one on a tie), or None.

    Args:
        frame: A report CSV as :func:`pandas.read_csv` reads it (``row``, ``column``,
            ``unit``, ``delta``; Δ is empty where the published value held under another
            protocol or the paper prints none).
    """
    if "delta" not in frame or not frame["delta"].notna().any():
        return None
    line = frame.loc[frame["delta"].abs().idxmax()]
    return Delta(float(line["delta"]), str(line["row"]), str(line["column"]), str(line["unit"]))


def _sidecar(path: Path) -> dict[str, Any]:
    """The report's JSON sidecar, or {} when absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _from_markdown(text: str) -> dict[str, Any]:
    """Budget, variant, seeds, runs not run and minutes from a report's header, where stated."""
    out: dict[str, Any] = {}
    head = _HEADER.search(text)
    if head:
        out |= {"budget": head["budget"], "variant": head["variant"],
                "seeds": ast.literal_eval(head["seeds"])}
    skipped = _NOT_RUN.search(text)
    out["runs_not_run"] = ast.literal_eval(skipped["runs"]) if skipped else []
    minutes = _MINUTES.search(text)
    if minutes:
        out["compute_seconds"] = 60 * float(minutes["min"])
    return out


def _from_csv(frame: pd.DataFrame) -> dict[str, Any]:
    """Budget, variant, seeds and runs without a single number, from a report CSV."""
    out: dict[str, Any] = {}
    for key in ("budget", "variant"):
        if key in frame and len(frame):
            out[key] = str(frame[key].iloc[0])
    out["seeds"] = sorted(int(c[4:]) for c in frame.columns if re.fullmatch(r"seed\d+", c))
    if "run" in frame and "seeds" in frame:
        ran = frame.groupby("run", sort=False)["seeds"].max()
        out["runs_not_run"] = [str(r) for r, n in ran.items() if n == 0]
    return out


def read_report(folder: Path, name: str, *, label: str = "") -> ReportStatus | None:
    """The status of report ``name`` in ``folder``, or None when neither its CSV nor its
    Markdown is there (never run).

    Each field comes from the JSON sidecar where it agrees with the CSV's budget and variant
    (a sidecar left by an earlier invocation does not), else from the Markdown header, else
    from the CSV.

    Args:
        folder: The reports folder.
        name: The experiment.
        label: The folder's name in the status (``""``, ``"full"`` or ``"full/SUB"``).
    """
    csv, md = folder / f"{name}.csv", folder / f"{name}.md"
    if not csv.is_file() and not md.is_file():
        return None
    frame = pd.read_csv(csv) if csv.is_file() else pd.DataFrame()
    fields = _from_csv(frame)
    if md.is_file():
        fields |= _from_markdown(md.read_text(encoding="utf-8"))
    side = _sidecar(folder / f"{name}.json")
    if all(side.get(k) == fields[k] for k in ("budget", "variant") if k in fields):
        fields |= {k: side[k] for k in ("budget", "variant", "seeds", "runs_not_run",
                                        "compute_seconds", "finished") if k in side}
    seconds = fields.get("compute_seconds")
    published = int(frame["paper"].notna().sum()) if "paper" in frame else 0
    compared = int(frame["delta"].notna().sum()) if "delta" in frame else 0
    return ReportStatus(
        folder=label, budget=str(fields.get("budget", "")),
        variant=str(fields.get("variant", "")), seeds=tuple(fields.get("seeds", ())),
        date=str(fields.get("finished", ""))[:10], not_run=tuple(fields.get("runs_not_run", ())),
        largest=largest_delta(frame), compared=compared, published=published,
        minutes=None if seconds is None else seconds / 60)


def experiment_status(exp: Experiment, reports: Path) -> tuple[ReportStatus, ...]:
    """Every report of ``exp`` under ``reports``, its ``full/`` subfolder and the folders
    directly inside ``full/`` (one per partial run kept apart, e.g. one row's seed on another
    device: ``full/bhn_cpu_seed1/``), in that order; () = never run."""
    full = reports / FULL
    subs = sorted(p for p in full.iterdir() if p.is_dir()) if full.is_dir() else []
    found = (read_report(reports, exp.name), read_report(full, exp.name, label=FULL),
             *(read_report(p, exp.name, label=f"{FULL}/{p.name}") for p in subs))
    return tuple(s for s in found if s is not None)


def _delta_text(d: Delta) -> str:
    digits = {"bits": 4, "count": 0}.get(d.unit, 2)
    unit = {"percent": " points", "bits": " bits"}.get(d.unit, "")
    return f"{d.value:+.{digits}f}{unit} ({d.row}, {d.column})"


def _seeds_text(seeds: Iterable[int]) -> str:
    return ",".join(str(s) for s in seeds) or "?"


def status_line(s: ReportStatus) -> str:
    """One report's status in words: what ran, when, what did not, and the largest |Δ|."""
    where = f" (in {s.folder}/)" if s.folder else ""
    text = (f"{s.budget or '?'} budget{where}, variant {s.variant or '?'}, seeds "
            f"{_seeds_text(s.seeds)}, {s.date or 'date unknown'}")
    if s.minutes is not None:
        text += f", cells {s.minutes:.1f} min"
    if s.partial:
        runs = "run" if len(s.not_run) == 1 else "runs"
        text += f"; partial: {runs} {', '.join(s.not_run)} not run"
    if s.largest is None:
        text += f"; no published number under our protocol ({s.published} published)"
    else:
        text += (f"; largest |Δ| {_delta_text(s.largest)}, {s.compared} of {s.published} "
                 "published numbers under their protocol")
    return text


def list_text(experiments: Iterable[Experiment], reports: Path) -> str:
    """``robustbnn reproduce --list``: per experiment a line with its name and title, then
    indented lines with its variants and data, and its status from ``reports``.

    Args:
        experiments: The experiments, in order.
        reports: The reports folder (the status of a missing folder is not known).
    """
    known = reports.is_dir()
    out = [f"# status from the reports in {reports}" if known
           else f"# no reports folder {reports}: status not known (--out DIR names it)"]
    wrap = textwrap.TextWrapper(width=WIDTH, initial_indent="    ", subsequent_indent="      ",
                                break_on_hyphens=False)
    for exp in experiments:
        out.append(f"{exp.name}\t{exp.title}")
        out += wrap.wrap(f"variants: {', '.join(exp.variants)}; needs: {exp.data}")
        if known:
            lines = [status_line(s) for s in experiment_status(exp, reports)] or ["never run"]
            for line in lines:
                out += wrap.wrap(f"status: {line}")
    return "\n".join(out) + "\n"


def markdown_table(experiments: Iterable[Experiment], reports: Path) -> str:
    """The status table of the docs: one line per report (or per experiment never run).

    Args:
        experiments: The experiments, in order.
        reports: The reports folder.
    """
    rows = []
    for exp in experiments:
        found = experiment_status(exp, reports)
        if not found:
            rows.append([exp.name, "never run", *[""] * 7])
        for s in found:
            budget = s.budget + (f" ({s.folder}/)" if s.folder else "")
            minutes = "–" if s.minutes is None else f"{s.minutes:.1f}"
            rows.append([exp.name, budget, s.variant, _seeds_text(s.seeds),
                         s.date or "unknown", ", ".join(s.not_run) or "–", minutes,
                         "–" if s.largest is None else _delta_text(s.largest),
                         f"{s.compared} of {s.published}"])
    header = ["experiment", "budget", "variant", "seeds", "date", "runs not run",
              "cells (min)", "largest |Δ| (row, column)", "Δ shown"]
    return md_table(header, rows, right=[False] * 6 + [True, False, True])


def update_page(page: str, table: str) -> str:
    """``page`` with the text between its status markers replaced by ``table``.

    Raises:
        PathError: When the page lacks the markers.
    """
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise PathError(f"the page has no {BEGIN} ... {END} markers; add them where the "
                        "status table goes")
    return page[:start + len(BEGIN)] + "\n\n" + table + "\n" + page[end:]


def main(argv: list[str] | None = None) -> int:
    """Print the status table, or write it into a page between its markers (``--write``), or
    exit 1 when the page's table differs from the reports (``--check``)."""
    from robustbnn.reproduce import EXPERIMENTS

    parser = argparse.ArgumentParser(prog="python -m robustbnn.reproduce.status",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, default=Path("reports/reproductions"),
                        help="the reports folder (default: reports/reproductions)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", type=Path, metavar="PAGE", help="update PAGE's table")
    mode.add_argument("--check", type=Path, metavar="PAGE", help="exit 1 if PAGE's is stale")
    args = parser.parse_args(argv)
    table = markdown_table((EXPERIMENTS.get(n) for n in EXPERIMENTS.names()), args.reports)
    page = args.write or args.check
    if page is None:
        sys.stdout.write(table)
        return 0
    before = page.read_text(encoding="utf-8")
    after = update_page(before, table)
    if args.check:
        if after != before:
            sys.stderr.write(f"{page}: the status table is stale; run python -m "
                             f"robustbnn.reproduce.status --write {page}\n")
            return 1
        return 0
    if after != before:
        write_text_atomic(page, after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
