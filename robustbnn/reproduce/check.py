"""CI's regression check of a reproduction: regenerated per-seed numbers vs the committed CSV.

``python -m robustbnn.reproduce.check COMMITTED.csv NEW.csv`` compares every table cell and
seed present in both. The tolerance of a cell is measured from the committed file itself:
twice the range (max − min) of its committed seeds, or twice its group's mean range where
that is larger (below), at least 0.2 points (percent), 0.01 bits or exact counts. On one
machine a seed reproduces its number; the tolerance absorbs other CPUs and thread counts.
Exit 1, naming each cell that moved beyond it.

Three seeds' range is a noisy estimate of a cell's seed spread, and where training takes
another path on another CPU, the number moves as a new seed's would. So the tolerance is at
least twice the mean range of the cell's group: the same row, run, model and metric, over the
table's columns (for ``bhn_table2``, a model's AUROC on its five OOD sets). Measured: the MLP's
seed 0 of ``bhn_table2``'s baselines on an AMD EPYC moved by 0.34 to 3.34 points on every OOD
cell against the committed run of an AVX-512 Xeon, as a new seed does (MC dropout by at most
0.02); its gaussian AUROC moved 88.78 -> 87.82 while its three committed seeds span only 0.30
(88.78, 89.08, 88.90; the EPYC's own three seeds span 2.56), and the MLP's AUROC ranges over the
five sets average 2.61.

The percent floor is what one seed moves between CPUs, measured: the same code and seed of
``bhn_table1_mnist5000`` run A-base (10,000 test images) gave the MLP 95.39, 95.26 and 95.34
and MC dropout 95.44, 95.44 and 95.31 on three 2-core machines (the first committed run, an
AVX-512 Xeon, an AMD EPYC without AVX-512; 2026-11-23 to 26): float rounding of other SIMD
kernels changes the training trajectory by up to 0.13 points, so a 0.1 floor failed on a
machine where nothing had changed. 0.2 points is 20 of those 10,000 images.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

__all__ = ["compare", "group_ranges", "main", "metric", "tolerance"]

FLOORS = {"percent": 0.2, "bits": 0.01, "count": 0.0}  # percent: the cross-CPU spread, above
KEY = ["row", "column", "run", "model"]


def _range(line: pd.Series, seeds: list[str]) -> float:
    """The committed seed-to-seed range (max − min) of one cell; 0 with fewer than 2 seeds."""
    values = [line[s] for s in seeds if not math.isnan(line[s])]
    return max(values) - min(values) if len(values) > 1 else 0.0


def metric(column: str) -> str:
    """The metric of a table column, its last word: ``"gaussian auroc"`` -> ``"auroc"``."""
    return column.split()[-1] if column.split() else column


def group_ranges(committed: pd.DataFrame, seeds: list[str]) -> dict[tuple, float]:
    """Per (row, run, model, metric), the mean committed seed range over its cells (the same
    model's metric on every OOD set of the table)."""
    ranges: dict[tuple, list[float]] = {}
    for _, line in committed.iterrows():
        key = (line["row"], line["run"], line["model"], metric(str(line["column"])))
        ranges.setdefault(key, []).append(_range(line, seeds))
    return {key: sum(v) / len(v) for key, v in ranges.items()}


def tolerance(line: pd.Series, seeds: list[str], group_range: float = 0.0) -> float:
    """Twice the committed seed-to-seed range of one cell, or twice the mean range of its
    group's cells (:func:`group_ranges`) where that is larger, at least its unit's floor."""
    return max(2 * _range(line, seeds), 2 * group_range, FLOORS.get(line["unit"], 0.1))


def compare(committed: pd.DataFrame, new: pd.DataFrame) -> tuple[int, list[str]]:
    """(numbers compared, one line per number beyond tolerance)."""
    seeds = [c for c in committed.columns if c.startswith("seed") and c != "seeds"]
    merged = committed.merge(new, on=KEY, suffixes=("", "_new"))
    groups = group_ranges(committed, seeds)
    checked, failures = 0, []
    for _, line in merged.iterrows():
        if line["seeds_new"] == 0:  # its run was not selected (--runs): nothing to compare
            continue
        tol = tolerance(line, seeds, groups[(line["row"], line["run"], line["model"],
                                             metric(str(line["column"])))])
        for seed in seeds:
            if f"{seed}_new" not in merged or math.isnan(line[seed]):
                continue
            ours = line[f"{seed}_new"]
            checked += 1
            if math.isnan(ours) or abs(ours - line[seed]) > tol + 1e-9:
                failures.append(f"{line['row']} / {line['column']} ({line['model']}, "
                                f"{seed}): committed {line[seed]:.4f}, now {ours:.4f}, "
                                f"tolerance {tol:.4f}")
    return checked, failures


def main(argv: list[str] | None = None) -> int:
    """Compare two reproduction CSVs; print the result; exit 1 beyond tolerance."""
    parser = argparse.ArgumentParser(prog="python -m robustbnn.reproduce.check",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("committed", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args(argv)
    checked, failures = compare(pd.read_csv(args.committed), pd.read_csv(args.new))
    for line in failures:
        sys.stderr.write(f"reproduction check: {args.new.stem}: {line}\n")
    if checked == 0:
        sys.stderr.write(f"reproduction check: {args.new} shares no cell and seed with "
                         f"{args.committed}\n")
        return 1
    if not failures:
        sys.stdout.write(f"reproduction check passed: {checked} numbers of {args.new.stem} "
                         f"within tolerance of {args.committed}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
