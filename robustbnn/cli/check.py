"""``robustbnn check``: the model contract on models, the attack kit on attacks, at the config a
run with the same ``--plugin`` and ``--set`` flags uses."""

from __future__ import annotations

import argparse
import sys

from robustbnn.cli.common import resolve_device
from robustbnn.errors import ConfigError

__all__ = ["cmd_check"]


def cmd_check(args: argparse.Namespace) -> int:
    """``robustbnn check``: one line per clause; 1 when a clause of a model or attack failed.

    Every name and ``--set`` item is checked before any clause runs (exit 2, as ``bench``).
    """
    from robustbnn.models import MODELS
    from robustbnn.testing import CheckOptions, check_model, report_lines
    from robustbnn.testing.model import run_config

    if not args.models and not args.attack:
        raise ConfigError("robustbnn check needs a MODEL or --attack NAME; list them with "
                          "robustbnn models (plug-ins with --plugin)")
    for name in args.models:  # an unknown name is one line before any check runs
        MODELS.get(name)
    overrides = tuple(args.overrides)
    _check_owners(args, overrides)
    # The run's config where --set changes it; else None: check_model's smoke size, which warns
    # about a model that declares none.
    configs = {name: run_config(name, overrides) if overrides else None for name in args.models}
    attack_code = _check_attacks(args, overrides) if args.attack else 0
    if not args.models:
        return attack_code
    device = resolve_device(args.device)
    width = max(len(n) for n in args.models)
    reports = []
    for name in args.models:
        reports.append(check_model(name, config=configs[name],
                                   options=CheckOptions(device=device)))
        sys.stdout.writelines(line + "\n" for line in report_lines(reports[-1:], width))
        sys.stdout.flush()  # one model at a time, also through a pipe
    failed = [f"{r.model}.{c.clause}" for r in reports for c in r.failed]
    if not args.quiet:
        verdict = (f"{len(failed)} clause(s) failed: {', '.join(failed)}" if failed
                   else "every clause passed")
        sys.stdout.write(f"checked {len(reports)} model(s) on {device}: {verdict}\n")
    return 1 if failed or attack_code else 0


def _check_owners(args: argparse.Namespace, overrides: tuple[str, ...]) -> None:
    """Every ``--set`` names a model or attack this command checks (``*`` a field of one).

    Raises:
        ConfigError: For an owner not checked here, an unknown one or a malformed item.
    """
    from robustbnn.attacks import ATTACKS
    from robustbnn.bench_config import BenchConfig
    from robustbnn.config import parse_set
    from robustbnn.models import MODELS
    from robustbnn.settings import check_owners

    for owner, field, _ in parse_set(list(overrides)):
        if owner in MODELS and owner not in args.models:
            raise ConfigError(f"--set {owner}.{field}: model {owner!r} is not checked here; "
                              f"name it: robustbnn check {owner} --set {owner}.{field}=...")
        if owner in ATTACKS and owner not in args.attack:
            raise ConfigError(f"--set {owner}.{field}: attack {owner!r} is not checked here; "
                              f"name it: robustbnn check --attack {owner} --set "
                              f"{owner}.{field}=...")
    check_owners(BenchConfig(models=tuple(args.models), attacks=tuple(args.attack)), overrides)


def _check_attacks(args: argparse.Namespace, overrides: tuple[str, ...]) -> int:
    """``check --attack``: the attack kit, one line per clause; 1 when a clause failed."""
    from robustbnn.attacks import ATTACKS
    from robustbnn.bench_config import BenchConfig
    from robustbnn.settings import attack_settings
    from robustbnn.testing.attack import check_attack

    for name in args.attack:
        ATTACKS.get(name)
        if overrides:  # a bad value is exit 2 before any clause, as in bench
            attack_settings(name, BenchConfig(overrides=overrides))
    failed = []
    for name in args.attack:
        report = check_attack(name, overrides)
        sys.stdout.writelines(line + "\n" for line in report.lines())
        sys.stdout.flush()
        failed += [f"{name}.{r.clause}" for r in report.failed]
    if not args.quiet:
        verdict = (f"{len(failed)} clause(s) failed: {', '.join(failed)}" if failed
                   else "every clause passed")
        sys.stdout.write(f"checked {len(args.attack)} attack(s): {verdict}\n")
    return 1 if failed else 0
