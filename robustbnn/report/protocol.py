"""A run's protocol fields: what :func:`robustbnn.report.published.differences` compares.

The fields are dotted paths into what a run actually did: ``bench.<field>`` of its
:class:`~robustbnn.suites.BenchConfig`, ``model.<field>`` of the model's resolved config, and
``setting.<knob>`` of the result row (counts such as ``n_in``/``n_out``). Nothing here is
declared by hand, so a run cannot claim a protocol it did not follow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from robustbnn.suites import BenchConfig

__all__ = ["run_fields", "run_fields_of"]


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


def run_fields_of(cfg: BenchConfig, model: str,
                  setting: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """:func:`run_fields` of a bench config, resolving ``model``'s config from its overrides."""
    from robustbnn.settings import model_config  # the run layer imports report

    mcfg = model_config(model, cfg.overrides, cfg.shrink)
    return run_fields(dataclasses.asdict(cfg), dataclasses.asdict(mcfg), setting)
