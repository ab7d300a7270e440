"""Measure the regression check's tolerances from the seed-to-seed spread of a suite.

Run the suite once per seed, then::

    python -m robustbnn.report.tolerances SEED0_DIR SEED1_DIR SEED2_DIR --out tolerances.json

Per numeric leaderboard column (timing columns excluded), the tolerance is
``FACTOR`` x the largest seed-to-seed range (max − min over the runs) of any model, rounded up
to two significant digits, and at least ``FLOOR`` for fractional columns (one test image in
1,000); integer columns (the parameter count) keep their measured range, 0. The file records
the method, the runs and every per-model range behind each tolerance.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from robustbnn.errors import UserError
from robustbnn.report.leaderboard import leaderboard
from robustbnn.report.render import load_runs
from robustbnn.results.store import write_json

__all__ = ["FACTOR", "FLOOR", "measure", "main"]

FACTOR = 2.0  # three seeds under-sample the spread; CI may also run on other BLAS/CPUs
FLOOR = 0.001


def _round_up(value: float) -> float:
    if value <= 0:
        return 0.0
    exponent = math.floor(math.log10(value)) - 1
    digits = math.ceil(value / 10.0**exponent - 1e-9)
    return float(f"{digits}e{exponent}")  # 0.013, not 13 * 0.001 = 0.013000000000000001


def measure(run_dirs: list[Path]) -> dict:
    """The tolerances payload of ``run_dirs`` (one run per seed of the same suite).

    Raises:
        ValueError: With fewer than two runs (no spread to measure).
    """
    if len(run_dirs) < 2:
        raise ValueError(f"need at least two runs (seeds) to measure a spread, got {run_dirs}")
    results, runs = load_runs(run_dirs)
    board = leaderboard(results)
    spread: dict[str, dict[str, float]] = {}
    columns: dict[str, float] = {}
    for col in board.columns:
        if col.kind != "number" or col.timing:
            continue
        ranges = {}
        for i in range(len(run_dirs)):
            one = leaderboard(results[results["run"] == i]).table[col.key]
            for model, value in one.items():
                lo, hi = ranges.get(model, (value, value))
                ranges[model] = (min(lo, value), max(hi, value))
        spread[col.key] = {m: round(hi - lo, 10) for m, (lo, hi) in sorted(ranges.items())}
        widest = max(spread[col.key].values())
        floor = 0.0 if col.fmt == "d" else FLOOR
        columns[col.key] = max(_round_up(FACTOR * widest), floor)
    return {
        "method": (f"tolerance = max({FACTOR:g} x the largest per-model range (max - min) over "
                   f"the runs, rounded up to 2 significant digits, {FLOOR:g} for fractional "
                   "columns); timing columns are not checked (machine-dependent)"),
        "measured_with": ".ci/reports tolerances (robustbnn bench --suite ci --seed N "
                         "--no-cache for N = 0, 1, 2, then python -m "
                         "robustbnn.report.tolerances on the three folders)",
        "seeds": [int(r.get("seed", -1)) for r in runs],
        "suite": sorted({str(r.get("suite")) for r in runs}),
        "spread": spread,
        "columns": columns,
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
