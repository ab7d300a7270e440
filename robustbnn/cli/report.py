"""``robustbnn report``: re-render stored run folders, optionally against a reference; and the
closing summary that ``report`` and ``bench`` print."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robustbnn.cli.common import check_out
from robustbnn.errors import ConfigError

__all__ = ["closing_summary", "cmd_report"]


def closing_summary(args: argparse.Namespace, run_dirs: list[Path], out: Path,
                    done: str) -> None:
    """The closing summary (nothing with ``--quiet``): on a terminal the headline table, then
    ``done`` and where the reports of ``out`` are.

    Args:
        args: The command's arguments (``quiet``, and ``sort`` where the command has it).
        run_dirs: The rendered run folders.
        out: The folder the reports went to.
        done: The closing line, e.g. ``wrote ... to OUT/``.
    """
    if args.quiet:
        return
    if sys.stdout.isatty():
        from robustbnn.report.render import load_runs
        from robustbnn.report.summary import summary_table

        results, runs = load_runs(run_dirs)
        sys.stdout.write(summary_table(results, runs, sort=getattr(args, "sort", None)) + "\n")
    from robustbnn.report.summary import report_paths

    paths = report_paths(out)
    sys.stdout.write(done + (":\n" + paths if paths else "\n"))


def cmd_report(args: argparse.Namespace) -> int:
    """``robustbnn report``: render the run folders, then ``--check`` them if asked."""
    from robustbnn.report.regression import check, reference_file
    from robustbnn.report.render import render
    from robustbnn.report.spread import SEEDS_FILE

    if args.out is None and len(args.run_dirs) > 1:
        raise ConfigError(f"{len(args.run_dirs)} run folders were given: name the folder for "
                          "their combined reports with --out DIR")
    out = args.out or args.run_dirs[0]
    if args.check is not None and out.resolve() == args.check.resolve():
        raise ConfigError(f"--check {args.check}: that is the output folder itself; render "
                          "into another folder (--out) to compare against it")
    check_out(args, out, "--out" if args.out is not None else "RUN_DIR")
    render(args.run_dirs, out, sort=args.sort, figures=args.figures)
    closing_summary(args, args.run_dirs, out,
                    f"wrote the reports of {len(args.run_dirs)} run(s) to {out}/")
    if args.check is not None:
        n = check(args.check, out, tolerances=args.tolerances)
        seeds = args.check / SEEDS_FILE
        within = (f"within the committed seed range, widened by its margin, of {seeds}"
                  if seeds.is_file() else f"within tolerance of {reference_file(args.check)}")
        if not args.quiet:
            sys.stdout.write(f"regression check passed: {n} numbers {within} (timing columns "
                             "not compared)\n")
    return 0
