"""``robustbnn check``: the model contract on models, the attack kit on attacks."""

from __future__ import annotations

import argparse
import sys

from robustbnn.cli.common import resolve_device
from robustbnn.errors import ConfigError

__all__ = ["cmd_check"]


def cmd_check(args: argparse.Namespace) -> int:
    """``robustbnn check``: one line per clause; 1 when a clause of a model or attack failed."""
    from robustbnn.models import MODELS
    from robustbnn.testing import CheckOptions, check_model, report_lines

    if not args.models and not args.attack:
        raise ConfigError("robustbnn check needs a MODEL or --attack NAME; list them with "
                          "robustbnn models (plug-ins with --plugin)")
    for name in args.models:  # an unknown name is one line before any check runs
        MODELS.get(name)
    attack_code = _check_attacks(args) if args.attack else 0
    if not args.models:
        return attack_code
    device = resolve_device(args.device)
    width = max(len(n) for n in args.models)
    reports = []
    for name in args.models:
        reports.append(check_model(name, options=CheckOptions(device=device)))
        sys.stdout.writelines(line + "\n" for line in report_lines(reports[-1:], width))
        sys.stdout.flush()  # one model at a time, also through a pipe
    failed = [f"{r.model}.{c.clause}" for r in reports for c in r.failed]
    if not args.quiet:
        verdict = (f"{len(failed)} clause(s) failed: {', '.join(failed)}" if failed
                   else "every clause passed")
        sys.stdout.write(f"checked {len(reports)} model(s) on {device}: {verdict}\n")
    return 1 if failed or attack_code else 0


def _check_attacks(args: argparse.Namespace) -> int:
    """``check --attack``: the attack kit, one line per clause; 1 when a clause failed."""
    from robustbnn.attacks import ATTACKS
    from robustbnn.testing.attack import check_attack

    for name in args.attack:
        ATTACKS.get(name)
    failed = []
    for name in args.attack:
        report = check_attack(name)
        sys.stdout.writelines(line + "\n" for line in report.lines())
        sys.stdout.flush()
        failed += [f"{name}.{r.clause}" for r in report.failed]
    if not args.quiet:
        verdict = (f"{len(failed)} clause(s) failed: {', '.join(failed)}" if failed
                   else "every clause passed")
        sys.stdout.write(f"checked {len(args.attack)} attack(s): {verdict}\n")
    return 1 if failed else 0
