"""Figures tell every model apart: a colour-and-marker pair per model, the same in every figure."""

from __future__ import annotations

from pathlib import Path

import matplotlib.colors as mcolors
import pytest

from robustbnn.report import figures, robust_figures
from robustbnn.report.styles import model_styles
from robustbnn.results.store import results_frame

from ._runs import rows

MODELS = [f"model{i}" for i in range(14)]


def test_fourteen_models_get_fourteen_distinct_looks_in_a_stable_order() -> None:
    styles = model_styles(MODELS)
    looks = {(s["color"], s["marker"]) for s in styles.values()}
    assert len(looks) == 14
    assert model_styles(MODELS[:3]) == {m: styles[m] for m in MODELS[:3]}


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the report functions draw, kept instead of saved."""
    kept = []

    def keep(fig, path):  # noqa: ANN001
        kept.append(fig)
        return path

    monkeypatch.setattr(figures, "save_figure", keep)
    monkeypatch.setattr(robust_figures, "save_figure", keep)
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
