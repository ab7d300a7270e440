"""Figures tell every model apart (a colour-and-marker pair per model, 20 distinct colours, the
same in every figure), draw a panel per model family, and print plain tick labels."""

from __future__ import annotations

from pathlib import Path

import matplotlib.colors as mcolors
import pytest

from robustbnn.report import figures, robust_figures, shift_figures
from robustbnn.report.families import MAX_PER_PANEL
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


TWENTY = [f"model{i:02d}" for i in range(20)]
FAMILIES = {m: ("alpha", "Beta", "gamma", "delta", "eps")[i % 5] for i, m in enumerate(TWENTY)}


def _looks_by_model(fig) -> dict[str, tuple[str, str]]:  # noqa: ANN001
    looks = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                look = (mcolors.to_hex(line.get_color()), line.get_marker())
                assert looks.setdefault(line.get_label(), look) == look  # one look per figure
    return looks


def test_twenty_models_keep_one_distinct_look_in_every_figure(drawn: list,
                                                              tmp_path: Path) -> None:
    results = [r for m in TWENTY for r in rows(m)]
    reliability = [r for m in reversed(TWENTY) for r in shift_rows(m, kinds=())]
    figures.fgsm_overview(results_frame(results), tmp_path / "f.png", families=FAMILIES)
    shift_figures.reliability_overview(results_frame(reliability), tmp_path / "r.png",
                                       families=FAMILIES)
    fgsm, diagrams = (_looks_by_model(fig) for fig in drawn)
    assert sorted(fgsm) == TWENTY and len(set(fgsm.values())) == 20
    assert diagrams == fgsm  # rows in another order, the same look per model


def test_the_family_panels_hold_exactly_their_familys_models(drawn: list,
                                                             tmp_path: Path) -> None:
    frame = results_frame([r for m in TWENTY for r in rows(m)])
    figures.fgsm_overview(frame, tmp_path / "f.png", families=FAMILIES)
    (fig,) = drawn
    assert len(fig.axes) == 2 * 5  # a row per S_attack, a column per family
    for ax in fig.axes:
        family = ax.get_title().split(",")[0]
        shown = {line.get_label() for line in ax.get_lines()}
        assert shown == {m for m, f in FAMILIES.items() if f == family}, ax.get_title()
    (legend,) = fig.legends
    heads = [t.get_text() for t in legend.get_texts() if t.get_fontweight() == "bold"]
    assert heads == ["alpha", "Beta", "delta", "eps", "gamma"]  # by name, case aside


def test_models_without_a_family_are_split_into_readable_panels(drawn: list,
                                                                tmp_path: Path) -> None:
    frame = results_frame([r for m in TWENTY for r in rows(m)])
    figures.fgsm_overview(frame, tmp_path / "f.png")  # an old run: no family recorded
    (fig,) = drawn
    per_panel = [len(ax.get_lines()) for ax in fig.axes]
    assert max(per_panel) <= MAX_PER_PANEL and sum(per_panel) == 2 * 20


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
