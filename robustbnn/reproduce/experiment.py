"""An experiment: a named set of bench runs that reproduces one published table or figure.

An experiment is data: for each budget and variant, the bench configs it runs (one
:class:`Run` per configuration, each repeated per seed), and the :class:`Compare` cells that
lay our numbers out as the paper's table, each bound to a published entry when the paper
prints one. Running it is ``robustbnn bench`` once per run and seed (:mod:`.runner`); nothing
here trains or scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from robustbnn.bench_config import BenchConfig
from robustbnn.report.published import Entry, table

__all__ = ["BUDGETS", "Compare", "Experiment", "Figure", "Run", "compares_from_table"]

# ``full`` follows the paper (epochs, S, data sizes) and is GPU-sized; ``ci`` shrinks epochs
# (never the protocol) to fit a 2-core CPU, and says so in the report header.
BUDGETS = ("ci", "full")


@dataclasses.dataclass(frozen=True)
class Run:
    """One bench configuration of an experiment (run once per seed).

    Attributes:
        label: A short name, unique in the experiment (a folder name).
        config: The bench config; its seed is replaced by each requested seed.
    """

    label: str
    config: BenchConfig


@dataclasses.dataclass(frozen=True)
class Compare:
    """One cell of the reproduced table: our number, and the paper's when it prints one.

    Attributes:
        row: The paper's row label (or ours, for a row the paper lacks).
        column: The paper's column label.
        run: The :class:`Run` label our number comes from.
        model: The model whose rows are read.
        match: Result-row fields selecting the number (task, dataset, measure, metric, and
            any ``setting`` knobs as ``setting.<knob>``).
        entry: The published entry, or None.
        unit: ``percent`` (our fraction x 100), ``bits`` or ``count``.
        transform: ``"error"`` for 1 − accuracy.
    """

    row: str
    column: str
    run: str
    model: str
    match: dict[str, Any]
    entry: Entry | None = None
    unit: str = "percent"
    transform: str = ""


@dataclasses.dataclass(frozen=True)
class Figure:
    """A figure the report draws from the results: one line per (run, model).

    Attributes:
        name: File stem (``fgsm_accuracy``).
        title: Axis title.
        task: Result task (``fgsm``).
        metric: Result metric (``accuracy``).
        x: The setting knob on the x axis (``eps``).
        measure: The measure for uncertainty metrics ("" otherwise).
        where: Further setting knobs every plotted row must have (e.g. ``{"s_attack": 1}``).
    """

    name: str
    title: str
    task: str
    metric: str
    x: str
    measure: str = ""
    where: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A reproduction: what it reproduces, its runs per budget and variant, its table.

    Attributes:
        name: The ``robustbnn reproduce NAME``.
        title: One line.
        reproduces: The paper and table/figure.
        runs: ``runs(budget, variant) -> tuple[Run, ...]``.
        compares: ``compares(variant) -> tuple[Compare, ...]``, the table's cells in order.
        variants: Variant name -> what it changes; the first is the default.
        seeds: Default seeds.
        figures: Figures drawn from the results.
        notes: What a reader must know (where paper and code disagree, what cannot run here).
        gpu_estimate: Estimated wall time of the ``full`` budget on one GPU, for the report.
        data: What data the experiment needs, for ``--list``.
        ci_shrinks: The :class:`~robustbnn.bench_config.BenchConfig` fields besides the
            models' epochs that the ``ci`` budget may change (data sizes, sample counts), each
            explained in the experiment's module. Where one of them is part of the published
            protocol, the report shows no Δ for the numbers it touches.
    """

    name: str
    title: str
    reproduces: str
    runs: Callable[[str, str], tuple[Run, ...]]
    compares: Callable[[str], tuple[Compare, ...]]
    variants: dict[str, str]
    seeds: tuple[int, ...] = (0, 1, 2)
    figures: tuple[Figure, ...] = ()
    notes: tuple[str, ...] = ()
    gpu_estimate: str = ""
    data: str = "MNIST (data root)"
    ci_shrinks: tuple[str, ...] = ()

    @property
    def default_variant(self) -> str:
        """The variant that runs without ``--variant``."""
        return next(iter(self.variants))


def compares_from_table(name: str, bind: Callable[[Entry], tuple[str, str] | None]
                        ) -> list[Compare]:
    """One :class:`Compare` per entry of published table ``name``, bound to (run, model).

    Args:
        name: The published table.
        bind: Entry -> (run label, model), or None to leave the entry out.
    """
    pub = table(name)
    out = []
    for e in pub.entries:
        where = bind(e)
        if where is not None:
            out.append(Compare(e.row, e.column, where[0], where[1], dict(e.match), e, pub.unit,
                               e.transform))
    return out
