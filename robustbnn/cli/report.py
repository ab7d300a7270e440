"""``robustbnn report``: re-render stored run folders, optionally against a reference."""

from __future__ import annotations

import argparse
import sys

from robustbnn.cli.common import summary
from robustbnn.errors import ConfigError
from robustbnn.folders import check_writable

__all__ = ["cmd_report"]


def cmd_report(args: argparse.Namespace) -> int:
    """``robustbnn report``: render the run folders, then ``--check`` them if asked."""
    from robustbnn.report.regression import check
    from robustbnn.report.render import render

    if args.out is None and len(args.run_dirs) > 1:
        raise ConfigError(f"{len(args.run_dirs)} run folders were given: name the folder for "
                          "their combined reports with --out DIR")
    out = args.out or args.run_dirs[0]
    if args.check is not None and out.resolve() == args.check.resolve():
        raise ConfigError(f"--check {args.check}: that is the output folder itself; render "
                          "into another folder (--out) to compare against it")
    check_writable(out, "--out")
    render(args.run_dirs, out, sort=args.sort, figures=args.figures)
    summary(args, args.run_dirs, f"wrote the reports of {len(args.run_dirs)} run(s) to {out}/")
    if args.check is not None:
        n = check(args.check, out, tolerances=args.tolerances)
        if not args.quiet:
            sys.stdout.write(f"regression check passed: {n} numbers within tolerance of "
                             f"{args.check}/leaderboard.json (timing columns not compared)\n")
    return 0
