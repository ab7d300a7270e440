"""Command line: ``robustbnn bench | report | reproduce | check | models | datasets``.

``main(argv) -> int`` is the only place that seeds global RNGs or picks a device.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import random
import sys
from pathlib import Path

import numpy as np
import torch

from robustbnn import __version__
from robustbnn.errors import ConfigError, DeviceError, UserError
from robustbnn.folders import check_readable, check_writable
from robustbnn.plugins import load_plugins


def resolve_device(choice: str) -> torch.device:
    """``auto`` -> cuda when available, else cpu; ``cuda`` without CUDA is an error."""
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cuda" and not torch.cuda.is_available():
        raise DeviceError(
            f"--device cuda was requested but CUDA is not available to torch {torch.__version__} "
            "on this machine; use --device cpu (or --device auto)"
        )
    return torch.device(choice)


def _one_line(err: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(err).split()) or type(err).__name__


def _split_names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        seeds = ()
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds >= 0 like 0,1,2, "
                                         f"got {text!r}")
    return seeds


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _jobs(text: str) -> int:
    """``--jobs``: a positive whole number, or ``auto`` (0: robustbnn.bench.auto_jobs)."""
    return 0 if text == "auto" else _positive_int(text)


def _add_execution(parser: argparse.ArgumentParser, *, jobs: str) -> None:
    """The options of how cells run (shared by bench and reproduce; ``jobs``: the default)."""
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="model cache (default: $ROBUSTBNN_CACHE, else the user cache "
                             "folder)")
    parser.add_argument("--cache", action=argparse.BooleanOptionalAction, default=True,
                        help="load and save trained models (default: on)")
    parser.add_argument("--download", action=argparse.BooleanOptionalAction, default=False,
                        help="download missing dataset files (needs network)")
    grid = parser.add_argument_group(
        "execution (none of these changes a number, except that the torch threads per cell "
        "change float rounding)")
    grid.add_argument("--jobs", type=_jobs, default=_jobs(jobs), metavar="N|auto",
                      help=f"run cells in N local worker processes, 1 = in-process; auto = one "
                           f"per CPU core (at most 8) on the CPU, 1 on a GPU or with Ray "
                           f"(default: {jobs}; $ROBUSTBNN_JOBS sets what auto means)")
    grid.add_argument("--executor", choices=["local", "ray"], default="local",
                      help="local (default; --jobs for a process pool) or ray: each cell a Ray "
                           "task (pip install 'robustbnn[ray]')")
    grid.add_argument("--ray-address", metavar="ADDR",
                      help="Ray cluster to join (default: $RAY_ADDRESS, else a local Ray)")
    grid.add_argument("--threads", type=_positive_int, metavar="T",
                      help="torch threads per cell (default: all cores for one job, "
                           "cores / N with --jobs N, 1 per Ray task); results can differ "
                           "in the last bits "
                           "between thread counts")
    grid.add_argument("--retries", type=_non_negative_int, default=1, metavar="K",
                      help="retry a failing cell K times before reporting it (default 1)")
    grid.add_argument("--overwrite", action="store_true",
                      help="replace the results of another run configuration in --out "
                           "(default: refuse)")



def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="robustbnn",
        description="Adversarial robustness and OOD uncertainty benchmarks for Bayesian "
        "neural networks.",
    )
    parser.add_argument("--version", action="version", version=f"robustbnn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-root", metavar="DIR",
                        help="folder with dataset files (default: $ROBUSTBNN_DATA, else the "
                        "user cache folder)")
    common.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE (installed, or in the current folder), in this "
                        "process and in every worker, to register extra models, attacks, OOD "
                        "sets, uncertainty measures and suites (repeatable); installed "
                        "packages do the same through the entry-point groups robustbnn.models, "
                        "robustbnn.attacks, robustbnn.ood_sets, robustbnn.measures and "
                        "robustbnn.suites, loaded without this flag")
    common.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars, logs or summary")

    bench = sub.add_parser("bench", parents=[common], help="train or load models and "
                           "benchmark them", description="Train (or load from the cache) every "
                           "model of a suite, then measure clean accuracy, FGSM robustness "
                           "and OOD detection; write a leaderboard.")
    bench.add_argument("--suite", default="default",
                       help="named config: default (embedded MNIST, every model, 20-25 min on "
                       "2 CPU cores), ci (what CI checks, ~1 min), smoke (seconds); see "
                       "--print-config")
    bench.add_argument("--models", type=_split_names, metavar="A,B",
                       help="comma-separated model names (default: the suite's)")
    bench.add_argument("--dataset", help="dataset name (default: the suite's)")
    bench.add_argument("--seed", type=int, help="seed (default: the suite's, 0)")
    bench.add_argument("--set", dest="overrides", action="append", default=[],
                       metavar="NAME.FIELD=VALUE",
                       help="override a model setting, e.g. mlp.epochs=10 or *.hidden=(800,800)")
    bench.add_argument("--out", type=Path, default=Path("reports/latest"), metavar="DIR",
                       help="output folder (default: reports/latest)")
    bench.add_argument("--ood", type=_split_names, metavar="A,B",
                       help="OOD sets, comma-separated (default: the suite's; see "
                            "`robustbnn datasets`)")
    bench.add_argument("--ood-preprocessing", choices=["unit", "bhn_reference"],
                       help="pixel scale of the OOD sets: unit = [0, 1] (default); "
                            "bhn_reference = the BHN code's (notMNIST in [-0.5, 0.5], "
                            "unclipped Gaussian)")
    bench.add_argument("--targeted-samples", type=_positive_int, metavar="S",
                       help="posterior samples per input gradient of the targeted attack "
                            "(default: the suite's, Li & Gal's 10; deterministic models use 1). "
                            "More samples make a stronger attack on dropout models")
    bench.add_argument("--memory-mb", type=_positive_int, metavar="MB",
                       help="memory budget of one Monte Carlo pass (evaluation or attack "
                            "gradient), in MiB; chunks samples and examples to fit (default: "
                            "the suite's, 1024). Results agree across budgets within Monte "
                            "Carlo error, not bit for bit")
    bench.add_argument("--save-scores", action=argparse.BooleanOptionalAction, default=True,
                       help="write per-example OOD scores to OUT/scores/<model>/<set>.npz "
                            "(default: on; the OOD figures are drawn from them)")
    bench.add_argument("--attacks", type=_split_names, metavar="A,B",
                       help="attacks from the registry, comma-separated (default: the suite's, "
                            "fgsm,targeted_ifgsm; also pgd and plug-in attacks)")
    bench.add_argument("--robustness", type=_split_names, metavar="A,B",
                       help="robustness-leaderboard cells, comma-separated: budget, "
                            "detector_aware, adversarial_ood, or none (default: the suite's; "
                            "all three in default and paper)")
    bench.add_argument("--shift", type=_split_names, metavar="A,B",
                       help="dataset-shift cells, comma-separated: rotated (0-180 degrees), "
                            "corrupted (the fifteen MNIST-C corruptions), or none (default: "
                            "the suite's; both in default and paper)")
    bench.add_argument("--print-config", action="store_true",
                       help="print the resolved suite config as JSON and exit")
    bench.add_argument("--plan", action="store_true",
                       help="print the run's cells, their dependencies and which are already "
                            "done in --out, and exit without running anything")
    _add_execution(bench, jobs="auto")

    report = sub.add_parser(
        "report", parents=[common], help="re-render reports from stored run folders",
        description="Re-render leaderboard.md/.csv/.json/.html, the OOD detail tables "
        "(ood.md/.csv) and figures/ from stored run folders alone; no model code runs. "
        "Several folders (e.g. one per seed) combine as mean ± std.")
    report.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR",
                        help="folders written by `robustbnn bench`")
    report.add_argument("--out", type=Path, metavar="DIR",
                        help="output folder (default: RUN_DIR itself; required for several)")
    report.add_argument("--sort", metavar="COLUMN",
                        help="leaderboard column key to sort by, best first (default: "
                             "clean_accuracy; the keys are the leaderboard.csv header)")
    report.add_argument("--figures", action=argparse.BooleanOptionalAction, default=True,
                        help="draw figures/*.png (default: on)")
    report.add_argument("--check", type=Path, metavar="REFERENCE_DIR",
                        help="then compare the new leaderboard.json with the committed "
                             "REFERENCE_DIR/leaderboard.json, within REFERENCE_DIR/"
                             "tolerances.json; exit 1 when a number moved beyond tolerance")
    report.add_argument("--tolerances", type=Path, metavar="FILE",
                        help="tolerances for --check (default: REFERENCE_DIR/tolerances.json)")

    repro = sub.add_parser(
        "reproduce", parents=[common], help="reproduce a published table or figure",
        description="Run one published table or figure under its paper's protocol (each run "
        "an ordinary bench folder, resumable) and write reports/reproductions/NAME.md with "
        "our numbers beside the published ones; Δ only where the protocol is the paper's.")
    repro.add_argument("name", nargs="?", metavar="NAME",
                       help="the experiment (see --list)")
    repro.add_argument("--list", action="store_true", help="list the experiments and exit")
    repro.add_argument("--budget", choices=["ci", "full"], default="ci",
                       help="ci (default): fewer epochs, same protocol, sized for a 2-core "
                            "CPU; full: the paper's epochs and sizes (GPU-sized)")
    repro.add_argument("--variant", default="",
                       help="a named variant where paper and code disagree (default: the "
                            "experiment's first; see --list)")
    repro.add_argument("--seeds", type=_seeds, metavar="0,1,2",
                       help="comma-separated seeds (default: the experiment's, 0,1,2)")
    repro.add_argument("--out", type=Path, default=Path("reports/reproductions"), metavar="DIR",
                       help="where NAME.md/.csv and figures/ go (default: "
                            "reports/reproductions)")
    repro.add_argument("--runs-dir", type=Path, metavar="DIR",
                       help="where the bench run folders go (default: OUT/runs)")
    repro.add_argument("--runs", type=_split_names, metavar="A,B",
                       help="run only these of the experiment's runs (labels in --plan); the "
                            "report shows the others as not run")
    repro.add_argument("--plan", action="store_true",
                       help="print every run's cells and which are done, and exit")
    # One job by default: the committed reproductions (reports/reproductions/) were run in one
    # process with all cores' threads, and float reductions depend on the thread count.
    _add_execution(repro, jobs="1")

    check = sub.add_parser(
        "check", parents=[common], help="check models against the model contract",
        description="Build each MODEL at its smoke size, train it briefly on random data, and "
        "run every clause of the model contract on it (robustbnn.testing.check_model): build, "
        "fit, shape (S, B, C), dtype, logits (not probabilities), input gradient, generator "
        "reproducibility and variation, "
        "train/eval independence, global RNG, state, devices, cache round trip, "
        "attack_logits, loss. One line per clause; exit 1 when any clause fails.")
    check.add_argument("models", nargs="*", metavar="MODEL",
                       help="registered model names (plug-ins with --plugin); optional with "
                            "--attack")
    check.add_argument("--attack", action="append", default=[], metavar="NAME",
                       help="run the attack kit on a registered attack instead "
                            "(robustbnn.testing.attack.check_attack): budget (its norm ball "
                            "and [0, 1]), determinism under its generator, no train()/eval() "
                            "on the model, beats random noise of its norm on a trained model; "
                            "repeat for several")
    check.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                       help="run device (default: cuda when available, else cpu); a GPU run "
                            "also samples a CPU copy")
    sub.add_parser("models", parents=[common], help="list registered models")
    sub.add_parser("datasets", parents=[common],
                   help="list datasets and whether each is available locally")
    return parser


def _bench_config(args: argparse.Namespace):  # noqa: ANN202
    from robustbnn.suites import SUITES

    cfg = SUITES.get(args.suite)
    changes: dict = {}
    if args.models:
        changes["models"] = args.models
    if args.dataset:
        changes["dataset"] = args.dataset
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.ood:
        changes["ood"] = args.ood
    if args.ood_preprocessing:
        changes["ood_preprocessing"] = args.ood_preprocessing
    if args.attacks:
        changes["attacks"] = args.attacks
    if args.robustness:
        changes["robustness"] = () if args.robustness == ("none",) else args.robustness
    if args.shift:
        changes["shift"] = () if args.shift == ("none",) else args.shift
    if args.targeted_samples:
        changes["targeted_s_attack"] = args.targeted_samples
    if args.memory_mb:
        changes["memory_mb"] = args.memory_mb
    if args.overrides:
        changes["overrides"] = (*cfg.overrides, *args.overrides)
    return dataclasses.replace(cfg, **changes)


def _cmd_bench(args: argparse.Namespace, argv: list[str]) -> int:
    from robustbnn.bench import check_bench, print_plan, run_bench
    from robustbnn.settings import resolve_settings

    cfg = check_bench(_bench_config(args), tuple(args.overrides))
    _data_root(args)
    if args.print_config:
        settings = resolve_settings(cfg).to_json()
        payload = {"suite": args.suite, **dataclasses.asdict(cfg),
                   "model_configs": {m: settings["model_configs"][m] for m in cfg.models},
                   "attack_configs": settings["attack_configs"]}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return 0
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    opts = _bench_options(args, argv, args.out, args.suite)
    _check_memory(opts.device, cfg.memory_mb)
    if args.plan:
        sys.stdout.write(print_plan(cfg, opts))
        return 0
    _check_outputs(args, args.out)
    outcome = run_bench(cfg, opts)
    report = outcome.report
    if not args.quiet:
        sys.stderr.write(f"cells: {len(report.reused)} reused, {len(report.ran)} run, "
                         f"{len(report.failed)} failed, {len(report.skipped)} skipped\n")
    faults = [r for r in outcome.rows if r.task == "numerical_fault"]
    if faults:
        where = ", ".join(dict.fromkeys(f"{r.model} {r.setting.get('in_task', '?')}"
                                        for r in faults))
        sys.stderr.write(f"robustbnn: warning: {len(faults)} cell(s) met NaN or inf logits "
                         f"({where}); their rows are replaced by numerical_fault flags (the "
                         "leaderboard's 'numerical faults' column), the other cells are kept\n")
    if report.failed or report.skipped:
        sys.stderr.write(_failure_summary(outcome, args.out))
        return 1
    _summary(args, [args.out], f"wrote {len(outcome.rows)} results and the reports to "
             f"{args.out}/ (results.csv, run.json, leaderboard.md/.csv/.json/.html, ood.md, "
             "figures/)")
    return 0


def _bench_options(args: argparse.Namespace, argv: list[str], out: Path, suite: str):  # noqa: ANN202
    from robustbnn.bench import BenchOptions, auto_jobs
    from robustbnn.training.cache import resolve_cache_dir

    device = resolve_device(args.device)
    jobs = args.jobs or auto_jobs(device, args.executor)
    _check_counts(args, jobs)
    return BenchOptions(
        out_dir=out, suite=suite, device=device,
        data_root=_data_root(args),
        cache_dir=resolve_cache_dir(args.cache_dir) if args.cache else None,
        download=args.download, progress=not args.quiet and sys.stderr.isatty(),
        save_scores=getattr(args, "save_scores", True), executor=args.executor,
        jobs=jobs,
        threads=args.threads, retries=args.retries, ray_address=args.ray_address,
        plugins=tuple(args.plugin), overwrite=args.overwrite, argv=tuple(argv))


# Processes (--jobs) and torch threads per cell (--threads) beyond this many per CPU core only
# cost memory (each worker holds torch and a model: 300-800 MB) and cache thrashing: cells are
# CPU-bound, so no count above the core count runs faster, and 4x leaves room to experiment
# (and at least MIN_CAP, so a small machine still takes what --jobs auto gives a large one).
MAX_PER_CORE = 4
MIN_CAP = 8


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check_counts(args: argparse.Namespace, jobs: int) -> None:
    """``--jobs`` (``jobs``: as resolved) and ``--threads`` fit this machine's cores.

    Raises:
        ConfigError: Naming the flag, its value, the core count and the largest value.
    """
    if args.executor != "local":  # a Ray task's threads are its node's, not this machine's
        return
    cores = _cores()
    most = max(MIN_CAP, MAX_PER_CORE * cores)
    jobs_flag = "--jobs" if args.jobs else "$ROBUSTBNN_JOBS (--jobs auto)"
    for flag, value in ((jobs_flag, jobs), ("--threads", args.threads)):
        if value and value > most:
            raise ConfigError(f"{flag} {value} is more than {MAX_PER_CORE} per CPU core of this "
                              f"machine ({cores} cores): extra processes and threads only cost "
                              f"memory; use at most {most}")


def _check_memory(device: torch.device, memory_mb: int) -> None:
    """The memory budget of one Monte Carlo pass fits the device it runs on.

    Raises:
        ConfigError: Naming the budget, the device's memory and the largest budget.
    """
    if device.type == "cuda":
        total, where = torch.cuda.get_device_properties(device).total_memory, "GPU"
    else:
        total, where = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "machine"
    if memory_mb * 2**20 > total:
        raise ConfigError(f"--memory-mb {memory_mb} is more than this {where}'s memory "
                          f"({total // 2**20} MiB); use at most {total // 2**20}, or less to "
                          "leave room for the data and the models")


def _data_root(args: argparse.Namespace) -> Path:
    """The data root; one given by ``--data-root`` or ``$ROBUSTBNN_DATA`` must be readable."""
    from robustbnn.data import resolve_data_root
    from robustbnn.data.root import ENV_VAR

    if args.data_root:
        check_readable(args.data_root, "--data-root")
    elif os.environ.get(ENV_VAR):
        check_readable(os.environ[ENV_VAR], f"${ENV_VAR}")
    return resolve_data_root(args.data_root)


def _check_outputs(args: argparse.Namespace, *outs: Path) -> None:
    """Every folder the command writes (``outs`` and the model cache) is writable, before
    any work starts."""
    from robustbnn.training.cache import resolve_cache_dir

    for out in outs:
        check_writable(out, "--out")
    if getattr(args, "cache", False):
        flag = "--cache-dir" if args.cache_dir else "the model cache (--cache-dir)"
        check_writable(resolve_cache_dir(args.cache_dir), flag)


def _cmd_reproduce(args: argparse.Namespace, argv: list[str]) -> int:
    import shlex

    from robustbnn.reproduce import EXPERIMENTS, ReproduceOptions, plan_text, reproduce

    if args.list:
        for name in EXPERIMENTS.names():
            exp = EXPERIMENTS.get(name)
            variants = ", ".join(exp.variants)
            sys.stdout.write(f"{name}\t{exp.reproduces}\tvariants: {variants}\t"
                             f"needs: {exp.data}\n")
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
        bench=_bench_options(args, argv, args.out, f"reproduce:{exp.name}"),
        command="robustbnn " + shlex.join(argv))
    if args.plan:
        sys.stdout.write(plan_text(exp, opts))
        return 0
    _check_outputs(args, args.out, opts.runs_dir)
    path, failures = reproduce(exp, opts)
    for line in failures:
        sys.stderr.write(f"robustbnn: error: {line}; rerunning the same command retries "
                         "only what did not finish\n")
    if not args.quiet:
        sys.stdout.write(f"wrote {path} and {path.with_suffix('.csv')}\n")
    return 1 if failures else 0


def _failure_summary(outcome, out: Path) -> str:  # noqa: ANN001 - a BenchOutcome
    """One line per failed cell: what failed, why, what did not run, and that rerunning resumes."""
    report = outcome.report
    cells = outcome.plan.by_id()
    refused = outcome.refused  # the model contract's refusals: one line per model
    every = set(refused) >= {c.model for c in cells.values()}
    lines = []
    for model, entry in refused.items():
        n = sum(c.model == model and i in report.skipped for i, c in cells.items())
        board = "" if every else "; the leaderboard lists it as refused"
        lines.append(f"robustbnn: error: {entry.get('message', entry['reason'])} ({n} cell(s) "
                     f"of it did not "
                     f"run{board})\n")
    others = {i: e for i, e in report.failed.items() if cells[i].model not in refused}
    kept = len(report.reused) + len(report.ran)
    tail = (f"the {kept} finished cell(s) are kept in {out}/cells/, so rerunning the same "
            "command retries only what did not finish")
    lines += [f"robustbnn: error: cell '{cells[i].label}' failed ({e}); "
              f"{len(_dependents(cells, i) & set(report.skipped))} cell(s) depending on it did "
              f"not run; {tail}\n" for i, e in others.items()]
    if every:
        lines.append("robustbnn: error: every model of the run was refused by the model "
                     "contract, so no results or reports were written\n")
    return "".join(lines)


def _dependents(cells: dict, root: str) -> set[str]:
    """Ids of the cells that wait for cell ``root``, directly or through others."""
    waiting: dict[str, list[str]] = {}
    for i, cell in cells.items():
        for d in (*cell.deps, *cell.after):
            waiting.setdefault(d, []).append(i)
    found: set[str] = set()
    todo = [root]
    while todo:
        for i in waiting.get(todo.pop(), ()):
            if i not in found:
                found.add(i)
                todo.append(i)
    return found


def _summary(args: argparse.Namespace, run_dirs: list[Path], done: str) -> None:
    """The final summary table (terminal only, not with --quiet) and one closing line."""
    if args.quiet:
        return
    if sys.stdout.isatty():
        from robustbnn.report.render import load_runs
        from robustbnn.report.summary import summary_table

        results, _ = load_runs(run_dirs)
        sys.stdout.write(summary_table(results) + "\n\n")
    sys.stdout.write(done + "\n")


def _cmd_report(args: argparse.Namespace) -> int:
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
    _summary(args, args.run_dirs, f"wrote the reports of {len(args.run_dirs)} run(s) to {out}/")
    if args.check is not None:
        n = check(args.check, out, tolerances=args.tolerances)
        if not args.quiet:
            sys.stdout.write(f"regression check passed: {n} numbers within tolerance of "
                             f"{args.check}/leaderboard.json (timing columns not compared)\n")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from robustbnn.models import MODELS
    from robustbnn.testing import check_model, report_lines

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
        reports.append(check_model(name, device=device))
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


def _cmd_models(args: argparse.Namespace) -> int:
    from robustbnn.models import MODELS

    for name in MODELS.names():
        spec = MODELS.get(name)
        sys.stdout.write(f"{name}\t{spec.description}\t{spec.reference}\n")
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from robustbnn.data import DATASETS, OOD_DATASETS

    root = _data_root(args)
    sys.stdout.write(f"# data root: {root}\n# training sets (--dataset)\n")
    for name in DATASETS.names():
        spec = DATASETS.get(name)
        status = "available" if spec.available(root) else "missing"
        sys.stdout.write(f"{name}\t{status}\t{spec.description}\n")
    sys.stdout.write("# OOD sets (--ood)\n")
    for name in OOD_DATASETS.names():
        spec = OOD_DATASETS.get(name)
        status = "available" if spec.available(root) else "missing"
        sys.stdout.write(f"{name}\t{status}\t{spec.description}\n")
    sys.stdout.write("# OOD sets named by a pattern (--ood)\n"
                     "heldout:K\t-\tthe training set's class K, held out of training (one "
                     "model per class)\n"
                     "folder:PATH\t-\tevery image under PATH, grayscale, 28x28, in [0, 1]\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    0: done; 1: a failure while working (a failed cell or contract clause, diverged training,
    missing data, a regression beyond tolerance, an OS error); 2: a bad input value (a flag,
    a setting, a name, a path), refused before any work as argparse refuses its usage
    errors; 130: interrupted. Errors are one line, with a traceback only under ``--debug``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s", stream=sys.stderr, force=True)
    try:
        load_plugins(args.plugin)
        if args.command == "bench":
            return _cmd_bench(args, argv)
        if args.command == "report":
            return _cmd_report(args)
        if args.command == "reproduce":
            return _cmd_reproduce(args, argv)
        if args.command == "check":
            return _cmd_check(args)
        if args.command == "models":
            return _cmd_models(args)
        return _cmd_datasets(args)
    except UserError as err:
        if args.debug:
            raise
        sys.stderr.write(f"robustbnn: error: {_one_line(err)}\n")
        return err.exit_code
    except OSError as err:  # a full disk, a folder removed or made read-only mid-run
        if args.debug:
            raise
        where = f": {err.filename}" if err.filename else ""
        sys.stderr.write(f"robustbnn: error: {err.strerror or _one_line(err)}{where}; check "
                         "the path, its permissions and the free space (--debug shows the "
                         "traceback)\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("robustbnn: interrupted; every finished cell is kept, so rerunning "
                         "the same command resumes\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
