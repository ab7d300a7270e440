"""A run's protocol fields: what :func:`robustbnn.report.published.differences` compares.

The fields are dotted paths into what a run actually did: ``bench.<field>`` of its bench
config, ``model.<field>`` of the model's resolved config as its training cell recorded it in
``run.json`` (``models.<name>.config``), and ``setting.<knob>`` of the result row (counts such
as ``n_in``/``n_out``). Nothing here is declared by hand, so a run cannot claim a protocol it
did not follow, and nothing here resolves a config: the fields come from the results folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["recorded_model_config", "run_fields"]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def run_fields(bench: Mapping[str, Any], model: Mapping[str, Any],
               setting: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Flatten a run's bench config, model config and a row's setting into dotted fields."""
    out = {f"bench.{k}": _plain(v) for k, v in bench.items()}
    out |= {f"model.{k}": _plain(v) for k, v in model.items()}
    out |= {f"setting.{k}": _plain(v) for k, v in (setting or {}).items()}
    return out


def recorded_model_config(run: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The config ``model`` trained with, as the run's ``run.json`` records it.

    Args:
        run: A parsed ``run.json``.
        model: A model name of the run.

    Returns:
        Its resolved config (``models.<model>.config``); empty when the run recorded none
        (its training cell did not finish), so no ``model.*`` field of a protocol matches.
    """
    return dict(run.get("models", {}).get(model, {}).get("config", {}))
