"""Published numbers and the protocol each holds under, read from ``published.json``.

Every entry of a table is one number as the paper prints it, the result row it corresponds to
(``match``: task, dataset, measure, metric), the paper's row label (mapped to our model names
by the table's ``models``) and its **protocol**: dotted fields of a run that must all hold for
our number to be comparable (``bench.<BenchConfig field>``, ``model.<model config field>``,
``setting.<result-row knob>``; ``{"any_of": [...]}`` accepts several values). A report prints
Δ only where :func:`differences` is empty, and otherwise shows the published number as a
reference labelled with what differs.

Example:
    >>> [e.value for e in find("mc_dropout", task="ood", dataset="notmnist",
    ...                        measure="max_prob", metric="auroc")]
    [97.78]
    >>> differences({"model.hidden": [256, 256, 256]}, {"model.hidden": [400, 400]})
    ['model.hidden: published [256, 256, 256], this run [400, 400]']
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

__all__ = ["Entry", "Table", "differences", "find", "table", "tables"]

MISSING = "(not set)"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One published number.

    Attributes:
        table: The table's name (``bhn_table2``, ...).
        row: The paper's row label (``MC dropout``).
        column: The paper's column label.
        models: Our model names the row corresponds to.
        match: The result-row fields it corresponds to (task, dataset, measure, metric).
        value: The number as printed (in the table's unit).
        protocol: The fields of a run under which it holds.
        transform: ``""``, or ``"error"`` when the paper prints 1 − our accuracy.
    """

    table: str
    row: str
    column: str
    models: tuple[str, ...]
    match: dict[str, Any]
    value: float
    protocol: dict[str, Any]
    transform: str = ""

    def ours(self, value: float, unit: str) -> float:
        """Our value (a fraction, or bits/counts as stored) in the paper's unit and sense."""
        if self.transform == "error":
            value = 1.0 - value
        return 100.0 * value if unit == "percent" else value


@dataclasses.dataclass(frozen=True)
class Table:
    """A published table: title, source, unit, note and its entries."""

    name: str
    title: str
    source: str
    unit: str
    note: str
    entries: tuple[Entry, ...]


@functools.cache
def _data() -> dict[str, Any]:
    text = resources.files("robustbnn.report").joinpath("published.json").read_text(
        encoding="utf-8")
    return json.loads(text)


@functools.cache
def tables() -> dict[str, Table]:
    """Every published table, by name."""
    out = {}
    for name, t in _data()["tables"].items():
        shared = t.get("protocol", {})  # the fields every entry of the table holds under
        entries = tuple(
            Entry(name, e["row"], e["column"], tuple(t["models"].get(e["row"], ())),
                  e["match"], float(e["value"]), {**shared, **e.get("protocol", {})},
                  e.get("transform", ""))
            for e in t["entries"])
        out[name] = Table(name, t["title"], t["source"], t["unit"], t.get("note", ""), entries)
    return out


def table(name: str) -> Table:
    """One published table (``KeyError`` names the known ones)."""
    known = tables()
    if name not in known:
        raise KeyError(f"no published table {name!r}; known: {sorted(known)}")
    return known[name]


def find(model: str, **match: Any) -> list[Entry]:
    """Every published entry for our ``model`` whose ``match`` fields equal ``match``."""
    return [e for t in tables().values() for e in t.entries
            if model in e.models and all(k in match and match[k] == v for k, v in e.match.items())]


def _same(published: Any, ours: Any) -> bool:
    if isinstance(published, Mapping) and "any_of" in published:
        return any(_same(p, ours) for p in published["any_of"])
    if isinstance(published, (list, tuple)) and isinstance(ours, (list, tuple)):
        return list(published) == list(ours)
    return published == ours


def _show(value: Any) -> str:
    if isinstance(value, Mapping) and "any_of" in value:
        return " or ".join(_show(v) for v in value["any_of"])
    if isinstance(value, tuple):
        value = list(value)
    return str(value)


def differences(protocol: Mapping[str, Any], run: Mapping[str, Any]) -> list[str]:
    """Each field of a published ``protocol`` that the ``run``'s fields do not match, labelled.

    Args:
        protocol: The entry's protocol (dotted field -> published value).
        run: The run's fields (see :func:`robustbnn.report.protocol.run_fields`).

    Returns:
        ``"field: published X, this run Y"`` per difference; empty when comparable.
    """
    out = []
    for field, value in protocol.items():
        ours = run.get(field, MISSING)
        if not _same(value, ours):
            out.append(f"{field}: published {_show(value)}, this run {_show(ours)}")
    return out
