"""``robustbnn reproduce``: one published table or figure, run and reported."""

from __future__ import annotations

import argparse
import sys

import torch

from robustbnn.cli.bench import bench_options
from robustbnn.cli.common import check_out, check_outputs
from robustbnn.errors import ConfigError
from robustbnn.portable import relative_argv

__all__ = ["cmd_reproduce"]


def cmd_reproduce(args: argparse.Namespace, argv: list[str]) -> int:
    """``robustbnn reproduce``: ``--list`` (each experiment and its status in the reports of
    ``--out``), ``--plan``, or run the experiment and report."""
    import shlex

    from robustbnn.reproduce import EXPERIMENTS, ReproduceOptions, plan_text, reproduce

    if args.list:
        from robustbnn.reproduce.status import list_text

        experiments = (EXPERIMENTS.get(name) for name in EXPERIMENTS.names())
        sys.stdout.write(list_text(experiments, args.out))
        return 0
    if not args.name:
        raise ConfigError("name an experiment (robustbnn reproduce NAME); "
                          f"known: {EXPERIMENTS.names()} (robustbnn reproduce --list)")
    exp = EXPERIMENTS.get(args.name)
    torch.manual_seed(0)
    opts = ReproduceOptions(
        budget=args.budget, variant=args.variant, seeds=args.seeds or (), out_dir=args.out,
        runs=args.runs or (),
        runs_dir=args.runs_dir or args.out / "runs",
        bench=bench_options(args, argv, args.out, f"reproduce:{exp.name}"),
        command="robustbnn " + shlex.join(relative_argv(argv)))
    if args.plan:
        sys.stdout.write(plan_text(exp, opts))
        return 0
    check_outputs(args, args.out)
    check_out(args, opts.runs_dir, "--runs-dir" if args.runs_dir else "--out")
    path, failures = reproduce(exp, opts)
    for line in failures:
        sys.stderr.write(f"robustbnn: error: {line}; rerunning the same command retries "
                         "only what did not finish\n")
    if not args.quiet:
        sys.stdout.write(f"wrote {path} and {path.with_suffix('.csv')}\n")
    return 1 if failures else 0
