"""One distinct line style per model, so figures with every model tell them apart.

Matplotlib's default cycle has ten colours: with 13 or more models two share one. Each model
gets a colour from the ten and a marker from seven; the pair repeats only after 70 models
(lcm(10, 7)), and the line style changes every ten models as a third cue.

Example:
    >>> styles = model_styles([f"m{i}" for i in range(13)])
    >>> len({(s["color"], s["marker"]) for s in styles.values()})
    13
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["model_styles"]

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf")  # matplotlib's tab10
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")


def model_styles(models: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{model: {"color", "marker", "ls"}}`` in the order given (keyword arguments of
    ``Axes.plot``)."""
    return {model: {"color": COLORS[i % len(COLORS)], "marker": MARKERS[i % len(MARKERS)],
                    "ls": LINESTYLES[(i // len(COLORS)) % len(LINESTYLES)]}
            for i, model in enumerate(dict.fromkeys(models))}
