"""Published numbers that our results correspond to, read from ``published.json``.

The file holds BHN Tables 2 and 3 (Krueger et al. 2017) as the paper prints them (percent),
with their provenance and caveats; this module only maps our names onto them.

Example:
    >>> published("mc_dropout", "notmnist", "max_prob", "auroc")
    97.78
    >>> published("mlp", "heldout:4", "bald", "auroc") is None  # no MLP BALD column
    True
"""

from __future__ import annotations

import functools
import json
from importlib import resources

__all__ = ["published", "source"]


@functools.cache
def _table() -> dict:
    return json.loads(resources.files("robustbnn.report").joinpath("published.json").read_text(
        encoding="utf-8"))


def source() -> str:
    """Where the published numbers come from, and how to read them."""
    data = _table()
    return f"{data['source']}; {data['scale']}. Caveats: {data['caveats']}"


def published(model: str, dataset: str, measure: str, metric: str) -> float | None:
    """The published value (percent) for one of our OOD results, or None if there is none.

    Args:
        model: Our model name (``mlp``, ``mc_dropout``, ``bhn_iaf``, ``bhn_realnvp``).
        dataset: Our OOD set name (``uniform``, ``notmnist``, ``heldout:4``, ...).
        measure: Our uncertainty measure (``max_prob`` is BHN's "variation ratio").
        metric: ``auroc``, ``aupr_in`` (PR(+)) or ``aupr_out`` (PR(−)).
    """
    data = _table()
    row = data["models"].get(model)
    if row is None:
        return None
    if dataset.startswith("heldout:"):
        name = row if isinstance(row, str) else row["table3"]
        cells = data["table3"]["values"].get(name, {}).get(measure, {})
    else:
        if measure != data["table2"]["measure"]:
            return None
        name = row if isinstance(row, str) else row["table2"]
        cells = data["table2"]["values"].get(name, {})
    return cells.get(dataset, {}).get(metric)
