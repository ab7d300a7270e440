"""The regression check: a regenerated leaderboard against the committed one.

Two references, chosen by what the committed folder holds:

* **the seed spread** (a render of several seeds, with ``all_columns_seeds.json``;
  :mod:`robustbnn.report.spread`): each new number must lie within that model's committed seed
  range [min, max], widened by the column's measured margin, ``spread_margin`` in
  ``tolerances.json`` (:func:`compare_spread`). This is the check that holds across machines:
  ``reports/default`` (seeds 0-2 of the default suite). A run of some of the committed models
  (``--models``) is judged on those; a model the committed seeds do not have fails;
* **one committed run** (the ``ci`` suite's ``reports/``): the rest of this docstring.

It compares the full table of every column, ``all_columns.json``, not the headline. A
committed folder rendered before the headline existed has no ``all_columns.json``; its
``leaderboard.json`` then held every column in the same format, and is read instead
(:func:`reference_file`). Every numeric column except the timing ones (wall-clock seconds
depend on the machine) is compared model by model: the check fails when
``|new − committed|`` exceeds the column's tolerance in ``tolerances.json`` (measured
seed-to-seed spread, see :mod:`robustbnn.report.tolerances`), or when a model or column
appeared or disappeared.
Text columns (best measure names, failed sanity checks) are not compared.

Example:
    >>> committed = {"columns": [{"key": "acc", "kind": "number", "timing": False}],
    ...              "rows": [{"model": "mlp", "acc": 0.95}]}
    >>> new = {"columns": committed["columns"], "rows": [{"model": "mlp", "acc": 0.90}]}
    >>> compare(committed, new, {"acc": 0.01})
    ['mlp acc: committed 0.95, new 0.9, |Δ| 0.05 > tolerance 0.01']
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from pathlib import Path

from robustbnn.errors import UserError
from robustbnn.report.spread import SEEDS_FILE, SeedSpread, read_seeds
from robustbnn.results import names

log = logging.getLogger(__name__)

__all__ = ["ALL_COLUMNS", "LEGACY", "REFRESH", "RegressionError", "check", "check_spread",
           "compare", "compare_spread", "load_margins", "load_tolerances", "reference_file"]

ALL_COLUMNS = "all_columns.json"  # every column (robustbnn.report.render)
LEGACY = "leaderboard.json"  # every column too, in folders rendered before the headline

REFRESH = ("if the change is deliberate, refresh the committed reports with `.ci/reports "
           "refresh` (reports/README.md)")
# How to write the seed spread and its margins again.
MEASURE = ("render the seeds together (`robustbnn report SEED0 SEED1 SEED2 --out DIR`) and "
           "measure the margins with `python -m robustbnn.report.tolerances SEED0 SEED1 SEED2 "
           "--out DIR/tolerances.json`, as `.ci/reports default` does (docs/reports.md)")


class RegressionError(UserError):
    """A regenerated number moved beyond its tolerance from the committed one."""


def _read(path: Path, what: str) -> dict:
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no {what} here; {REFRESH}") from None
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise UserError(f"{path} is not valid JSON ({err}); {REFRESH}") from None
    except OSError as err:
        raise UserError(f"cannot read {path} ({err.strerror or err}); {REFRESH}") from None
    if not isinstance(payload, dict):
        raise UserError(f"{path}: expected a JSON object, got a JSON {type(payload).__name__}; "
                        f"{REFRESH}")
    return payload


def load_tolerances(path: Path) -> dict[str, float]:
    """The per-column tolerances of a ``tolerances.json`` (its ``columns`` mapping).

    Raises:
        UserError: Naming the file (and the column) when it is missing, not JSON, or its
            ``columns`` is not a mapping of column key -> non-negative number.
    """
    return _numbers(path, "columns")


def load_margins(path: Path) -> dict[str, float]:
    """The per-column margins of the seed-spread check: ``spread_margin`` of a
    ``tolerances.json`` (:mod:`robustbnn.report.tolerances`).

    Raises:
        UserError: As :func:`load_tolerances`; also when the file has no ``spread_margin``
            (measured before the seed-spread check existed).
    """
    if "spread_margin" not in _read(path, "tolerances file"):
        raise UserError(f"{path} has no 'spread_margin' (the per-column margins of the "
                        f"seed-spread check); {MEASURE}")
    return _numbers(path, "spread_margin")


def _numbers(path: Path, field: str) -> dict[str, float]:
    """The mapping ``field`` of a tolerances file: column key -> non-negative number."""
    payload = _read(path, "tolerances file")
    columns = payload.get(field)
    if not isinstance(columns, dict):
        raise UserError(f"{path}: expected a {field!r} mapping of column key -> non-negative "
                        f"number; {REFRESH}")
    tolerances = {}
    for key, value in columns.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise UserError(f"{path}: the tolerance of column {key!r} is {value!r:.40}, not a "
                            f"non-negative number; {REFRESH}")
        if value == math.inf:  # json reads Infinity and 1e999 so; it would pass any change
            raise UserError(f"{path}: the tolerance of column {key!r} is Infinity, not a "
                            f"finite number; {REFRESH}")
        try:
            tolerances[key] = float(value)
        except OverflowError:  # an integer beyond the float range
            raise UserError(f"{path}: the tolerance of column {key!r} is too large for a "
                            f"float; {REFRESH}") from None
    return tolerances


def _fmt(value: float | None) -> str:
    return "missing" if value is None else f"{value:.6g}"


def _only_in(committed: Iterable[str], regenerated: Iterable[str], what: str) -> list[str]:
    """One line per column or model (``what``) found in only one of the two leaderboards."""
    regenerated = set(regenerated)
    return [f"{what} {name} is only in the "
            f"{'regenerated' if name in regenerated else 'committed'} leaderboard"
            for name in sorted(regenerated.symmetric_difference(committed))]


def compare(committed: dict, new: dict, tolerances: dict[str, float]) -> list[str]:
    """Every violation, one line each: model, column, committed and new value, tolerance.

    Args:
        committed: The committed ``all_columns.json`` payload.
        new: The regenerated ``all_columns.json`` payload.
        tolerances: Column key -> largest allowed absolute change.
    """
    checked = _checked(committed["columns"], new["columns"])
    problems = []
    new_keys = set(_checked(new["columns"], committed["columns"]))
    problems += _only_in(checked, new_keys, "column")
    old_rows = {r["model"]: r for r in committed["rows"]}
    new_rows = {r["model"]: r for r in new["rows"]}
    problems += _only_in(old_rows, new_rows, "model")
    for model, old in old_rows.items():
        if model not in new_rows:
            continue
        for key in checked:
            if key not in new_keys:
                continue
            if key not in tolerances:
                problems.append(f"{model} {key}: no tolerance for this column in "
                                "tolerances.json")
                continue
            a, b, tol = old.get(key), new_rows[model].get(key), tolerances[key]
            if a is None and b is None:
                continue
            if a is None or b is None or math.isnan(a) or math.isnan(b) or abs(b - a) > tol:
                delta = "" if a is None or b is None else f", |Δ| {abs(b - a):.6g}"
                problems.append(f"{model} {key}: committed {_fmt(a)}, new {_fmt(b)}{delta} > "
                                f"tolerance {tol:.6g}")
    return problems


def _checked(columns: list[dict], other: list[dict] | None = None) -> list[str]:
    """The keys of the numeric columns that are compared (every one but the timing ones, and
    with ``other`` the columns of the other side, those of another definition there)."""
    keys = [c["key"] for c in columns if c.get("kind", "number") == "number" and not c["timing"]
            and c.get("metric") != names.P_BETTER]  # derived from the others by the report
    if other is None:
        return keys
    moved = set(redefined(columns, other))
    return [k for k in keys if k not in moved]


def redefined(columns: list[dict], other: list[dict]) -> list[str]:
    """Keys of columns both lists have whose definition differs: a measure chosen out of
    sample on one side (``chosen``, :data:`robustbnn.report.column.OUT_OF_SAMPLE`), in sample
    on the other (a report of an older robustbnn). Such numbers are not comparable.

    Example:
        >>> redefined([{"key": "a", "chosen": "out_of_sample"}, {"key": "b"}],
        ...           [{"key": "a"}, {"key": "b"}])
        ['a']
    """
    theirs = {c["key"]: c.get("chosen", "") for c in other}
    return [c["key"] for c in columns
            if c["key"] in theirs and theirs[c["key"]] != c.get("chosen", "")]


def _say_redefined(columns: list[dict], other: list[dict], where: Path) -> None:
    moved = redefined(columns, other)
    if moved:
        log.warning("%d column(s) not compared with %s: their measure is chosen out of sample "
                    "on one side and in sample on the other (an older robustbnn): %s",
                    len(moved), where, ", ".join(moved))


def _seeds_text(seeds: list[int]) -> str:
    return "seed " + str(seeds[0]) if len(seeds) == 1 else "seeds " + ", ".join(map(str, seeds))


def compare_spread(committed: SeedSpread, new: dict, margins: dict[str, float]) -> list[str]:
    """Every number of ``new`` outside its committed seed range widened by its margin.

    A new value ``v`` of model ``m`` and column ``k`` passes when ``min − margin ≤ v ≤ max +
    margin``, with [min, max] the range of ``m``'s committed per-seed values of ``k``. A value
    missing (or NaN) passes only where a committed seed was missing too. Only the models of
    ``new`` are judged (a run of some models passes on those); a model of ``new`` that has no
    committed seeds is a violation.

    Args:
        committed: The committed per-seed values (:func:`robustbnn.report.spread.read_seeds`).
        new: The regenerated ``all_columns.json`` payload (one run, or the mean of several).
        margins: Column key -> margin (``spread_margin`` of ``tolerances.json``).

    Returns:
        One line per violation, naming model, column, value, range, seeds and margin.

    Example:
        >>> spread = SeedSpread([0, 1], [{"key": "acc", "timing": False}],
        ...                     {"mlp": {"acc": [0.90, 0.92]}})
        >>> new = {"columns": [{"key": "acc", "kind": "number", "timing": False}],
        ...        "rows": [{"model": "mlp", "acc": 0.95}]}
        >>> print(*compare_spread(spread, new, {"acc": 0.01}))  # doctest: +NORMALIZE_WHITESPACE
        mlp acc: new 0.95 is outside the committed range [0.9, 0.92] of seeds 0, 1 widened by
        the margin 0.01
    """
    checked = _checked(committed.columns, new["columns"])
    problems = []
    new_keys = set(_checked(new["columns"], committed.columns))
    problems += _only_in(checked, new_keys, "column")
    new_rows = {r["model"]: r for r in new["rows"]}
    # A run of a subset of the models (--models) is judged on those; a model without committed
    # seeds cannot be judged, and a run sharing no model with them judges nothing.
    problems += [line for line in _only_in(committed.values, new_rows, "model")
                 if "only in the regenerated" in line]
    if new_rows and not set(new_rows) & set(committed.values):
        problems.append("no model of the run is in the committed leaderboard")
    seeds = _seeds_text(committed.seeds)
    for model, row in committed.values.items():
        if model not in new_rows:
            continue
        for key in checked:
            if key not in new_keys:
                continue
            if key not in margins:
                problems.append(f"{model} {key}: no spread_margin for this column in "
                                "tolerances.json")
                continue
            seen = [v for v in row.get(key, []) if v is not None]
            value, margin = new_rows[model].get(key), margins[key]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                if len(seen) < len(committed.seeds):
                    continue  # a committed seed had no number either
                problems.append(f"{model} {key}: new value missing, committed "
                                f"{', '.join(map(_fmt, seen))} at {seeds}")
                continue
            if not seen:
                problems.append(f"{model} {key}: new {_fmt(value)}, but no committed seed "
                                "has a number")
                continue
            lo, hi = min(seen), max(seen)
            slack = 1e-9 * max(1.0, abs(lo), abs(hi))  # the 10 digits the files keep
            if not lo - margin - slack <= value <= hi + margin + slack:
                problems.append(f"{model} {key}: new {_fmt(value)} is outside the committed "
                                f"range [{_fmt(lo)}, {_fmt(hi)}] of {seeds} widened by the "
                                f"margin {margin:.6g}")
    return problems


def check_spread(reference_dir: Path, new_dir: Path, *, tolerances: Path | None = None) -> int:
    """Judge the regenerated ``all_columns.json`` against the committed seed spread.

    Args:
        reference_dir: The committed multi-seed reports (``all_columns_seeds.json``,
            ``tolerances.json`` with ``spread_margin``).
        new_dir: A freshly rendered report folder (its ``all_columns.json``).
        tolerances: Tolerances file (default ``reference_dir/tolerances.json``).

    Returns:
        How many numbers were compared.

    Raises:
        RegressionError: Naming every number outside its widened range.
        UserError: For a missing or unreadable file, or a tolerances file without margins.
    """
    reference_dir, new_dir = Path(reference_dir), Path(new_dir)
    seeds_file, new_file = reference_dir / SEEDS_FILE, new_dir / ALL_COLUMNS
    committed = read_seeds(seeds_file, MEASURE)
    new = _read(new_file, f"regenerated {ALL_COLUMNS}")
    margins = load_margins(tolerances or reference_dir / "tolerances.json")
    _say_redefined(committed.columns, new["columns"], seeds_file)
    problems = compare_spread(committed, new, margins)
    if problems:
        raise RegressionError(
            f"regression check failed: {len(problems)} number(s) of {new_file} outside the "
            f"committed seed spread of {seeds_file}: " + "; ".join(problems)
            + f". If the change is deliberate, {MEASURE}")
    judged = set(committed.values) & {r["model"] for r in new["rows"]}
    skipped = sorted(set(committed.values) - judged)
    if skipped:
        log.warning("%d committed model(s) not in %s, not judged: %s", len(skipped), new_dir,
                    ", ".join(skipped))
    return len(_checked(committed.columns, new["columns"])) * len(judged)


def reference_file(folder: Path) -> Path:
    """The file of ``folder`` that holds every column: :data:`ALL_COLUMNS`, or
    :data:`LEGACY` in a folder rendered before the headline.

    Example:
        >>> reference_file(Path("/nowhere")).name
        'all_columns.json'
    """
    folder = Path(folder)
    if not (folder / ALL_COLUMNS).exists() and (folder / LEGACY).is_file():
        return folder / LEGACY
    return folder / ALL_COLUMNS


def check(reference_dir: Path, new_dir: Path, *, tolerances: Path | None = None) -> int:
    """Compare the regenerated full table with the committed one (:func:`reference_file`), or,
    when ``reference_dir`` holds ``all_columns_seeds.json``, with its seed spread
    (:func:`check_spread`).

    Args:
        reference_dir: The committed reports (``all_columns.json``, or an older
            ``leaderboard.json`` of every column; ``tolerances.json``).
        new_dir: A freshly rendered report folder (its ``all_columns.json``).
        tolerances: Tolerances file (default ``reference_dir/tolerances.json``).

    Returns:
        How many numbers were compared.

    Raises:
        RegressionError: Naming every violation and how to refresh.
        UserError: For a missing or unreadable file.
    """
    reference_dir, new_dir = Path(reference_dir), Path(new_dir)
    if (reference_dir / SEEDS_FILE).is_file():
        return check_spread(reference_dir, new_dir, tolerances=tolerances)
    old_file, new_file = reference_file(reference_dir), new_dir / ALL_COLUMNS
    committed = _read(old_file, f"committed {ALL_COLUMNS} (or {LEGACY})")
    new = _read(new_file, f"regenerated {ALL_COLUMNS}")
    tol = load_tolerances(tolerances or reference_dir / "tolerances.json")
    _say_redefined(committed["columns"], new["columns"], old_file)
    problems = compare(committed, new, tol)
    if problems:
        raise RegressionError(
            f"regression check failed: {len(problems)} difference(s) between "
            f"{new_file} and the committed {old_file}: "
            + "; ".join(problems) + f". {REFRESH}")
    return sum(1 for c in committed["columns"] if c["kind"] == "number" and not c["timing"]
               ) * len(committed["rows"])
