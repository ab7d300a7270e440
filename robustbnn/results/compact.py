"""A run's per-example values rewritten small enough to commit, without changing any number.

A run's ``examples/<model>.npz`` holds float64 arrays (:mod:`robustbnn.results.examples`).
Three rewrites keep every number a report draws from them, intervals included:

* a part whose values are all 0 or 1 (correctness, labels) becomes ``uint8``;
* a ``score`` part of the ranking metrics (``score``, ``adversary_detection_score``,
  ``error_detection_score``) becomes its dense ranks (``uint16``, equal scores equal ranks):
  AUROC, AUPR, FPR@95TPR, their bootstrap resamples and the out-of-sample choice of a measure
  read the scores' order only (:mod:`robustbnn.report.intervals`), and a measure that is
  constant stays constant;
* any other part that float32 holds exactly (the models compute in float32) becomes
  ``float32``; the rest stays as it is.

On the default suite's 17 models this took a seed's examples from 27.8 MB to 13.6 MB (the
ranks of about 3,700 score arrays of up to 2,000 points are most of what is left).
``tests/results/test_compact.py`` renders a run and its compacted copy and compares every
table byte for byte. Run it on a copy (the score values themselves are gone)::

    python -m robustbnn.results.compact DIR/examples
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from robustbnn.results.store import write_bytes_atomic

__all__ = ["RANK_PARTS", "compact_arrays", "compact_file", "main"]

# The parts that only ranking metrics read.
RANK_PARTS = frozenset({"score", "adversary_detection_score", "error_detection_score"})
_MAX_RANKS = np.iinfo(np.uint16).max + 1


def _compact(part: str, values: np.ndarray) -> np.ndarray:
    if values.dtype.kind != "f":
        return values
    if np.isin(values, (0.0, 1.0)).all():
        return values.astype(np.uint8)
    if part in RANK_PARTS and not np.isnan(values).any():
        distinct, ranks = np.unique(values, return_inverse=True)
        if len(distinct) <= _MAX_RANKS:
            return ranks.astype(np.uint16).reshape(values.shape)
    narrow = values.astype(np.float32)
    with np.errstate(invalid="ignore"):
        exact = np.array_equal(narrow.astype(values.dtype), values, equal_nan=True)
    return narrow if exact else values


def compact_arrays(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``{"<group key>/<part>": values}`` with each part rewritten (see the module).

    Example:
        >>> out = compact_arrays({"g/score": np.array([0.3, 0.1, 0.3]),
        ...                       "g/label": np.array([0.0, 1.0, 1.0]),
        ...                       "g/nll": np.array([0.5, 0.25, 2.0])})
        >>> out["g/score"].tolist(), out["g/label"].dtype.name, out["g/nll"].dtype.name
        ([1, 0, 1], 'uint8', 'float32')
    """
    return {name: _compact(name.rsplit("/", 1)[-1], np.asarray(values))
            for name, values in arrays.items()}


def compact_file(path: Path) -> tuple[int, int]:
    """Rewrite one ``<model>.npz`` in place, atomically; its size before and after."""
    before = path.stat().st_size
    with np.load(path, allow_pickle=False) as data:
        arrays = compact_arrays({name: data[name] for name in data.files})
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    write_bytes_atomic(path, buffer.getvalue())
    return before, len(buffer.getvalue())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m robustbnn.results.compact EXAMPLES_DIR ...``: every ``*.npz`` in place."""
    parser = argparse.ArgumentParser(
        prog="python -m robustbnn.results.compact",
        description="Rewrite a run's per-example values small (0/1 as uint8, ranking scores "
                    "as their ranks, float32 where exact); every report number stays.")
    parser.add_argument("folders", nargs="+", type=Path, help="examples/ folders of runs")
    args = parser.parse_args(argv)
    before = after = 0
    for folder in args.folders:
        files = sorted(folder.glob("*.npz"))
        if not files:
            sys.stderr.write(f"compact: error: {folder} holds no .npz files; pass a run's "
                             "examples/ folder\n")
            return 2
        for path in files:
            b, a = compact_file(path)
            before, after = before + b, after + a
    sys.stdout.write(f"compacted {before / 2**20:.1f} MB to {after / 2**20:.1f} MB\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
