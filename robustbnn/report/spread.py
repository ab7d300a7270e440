"""The seed spread of a multi-seed render: each column's per-seed values (a JSON file).

``all_columns.json`` of several runs holds mean ± std per model and column; three seeds are
too few for a standard deviation to say where a fourth run may land. So a render of several
runs also writes :data:`SEEDS_FILE`: per model and numeric column, the list of per-seed values
in the order of ``seeds``, and the columns (key, title, metric, format, timing). The regression
check judges a new run against each model's seed range [min, max], widened by a measured
margin (:func:`robustbnn.report.regression.compare_spread`).

A value that was not measured, or is not a finite number, is null. Numbers are written at 10
significant digits (:func:`robustbnn.report.leaderboard.tidy`); counts as integers.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pandas as pd

from robustbnn.errors import UserError
from robustbnn.report.column import Column
from robustbnn.report.columns import compute_columns
from robustbnn.report.leaderboard import tidy
from robustbnn.report.markdown import with_run

__all__ = ["SEEDS_FILE", "SeedSpread", "read_seeds", "seed_values", "seeds_json"]

SEEDS_FILE = "all_columns_seeds.json"
ABOUT = ("per model and numeric column of all_columns.json, the value of each run (seed), in "
         "the order of 'seeds'; null = not measured or not finite. The regression check "
         "judges a new run against each model's seed range (robustbnn report NEW --check DIR)")


@dataclasses.dataclass(frozen=True)
class SeedSpread:
    """The parsed :data:`SEEDS_FILE`.

    Attributes:
        seeds: The seeds, in run order.
        columns: Per numeric column, its description (``key``, ``title``, ``metric``,
            ``fmt``, ``timing``).
        values: Model -> column key -> per-seed values (None: not measured or not finite).
    """

    seeds: list[int]
    columns: list[dict]
    values: dict[str, dict[str, list[float | None]]]


def _value(value: float, col: Column) -> float | int | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value) if col.fmt == "d" else tidy(value)


def seed_values(results: pd.DataFrame) -> SeedSpread:
    """The per-seed values of every numeric column of ``results`` (several runs).

    Args:
        results: Tidy results with a ``run`` column (:func:`robustbnn.report.render.load_runs`).
    """
    results = with_run(results)
    columns, values = compute_columns(results)
    numeric = [c for c in columns if c.kind == "number"]
    order = results.drop_duplicates("run").sort_values("run")
    runs, seeds = list(order["run"]), [int(s) for s in order["seed"]]
    table: dict[str, dict[str, list[float | None]]] = {}
    for model in sorted(dict.fromkeys(str(m) for m in results["model"])):
        table[model] = {}
        for col in numeric:
            series = values[col.key]
            table[model][col.key] = [
                _value(float(series.get((model, run), float("nan"))), col) for run in runs]
    described = [{"key": c.key, "title": c.title, "metric": c.metric, "fmt": c.fmt,
                  "timing": c.timing, **({"chosen": c.chosen} if c.chosen else {})}
                 for c in numeric]
    return SeedSpread(seeds, described, table)


def seeds_json(spread: SeedSpread) -> str:
    """:data:`SEEDS_FILE`'s text: strict JSON, one line per column and per (model, column),
    so a moved number changes one line of a diff."""
    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    def block(items: list[str], indent: str) -> str:
        return ("\n" + ",\n".join(indent + i for i in items) + "\n" + indent[:-1]) if items else ""

    models = [f"{dump(m)}: {{{block([f'{dump(k)}: {dump(v)}' for k, v in row.items()], '   ')}}}"
              for m, row in spread.values.items()]
    top = [f'"about": {dump(ABOUT)}', f'"seeds": {dump(spread.seeds)}',
           f'"columns": [{block([dump(c) for c in spread.columns], "  ")}]',
           f'"models": {{{block(models, "  ")}}}']
    return "{" + block(top, " ") + "}\n"


def read_seeds(path: Path, refresh: str) -> SeedSpread:
    """Parse a :data:`SEEDS_FILE`.

    Args:
        path: The file.
        refresh: How to write it again (the end of every message).

    Raises:
        UserError: Naming the file and what is wrong with it.
    """
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no per-seed values here; {refresh}") from None
    except (ValueError, RecursionError) as err:
        raise UserError(f"{path} is not valid JSON ({err}); {refresh}") from None
    except OSError as err:
        raise UserError(f"cannot read {path} ({err.strerror or err}); {refresh}") from None
    problem = _problem(payload)
    if problem:
        raise UserError(f"{path}: {problem}; {refresh}")
    return SeedSpread(payload["seeds"], payload["columns"], payload["models"])


def _problem(payload: object) -> str | None:
    """What is wrong with a parsed :data:`SEEDS_FILE`, or None."""
    if not isinstance(payload, dict):
        return f"expected a JSON object, got a JSON {type(payload).__name__}"
    seeds, columns, models = payload.get("seeds"), payload.get("columns"), payload.get("models")
    if not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds):
        return "'seeds' must be a list of integers"
    if not isinstance(columns, list) or not all(
            isinstance(c, dict) and isinstance(c.get("key"), str)
            and isinstance(c.get("timing"), bool) for c in columns):
        return "'columns' must be a list of objects with a 'key' and a 'timing' flag"
    if not isinstance(models, dict):
        return "'models' must map each model to its columns"
    for model, row in models.items():
        if not isinstance(row, dict):
            return f"model {model!r} must map column keys to per-seed lists"
        for key, values in row.items():
            if (not isinstance(values, list) or len(values) != len(seeds)
                    or not all(v is None or (isinstance(v, int | float)
                                             and not isinstance(v, bool)) for v in values)):
                return (f"{model} {key}: expected {len(seeds)} per-seed numbers or nulls, got "
                        f"{values!r:.60}")
    return None
