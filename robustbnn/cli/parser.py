"""The argument parser of ``robustbnn``: one function per command's options.

The help text of every command is part of the interface (README, tests): a change here is a
change of ``robustbnn COMMAND --help``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from robustbnn import __version__
from robustbnn.cli.args import (
    add_execution,
    dataset_name,
    folder,
    folder_path,
    positive_int,
    seeds,
    split_names,
    whole_number,
)
from robustbnn.suites import DEFAULT_WALL_TIME

__all__ = ["Parser", "build_parser"]


class Parser(argparse.ArgumentParser):
    """argparse's parser, with a usage error as one line, as every other bad value is."""

    def error(self, message: str, prog: str | None = None) -> NoReturn:
        """Write ``robustbnn: error: MESSAGE; see PROG --help`` to stderr and exit 2."""
        text = " ".join(message.split())
        sys.stderr.write(f"robustbnn: error: {text}; see {prog or self.prog} --help\n")
        self.exit(2)

    def parse_args(self, args: Sequence[str] | None = None,
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """argparse's, with unrecognized arguments sent to the command's own help."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            self.error(f"unrecognized arguments: {' '.join(extras)}",
                       f"{self.prog} {command}" if command else None)
        return parsed


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (``bench``, ``report``, ``reproduce``, ``check``, ``models``,
    ``datasets``)."""
    parser = Parser(
        prog="robustbnn",
        description="Adversarial robustness and OOD uncertainty benchmarks for Bayesian "
        "neural networks.",
    )
    parser.add_argument("--version", action="version", version=f"robustbnn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # report reads result files alone: no data root, no plug-in (no registry is consulted)
    common = _common()
    runs = [_data_root(), _plugins(workers=True), _common()]  # bench and reproduce
    _add_bench(sub, runs)
    _add_report(sub, [common])
    _add_reproduce(sub, runs)
    _add_check(sub, [_plugins(workers=False), common])
    sub.add_parser("models", parents=[_plugins(workers=False), common],
                   help="list registered models", description="List the registered models "
                   "(plug-ins included): name, description and reference, one per line.")
    sub.add_parser("datasets", parents=[_data_root(), _plugins(workers=False), common],
                   help="list datasets and whether each is available locally",
                   description="List the training and OOD sets (plug-ins included) and "
                   "whether each is available in the data root.")
    return parser


def _common() -> argparse.ArgumentParser:
    """The options every command takes: --debug, --quiet."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars, logs or summary")
    return common


def _data_root() -> argparse.ArgumentParser:
    """``--data-root``, for the commands that read dataset files."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--data-root", type=folder, metavar="DIR",
                        help="folder with dataset files (default: $ROBUSTBNN_DATA, else the "
                        "user cache folder, e.g. ~/.cache/robustbnn/data on Linux, made when a "
                        "download needs it; see docs/data.md)")
    return parent


def _plugins(*, workers: bool) -> argparse.ArgumentParser:
    """``--plugin``; ``workers``: the command runs cells in worker processes too."""
    where = "in this process and in every worker" if workers else "in this process"
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help=f"import MODULE (installed, or in the current folder), {where}, "
                        "to register extra models, attacks, OOD sets, uncertainty measures "
                        "and suites (repeatable); installed packages do the same through the "
                        "entry-point groups robustbnn.models, robustbnn.attacks, "
                        "robustbnn.ood_sets, robustbnn.measures and robustbnn.suites, loaded "
                        "without this flag")
    return parent


def _add_bench(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """``robustbnn bench``: the suite, what it runs, where it writes, how cells run."""
    bench = sub.add_parser("bench", parents=parents, help="train or load models and "
                           "benchmark them", description="Train (or load from the cache) every "
                           "model of a suite, then measure clean accuracy, FGSM robustness "
                           "and OOD detection; write a leaderboard.")
    bench.add_argument("--suite", default="default",
                       help=f"named config (default: default, the embedded MNIST with every "
                       f"model, {DEFAULT_WALL_TIME}); the others: ci (what CI checks, about a "
                       f"minute), smoke (seconds), full_test, paper, bhn_table2, fidelity and "
                       f"any plug-in's; see --print-config")
    bench.add_argument("--models", type=split_names, metavar="A,B",
                       help="comma-separated model names (default: the suite's)")
    bench.add_argument("--dataset", type=dataset_name, help="dataset name (default: the suite's)")
    bench.add_argument("--seed", type=whole_number, help="seed (default: the suite's, 0)")
    bench.add_argument("--set", dest="overrides", action="append", default=[],
                       metavar="NAME.FIELD=VALUE",
                       help="override a model or attack setting (repeatable), e.g. "
                            "mlp.epochs=10, *.hidden=(800,800) (every model with the field) or "
                            "pgd.steps=20")
    bench.add_argument("--out", type=folder_path, default=Path("reports/latest"), metavar="DIR",
                       help="output folder (default: reports/latest)")
    _add_bench_cells(bench)
    add_execution(bench, jobs="auto")


def _add_bench_cells(bench: argparse.ArgumentParser) -> None:
    """``bench`` options that choose the run's cells: OOD sets, attacks, robustness, shift;
    and ``--print-config``, ``--plan``."""
    bench.add_argument("--ood", type=split_names, metavar="A,B",
                       help="OOD sets, comma-separated (default: the suite's; see "
                            "`robustbnn datasets`)")
    bench.add_argument("--ood-preprocessing", choices=["unit", "bhn_reference"],
                       help="pixel scale of the OOD sets: unit = [0, 1] (default); "
                            "bhn_reference = the BHN code's (notMNIST in [-0.5, 0.5], "
                            "unclipped Gaussian)")
    bench.add_argument("--targeted-samples", type=positive_int, metavar="S",
                       help="posterior samples per input gradient of the targeted attack "
                            "(default: the suite's, Li & Gal's 10; deterministic models use 1). "
                            "More samples make a stronger attack on dropout models")
    bench.add_argument("--memory-mb", type=positive_int, metavar="MB",
                       help="memory budget of one Monte Carlo pass (evaluation or attack "
                            "gradient), in MiB; chunks samples and examples to fit (default: "
                            "the suite's, 1024). Results agree across budgets within Monte "
                            "Carlo error, not bit for bit")
    bench.add_argument("--save-scores", action=argparse.BooleanOptionalAction, default=True,
                       help="write per-example OOD scores to OUT/scores/<model>/<set>.npz "
                            "(default: on; the OOD figures are drawn from them)")
    bench.add_argument("--attacks", type=split_names, metavar="A,B",
                       help="attacks from the registry, comma-separated (default: the suite's, "
                            "fgsm,targeted_ifgsm; also pgd and plug-in attacks)")
    bench.add_argument("--robustness", type=split_names, metavar="A,B",
                       help="robustness-leaderboard cells, comma-separated: budget, "
                            "detector_aware, adversarial_ood, or none (default: the suite's; "
                            "all three in default and paper)")
    bench.add_argument("--shift", type=split_names, metavar="A,B",
                       help="dataset-shift cells, comma-separated: rotated (0-180 degrees), "
                            "corrupted (the fifteen MNIST-C corruptions), or none (default: "
                            "the suite's; both in default and paper)")
    bench.add_argument("--print-config", action="store_true",
                       help="print the resolved suite config as JSON and exit")
    bench.add_argument("--plan", action="store_true",
                       help="print the run's cells, their dependencies and which are already "
                            "done in --out, and exit without running anything")


def _add_report(sub: argparse._SubParsersAction,
                parents: list[argparse.ArgumentParser]) -> None:
    """``robustbnn report``: re-render stored run folders."""
    report = sub.add_parser(
        "report", parents=parents, help="re-render reports from stored run folders",
        description="Re-render leaderboard.md/.csv/.json/.html, the OOD detail tables "
        "(ood.md/.csv) and figures/ from stored run folders alone; no model code runs. "
        "Several folders (e.g. one per seed) combine as mean ± std.")
    report.add_argument("run_dirs", nargs="+", type=folder_path, metavar="RUN_DIR",
                        help="folders written by `robustbnn bench`")
    report.add_argument("--out", type=folder_path, metavar="DIR",
                        help="output folder (default: RUN_DIR itself; required for several)")
    report.add_argument("--sort", metavar="COLUMN",
                        help="column key to sort every table by, best first (default: the "
                             "honest robust accuracy robust_accuracy_allk_eps0.1, else "
                             "clean_accuracy; the keys are the all_columns.csv header)")
    report.add_argument("--figures", action=argparse.BooleanOptionalAction, default=True,
                        help="draw figures/*.png (default: on)")
    report.add_argument("--check", type=Path, metavar="REFERENCE_DIR",
                        help="then compare the new all_columns.json with the committed "
                             "REFERENCE_DIR/all_columns.json (or an older REFERENCE_DIR/"
                             "leaderboard.json of every column), within REFERENCE_DIR/"
                             "tolerances.json; where REFERENCE_DIR holds several seeds "
                             "(all_columns_seeds.json), each number must lie within its "
                             "model's seed range widened by the column's spread_margin; exit 1 "
                             "when a number moved beyond tolerance")
    report.add_argument("--tolerances", type=Path, metavar="FILE",
                        help="tolerances for --check (default: REFERENCE_DIR/tolerances.json)")


def _add_reproduce(sub: argparse._SubParsersAction,
                   parents: list[argparse.ArgumentParser]) -> None:
    """``robustbnn reproduce``: one published table or figure."""
    repro = sub.add_parser(
        "reproduce", parents=parents, help="reproduce a published table or figure",
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
    repro.add_argument("--seeds", type=seeds, metavar="0,1,2",
                       help="comma-separated seeds (default: the experiment's, 0,1,2)")
    repro.add_argument("--out", type=folder_path, default=Path("reports/reproductions"),
                       metavar="DIR",
                       help="where NAME.md/.csv and figures/ go (default: "
                            "reports/reproductions)")
    repro.add_argument("--runs-dir", type=folder_path, metavar="DIR",
                       help="where the bench run folders go (default: OUT/runs)")
    repro.add_argument("--runs", type=split_names, metavar="A,B",
                       help="run only these of the experiment's runs (labels in --plan); the "
                            "report shows the others as not run")
    repro.add_argument("--plan", action="store_true",
                       help="print every run's cells and which are done, and exit")
    # One job by default: the committed reproductions (reports/reproductions/) were run in one
    # process with all cores' threads, and float reductions depend on the thread count.
    add_execution(repro, jobs="1")


def _add_check(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """``robustbnn check``: the model contract and the attack kit."""
    check = sub.add_parser(
        "check", parents=parents, help="check models against the model contract",
        description="Build each MODEL at its smoke size, train it briefly on random data, and "
        "run every clause of the model contract on it (robustbnn.testing.check_model): build, "
        "fit, shape (S, B, C), input x left unchanged, dtype, logits (not probabilities), "
        "input gradient, generator reproducibility and variation, "
        "train/eval independence, global RNG, state, devices, cache round trip, "
        "attack_logits, loss. One line per clause; exit 1 when any clause fails.")
    check.add_argument("models", nargs="*", metavar="MODEL",
                       help="registered model names (plug-ins with --plugin); optional with "
                            "--attack")
    check.add_argument("--attack", action="append", default=[], metavar="NAME",
                       help="run the attack kit on a registered attack instead "
                            "(robustbnn.testing.attack.check_attack): inputs left unchanged, "
                            "budget (its norm ball "
                            "and [0, 1]), determinism under its generator, no train()/eval() "
                            "on the model, beats random noise of its norm on a trained model; "
                            "repeat for several")
    check.add_argument("--set", dest="overrides", action="append", default=[],
                       metavar="NAME.FIELD=VALUE",
                       help="check at a model or attack setting, as bench --set takes it "
                            "(repeatable), e.g. mlp.epochs=3 or pgd.steps=5: a model is checked "
                            "at the config a run with these flags gives it, its smoke size on "
                            "top, as the run's contract cell checks it")
    check.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                       help="run device (default: auto = cuda when available, else cpu); a "
                            "GPU run also samples a CPU copy")
