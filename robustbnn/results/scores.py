"""Per-example OOD scores: one ``.npz`` per model and OOD set, so any metric can be recomputed.

Layout: ``<run>/scores/<model>/<dataset>.npz`` with one float64 array per uncertainty measure
(in-distribution test points first, then the OOD points) and ``is_ood`` (0/1, same length).
Higher scores mean more uncertain, as in :mod:`robustbnn.ood.uncertainty`. Model and dataset
names become file names through :func:`robustbnn.results.paths.safe_name`, so no name can
place a file outside ``<run>/scores``.

Example:
    >>> import numpy as np, tempfile
    >>> from pathlib import Path
    >>> run = Path(tempfile.mkdtemp())
    >>> path = write_scores(run, "mlp", "uniform", {"bald": np.array([0.1])},
    ...                     {"bald": np.array([0.9, 0.8])})
    >>> labels, scores = read_scores(path)
    >>> labels.tolist(), scores["bald"].tolist()
    ([0, 1, 1], [0.1, 0.9, 0.8])
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from robustbnn.results.paths import child, safe_name
from robustbnn.results.store import write_bytes_atomic

__all__ = ["read_scores", "scores_path", "write_scores"]


def scores_path(run_dir: Path, model: str, dataset: str) -> Path:
    """Where the scores of ``model`` on OOD set ``dataset`` live (``:`` becomes ``_``).

    Raises:
        UnsafeNameError: For a name that cannot become a file name inside ``run_dir/scores``.
    """
    folder = child(Path(run_dir) / "scores", safe_name(model), name=model)
    return child(folder, f"{safe_name(dataset.replace(':', '_'))}.npz", name=dataset)


def write_scores(run_dir: Path, model: str, dataset: str, scores_in: dict[str, np.ndarray],
                 scores_out: dict[str, np.ndarray]) -> Path:
    """Write one model's in- and out-of-distribution scores atomically; return the path.

    Raises:
        ValueError: If the two dicts name different measures.
    """
    if set(scores_in) != set(scores_out):
        raise ValueError(f"in and out scores name different measures: {sorted(scores_in)} vs "
                         f"{sorted(scores_out)}")
    path = scores_path(run_dir, model, dataset)
    n_in, n_out = len(next(iter(scores_in.values()))), len(next(iter(scores_out.values())))
    arrays = {m: np.r_[scores_in[m], scores_out[m]].astype(np.float64) for m in scores_in}
    arrays["is_ood"] = np.r_[np.zeros(n_in, np.int8), np.ones(n_out, np.int8)]
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    write_bytes_atomic(path, buffer.getvalue())
    return path


def read_scores(path: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(is_ood, {measure: scores})`` from a file written by :func:`write_scores`."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays.pop("is_ood").astype(np.int64), arrays
