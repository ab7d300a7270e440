"""The tidy result record and the direction of every metric (stated once, here)."""

from __future__ import annotations

import dataclasses

import pandas as pd

COLUMNS = ("model", "seed", "task", "dataset", "setting", "measure", "metric", "value")

# True when a larger value is better. The leaderboard sorts by this table.
HIGHER_IS_BETTER: dict[str, bool] = {
    "accuracy": True,
    "nll": False,
    "ece": False,
    "auroc": True,
    "aupr_in": True,
    "aupr_out": True,
    "fpr_at_95_tpr": False,
    "mean_uncertainty": True,
    "adversary_detection": True,
    "error_detection": True,
    "gradient_nonzero": True,  # under attack, a model should notice (higher = more uncertain)
    "seconds": False,
    "target_success": False,  # of the targeted attack: lower = more robust
    "seconds_per_1000_predictions": False,
    "parameters": False,
}


@dataclasses.dataclass(frozen=True)
class Result:
    """One measured number. ``setting`` is a ``key=value;...`` string of the protocol knobs."""

    model: str
    seed: int
    task: str
    dataset: str
    setting: str
    measure: str
    metric: str
    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))


def setting(**knobs: object) -> str:
    """Render protocol knobs as a stable ``key=value;...`` string (insertion order).

    Example:
        >>> setting(eps=0.1, S_attack=32)
        'eps=0.1;S_attack=32'
    """
    def fmt(v: object) -> str:
        return f"{v:g}" if isinstance(v, float) else str(v)

    return ";".join(f"{k}={fmt(v)}" for k, v in knobs.items())


def knobs(setting: str) -> dict[str, str]:
    """Parse a ``key=value;...`` setting string (the inverse of :func:`setting`).

    Example:
        >>> knobs("eps=0.1;S_attack=32")
        {'eps': '0.1', 'S_attack': '32'}
    """
    return dict(part.split("=", 1) for part in setting.split(";") if part)


def with_knobs(rows: pd.DataFrame, *keys: str) -> pd.DataFrame:
    """``rows`` plus one float column per knob parsed from ``setting`` (NaN where absent)."""
    parsed = rows["setting"].map(knobs)
    out = rows.copy()
    for key in keys:
        out[key] = parsed.map(lambda d, k=key: float(d[k]) if k in d else float("nan"))
    return out
