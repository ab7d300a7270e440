"""CI's regression check of a reproduction: regenerated per-seed numbers vs the committed CSV.

``python -m robustbnn.reproduce.check COMMITTED.csv NEW.csv`` compares every table cell and
seed present in both. The tolerance of a cell is measured from the committed file itself:
twice the range (max − min) of its committed seeds, at least 0.2 points (percent), 0.01 bits
or exact counts. On one machine a seed reproduces its number; the tolerance absorbs other
CPUs and thread counts. Exit 1, naming each cell that moved beyond it.

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

__all__ = ["compare", "main", "tolerance"]

FLOORS = {"percent": 0.2, "bits": 0.01, "count": 0.0}  # percent: the cross-CPU spread, above
KEY = ["row", "column", "run", "model"]


def tolerance(line: pd.Series, seeds: list[str]) -> float:
    """Twice the committed seed-to-seed range of one cell, at least its unit's floor."""
    values = [line[s] for s in seeds if not math.isnan(line[s])]
    spread = max(values) - min(values) if len(values) > 1 else 0.0
    return max(2 * spread, FLOORS.get(line["unit"], 0.1))


def compare(committed: pd.DataFrame, new: pd.DataFrame) -> tuple[int, list[str]]:
    """(numbers compared, one line per number beyond tolerance)."""
    seeds = [c for c in committed.columns if c.startswith("seed") and c != "seeds"]
    merged = committed.merge(new, on=KEY, suffixes=("", "_new"))
    checked, failures = 0, []
    for _, line in merged.iterrows():
        if line["seeds_new"] == 0:  # its run was not selected (--runs): nothing to compare
            continue
        tol = tolerance(line, seeds)
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
