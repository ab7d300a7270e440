"""The per-example values behind result rows: what intervals and paired comparisons resample.

A row whose number is computed from test examples (a mean over them, such as an accuracy or a
mean NLL; a ranking of them, such as an AUROC; the ECE of their confidences) keeps the values
it was computed from. Rows of one *group* (one task, dataset, setting and measure of one
model and run: the clean accuracy, NLL, ECE and Brier score; the four ranking metrics of one
OOD set and measure) share their examples, and hold them as named *parts* of equal length:

* a part named by a metric (``accuracy``, ``nll``, ``all_k_accuracy``, ...): the metric is the
  mean of that part;
* ``confidence`` (beside ``accuracy``, 0/1): the ECE of those confidences;
* ``score`` and ``label`` (1 = the positive class): the ranking metrics.

:mod:`robustbnn.report.intervals` says which metric reads which parts. A task attaches them
with :func:`attach` (``Context.result(..., examples=...)``); the runner moves them into the
cell's arrays under :data:`PREFIX` (:func:`take`); the run keeps one file per model,
``<run>/examples/<model>.npz``, with arrays named ``<group key>/<part>``
(:func:`write_examples`, :func:`read_examples`).

Example:
    >>> import numpy as np, tempfile
    >>> from pathlib import Path
    >>> row = {"task": "clean", "dataset": "d", "setting": {}, "measure": "",
    ...        "metric": "accuracy", "value": 0.5}
    >>> rows, arrays = take([attach(row, accuracy=np.array([1.0, 0.0]))])
    >>> sorted(rows[0]), sorted(arrays)  # doctest: +ELLIPSIS
    (['dataset', 'measure', 'metric', 'setting', 'task', 'value'], ['ex/.../accuracy'])
    >>> run = Path(tempfile.mkdtemp())
    >>> _ = write_examples(run, "mlp", {k[len(PREFIX):]: v for k, v in arrays.items()})
    >>> read_examples(run, "mlp")[group_key(row)]["accuracy"].tolist()
    [1.0, 0.0]
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from robustbnn.results.paths import child, safe_name
from robustbnn.results.store import write_bytes_atomic

__all__ = ["FIELD", "PREFIX", "attach", "examples_path", "group_key", "read_examples",
           "read_run_examples", "take", "write_examples"]

log = logging.getLogger(__name__)

PREFIX = "ex/"  # the names of a cell's arrays that hold examples start with this
FIELD = "examples"  # the key of a row dict that carries its examples until the runner takes them


def group_key(row: Mapping[str, Any]) -> str:
    """The key of a row's example group: a digest of its task, dataset, setting and measure
    (not its metric: the metrics of one group share examples), 16 hex digits."""
    ident = {k: row[k] for k in ("task", "dataset", "setting", "measure")}
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def attach(row: dict[str, Any], **parts: object) -> dict[str, Any]:
    """``row`` (a result row's JSON dict) carrying the per-example ``parts`` its value was
    computed from (1-D, one length); returns the row.

    Raises:
        ValueError: For parts of different lengths or not 1-D.
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in parts.items()}
    lengths = {k: a.shape for k, a in arrays.items()}
    if any(len(s) != 1 for s in lengths.values()) or len(set(lengths.values())) > 1:
        raise ValueError(f"the examples of a row must be 1-D arrays of one length, got {lengths}")
    row[FIELD] = arrays
    return row


def take(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """The rows without their examples, and the examples as cell arrays
    (``ex/<group key>/<part>``). Two rows of one group may carry one part only if equal.

    Raises:
        ValueError: When two rows of one group carry different values for one part.
    """
    out, arrays = [], {}
    for row in rows:
        row = dict(row)
        parts = row.pop(FIELD, None) or {}
        key = group_key(row) if parts else ""
        for part, values in parts.items():
            name = f"{PREFIX}{key}/{part}"
            if name in arrays and not np.array_equal(arrays[name], values):
                raise ValueError(f"rows of one group ({row['task']}, {row['measure']!r}) carry "
                                 f"different examples for {part!r}")
            arrays[name] = values
        out.append(row)
    return out, arrays


def examples_path(run_dir: Path, model: str) -> Path:
    """Where the examples of ``model`` in a run live.

    Raises:
        UnsafeNameError: For a model name that cannot become a file name there.
    """
    return child(Path(run_dir) / "examples", f"{safe_name(model)}.npz", name=model)


def write_examples(run_dir: Path, model: str, arrays: Mapping[str, np.ndarray]) -> Path:
    """Write the examples of ``model`` (``{"<group key>/<part>": values}``) atomically."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path = examples_path(run_dir, model)
    write_bytes_atomic(path, buffer.getvalue())
    return path


def read_examples(run_dir: Path, model: str) -> dict[str, dict[str, np.ndarray]]:
    """Per group key, its parts, as :func:`write_examples` wrote them (empty when the run has
    no examples of ``model``: a run of an older robustbnn)."""
    path = examples_path(run_dir, model)
    if not path.is_file():
        return {}
    groups: dict[str, dict[str, np.ndarray]] = {}
    with np.load(path, allow_pickle=False) as data:
        for name in data.files:
            key, part = name.split("/", 1)
            groups.setdefault(key, {})[part] = data[name]
    return groups


def read_run_examples(run_dir: Path, models: Iterable[str]
                      ) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """Per model, :func:`read_examples`; a model whose file is unreadable gets none, with a
    warning (its numbers get intervals over runs only)."""
    found: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for model in dict.fromkeys(models):
        try:
            found[model] = read_examples(run_dir, model)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
            log.warning("%s: the examples of %s are unreadable (%s); its numbers get no "
                        "interval over test examples", run_dir, model, err)
            found[model] = {}
    return found
