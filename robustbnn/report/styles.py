"""One distinct line style per model, so figures with every model tell them apart.

Matplotlib's default cycle has ten colours: with 11 or more models two share one. Each model
gets one of 20 colours (matplotlib's tab20, its ten dark shades first, then their ten light
shades, so neighbouring models differ strongly and the first ten keep tab10's colours) and a
marker from seven; the pair repeats only after 140 models (lcm(20, 7)). The line style
changes every ten models as a third cue, so a light shade is never drawn like its dark one.

Example:
    >>> styles = model_styles([f"m{i}" for i in range(20)])
    >>> len({s["color"] for s in styles.values()})
    20
    >>> styles["m0"]["color"] == COLORS[0] and styles["m10"]["ls"] != styles["m0"]["ls"]
    True
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["model_styles", "styles_for"]

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf",  # tab20's dark shades (= tab10)
          "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
          "#c7c7c7", "#dbdb8d", "#9edae5")  # tab20's light shades, in the same order
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")
LINESTYLE_EVERY = 10  # models per line style


def model_styles(models: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{model: {"color", "marker", "ls"}}`` in the order given (keyword arguments of
    ``Axes.plot``)."""
    return {model: {"color": COLORS[i % len(COLORS)], "marker": MARKERS[i % len(MARKERS)],
                    "ls": LINESTYLES[(i // LINESTYLE_EVERY) % len(LINESTYLES)]}
            for i, model in enumerate(dict.fromkeys(models))}


def styles_for(models: Iterable[str]) -> dict[str, dict[str, str]]:
    """:func:`model_styles` of the sorted distinct ``models``: every figure of a render passes
    all the results' models, so a model has one look in all of them, whatever the row order.

    Example:
        >>> styles_for(["b", "a", "b"]) == model_styles(["a", "b"])
        True
    """
    return model_styles(sorted(set(models)))
