"""Figures tell every model apart (a colour-and-marker pair per model, 20 distinct colours, the
same in every figure) and print plain tick labels."""

from __future__ import annotations

from pathlib import Path

import matplotlib.colors as mcolors
import pytest

from robustbnn.report import figures, robust_figures, shift_figures
from robustbnn.report.styles import model_styles
from robustbnn.results.store import results_frame

from ._runs import pgd_rows, rows
from .test_shift_report import shift_rows

MODELS = [f"model{i}" for i in range(14)]


def test_fourteen_models_get_fourteen_distinct_looks_in_a_stable_order() -> None:
    styles = model_styles(MODELS)
    looks = {(s["color"], s["marker"]) for s in styles.values()}
    assert len(looks) == 14
    assert model_styles(MODELS[:3]) == {m: styles[m] for m in MODELS[:3]}


def test_twenty_models_get_twenty_distinct_colours() -> None:
    styles = model_styles([f"model{i}" for i in range(20)])
    colours = {mcolors.to_hex(s["color"]) for s in styles.values()}
    assert len(colours) == 20


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the report functions draw, kept instead of saved."""
    kept = []

    def keep(fig, path):  # noqa: ANN001
        kept.append(fig)
        return path

    for module in (figures, robust_figures, shift_figures):
        monkeypatch.setattr(module, "save_figure", keep)
    return kept


def _looks(fig) -> list[tuple[str, str]]:  # noqa: ANN001
    lines = [line for ax in fig.axes for line in ax.get_lines() if not line.get_label()
             .startswith("_")]
    return [(mcolors.to_hex(line.get_color()), line.get_marker()) for line in lines]


def test_the_fgsm_overview_draws_every_model_distinctly(drawn: list, tmp_path: Path) -> None:
    frame = results_frame([r for m in MODELS for r in rows(m)])
    figures.fgsm_overview(frame, tmp_path / "f.png")
    (fig,) = drawn
    per_panel = len(_looks(fig)) // len(fig.axes)
    assert per_panel == 14
    assert len(set(_looks(fig)[:per_panel])) == 14  # matplotlib's cycle alone repeats at 10


def _tick_labels(fig) -> list[tuple[str, str]]:  # noqa: ANN001
    """``(axis scale, label text)`` of every major and minor tick label of every axis."""
    fig.canvas.draw()
    out = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks = axis.get_ticklabels(which="both")
            out += [(axis.get_scale(), t.get_text()) for t in ticks if t.get_text()]
    return out


def test_every_figure_prints_plain_tick_labels(drawn: list, tmp_path: Path) -> None:
    wide = {(0.01, 1): 0.6, (0.01, 32): 0.5, (0.3, 1): 0.2, (0.3, 32): 0.1}  # a log eps axis
    results = [r for m in ("a", "b") for r in rows(m) + pgd_rows(m, acc=wide) + shift_rows(m)]
    figures.write_figures(results_frame(results), tmp_path)
    labels = [label for fig in drawn for label in _tick_labels(fig)]
    assert len(drawn) >= 10
    assert any(scale == "log" for scale, _ in labels)  # the log axes were drawn and labelled
    bad = sorted({text for _, text in labels if "\\mathdefault" in text or "$" in text})
    assert not bad, f"raw mathtext in tick labels: {bad}"
