"""Measure the regression check's tolerances from the seed-to-seed spread of a suite.

Run the suite once per seed, then::

    python -m robustbnn.report.tolerances SEED0_DIR SEED1_DIR SEED2_DIR --out tolerances.json

Per numeric leaderboard column (timing columns excluded), the tolerance is
``FACTOR`` x the largest seed-to-seed range (max − min over the runs) of any model, rounded up
to two significant digits, and at least ``FLOOR`` for fractional columns (one test image in
1,000); integer columns (the parameter count) keep their measured range, 0. The file records
the method, the runs and every per-model range behind each tolerance.

The same runs give the margins of the seed-spread check (``spread_margin``,
:func:`robustbnn.report.regression.compare_spread`): a new number passes within its model's
seed range widened by ``MARGIN_FACTOR`` x the largest per-model range of the column, rounded
up to two significant digits, and at least one test point of the runs' smallest evaluation set
for fractional columns (1 / n, n = the smallest ``n`` a row records; ``FLOOR`` when no row
records one); count columns get 0 (exact). Timing columns are named under ``not_checked``.
``spread_leave_one_out`` counts how many of the runs' own numbers fall outside the range of
the other runs widened so (:func:`leave_one_out`).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from robustbnn.errors import UserError
from robustbnn.report.render import load_runs
from robustbnn.report.spread import seed_values
from robustbnn.results.names import N
from robustbnn.results.store import write_json

__all__ = ["FACTOR", "FLOOR", "MARGIN_FACTOR", "leave_one_out", "measure", "main", "smallest_n"]

FACTOR = 2.0  # three seeds under-sample the spread; CI may also run on other BLAS/CPUs
FLOOR = 0.001
# A fourth seed falls outside the range of three with probability 1/2, so the range needs a
# margin. Measured leaving one seed out of four smoke-suite runs (seeds 0-3, 2 models, 48
# numbers each): 14 % of the numbers fell outside at 0.5 x the widest range, 5.7 % at 1, 3.6 %
# at 2. The file records the same leave-one-out count for the runs it is measured from.
MARGIN_FACTOR = 1.0


def _round_up(value: float) -> float:
    if value <= 0:
        return 0.0
    exponent = math.floor(math.log10(value)) - 1
    digits = math.ceil(value / 10.0**exponent - 1e-9)
    return float(f"{digits}e{exponent}")  # 0.013, not 13 * 0.001 = 0.013000000000000001


def smallest_n(results: pd.DataFrame) -> int | None:
    """The smallest number of test points a row of ``results`` records (its ``n`` knob > 0).

    Example:
        >>> smallest_n(pd.DataFrame({"setting": [{"n": 500}, {"n": 100}, {"eps": 0.1}]}))
        100
    """
    counts = [s.get(N) for s in results["setting"] if isinstance(s, dict)]
    counts = [int(c) for c in counts if isinstance(c, int | float) and not isinstance(c, bool)
              and c > 0]
    return min(counts) if counts else None


def leave_one_out(values: dict[str, dict[str, list[float | None]]],
                  margins: dict[str, float]) -> dict:
    """How the seed-spread check fares on the runs themselves: each run checked against the
    range of the others widened by ``margins`` (a pessimistic estimate: one run fewer).

    Returns:
        ``checked`` and ``outside`` counts, and the first ten numbers outside as
        ``model key seed-position``.
    """
    checked, outside = 0, []
    for model, row in sorted(values.items()):
        for key, margin in margins.items():
            seen = row.get(key, [])
            for i, value in enumerate(seen):
                rest = [v for j, v in enumerate(seen) if j != i and v is not None]
                if value is None or not rest:
                    continue
                checked += 1
                if not min(rest) - margin - 1e-9 <= value <= max(rest) + margin + 1e-9:
                    outside.append(f"{model} {key} run {i}")
    return {"checked": checked, "outside": len(outside), "first_outside": outside[:10]}


def measure(run_dirs: list[Path]) -> dict:
    """The tolerances payload of ``run_dirs`` (one run per seed of the same suite).

    Raises:
        ValueError: With fewer than two runs (no spread to measure).
    """
    if len(run_dirs) < 2:
        raise ValueError(f"need at least two runs (seeds) to measure a spread, got {run_dirs}")
    results, runs = load_runs(run_dirs)
    per_seed = seed_values(results)  # the values all_columns_seeds.json holds
    seeds = [int(r.get("seed", -1)) for r in runs]
    suite = "/".join(sorted({str(r.get("suite")) for r in runs}))
    spread: dict[str, dict[str, float]] = {}
    columns: dict[str, float] = {}
    margins: dict[str, float] = {}
    not_checked: dict[str, str] = {}
    n = smallest_n(results)
    point = 1.0 / n if n else FLOOR  # one test point of the smallest evaluation set
    for col in per_seed.columns:
        if col["timing"]:
            not_checked[col["key"]] = "timing: wall-clock seconds depend on the machine"
            continue
        key = col["key"]
        spread[key] = {}
        for model, row in sorted(per_seed.values.items()):
            seen = [v for v in row[key] if v is not None]
            if seen:
                spread[key][model] = round(max(seen) - min(seen), 10)
        widest = max(spread[key].values(), default=0.0)
        count = col["fmt"] == "d"  # an integer column (the parameter count): exact
        columns[key] = max(_round_up(FACTOR * widest), 0.0 if count else FLOOR)
        margins[key] = max(_round_up(MARGIN_FACTOR * widest),
                           0.0 if count else _round_up(point))
    return {
        "method": (f"tolerance = max({FACTOR:g} x the largest per-model range (max - min) over "
                   f"the runs, rounded up to 2 significant digits, {FLOOR:g} for fractional "
                   "columns); timing columns are not checked (machine-dependent)"),
        "spread_method": (
            f"seed-spread check (a run against all_columns_seeds.json): a number passes within "
            f"its model's seed range [min, max] widened by spread_margin = max({MARGIN_FACTOR:g}"
            f" x the largest per-model range of the column, rounded up to 2 significant digits,"
            f" one test point 1/n of the smallest evaluation set the rows record (n = {n}; "
            f"{FLOOR:g} when none)) for fractional columns; 0 for counts"),
        "measured_with": (f"robustbnn bench --suite {suite} --seed N for N in {seeds}, then "
                          "python -m robustbnn.report.tolerances on the folders (.ci/reports "
                          "tolerances for the ci suite, .ci/reports default for the default "
                          "suite)"),
        "seeds": seeds,
        "suite": sorted({str(r.get("suite")) for r in runs}),
        "spread": spread,
        "columns": columns,
        "spread_margin": margins,
        "spread_leave_one_out": leave_one_out(per_seed.values, margins),
        "not_checked": not_checked,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: write the tolerances of the given runs to ``--out``."""
    parser = argparse.ArgumentParser(
        prog="python -m robustbnn.report.tolerances",
        description="Measure the CI regression tolerances from runs of one suite with "
                    "different seeds (seed-to-seed spread per leaderboard column).")
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="tolerances file to write, e.g. reports/tolerances.json")
    args = parser.parse_args(argv)
    try:
        payload = measure(args.run_dirs)
    except (UserError, ValueError, OSError) as err:
        parser.exit(1, f"{parser.prog}: error: {err}\n")
    write_json(args.out, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
