"""A render's own files include the SVG twins of its figures, and a tolerances file holds
only finite numbers (issue 43, item 11 a and b)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robustbnn.errors import UserError
from robustbnn.report.regression import load_margins, load_tolerances
from robustbnn.report.render import render
from robustbnn.results.manifest import is_ours

from ._runs import rows, write_run


def _targeted(model: str) -> list:
    """Only the targeted attack's rows: one small figure per model."""
    return [r for r in rows(model) if r.task == "targeted"]


def test_a_figure_s_svg_twin_is_the_render_s_own() -> None:
    assert is_ours("figures/targeted_a.png") and is_ours("figures/targeted_a.svg")
    assert not is_ours("figures/../targeted_a.svg") and not is_ours("targeted_a.svg")


def test_a_rerender_removes_the_svg_of_a_figure_it_no_longer_draws(tmp_path: Path) -> None:
    out = tmp_path / "out"
    sort = "targeted_success_step100"  # the one column of targeted rows alone
    render([write_run(tmp_path / "one", _targeted("a") + _targeted("b"))], out, sort=sort)
    assert (out / "figures" / "targeted_b.svg").is_file()
    render([write_run(tmp_path / "two", _targeted("a"))], out, sort=sort)
    assert not (out / "figures" / "targeted_b.png").exists()
    assert not (out / "figures" / "targeted_b.svg").exists()
    assert (out / "figures" / "targeted_a.svg").is_file()


@pytest.mark.parametrize("value", ["Infinity", "1e999"])
@pytest.mark.parametrize(("field", "load"), [("columns", load_tolerances),
                                             ("spread_margin", load_margins)])
def test_a_non_finite_tolerance_is_refused_naming_the_file_and_key(
        tmp_path: Path, value: str, field: str, load) -> None:  # noqa: ANN001
    path = tmp_path / "tolerances.json"
    path.write_text(f'{{"columns": {{"acc": 0.1}}, "spread_margin": {{"acc": 0.1}}, '
                    f'"{field}": {{"mlp/ood_auroc": {value}}}}}')
    with pytest.raises(UserError) as info:
        load(path)
    text = str(info.value)
    assert "\n" not in text
    assert str(path) in text and "'mlp/ood_auroc'" in text
    assert "is Infinity, not a finite number" in text
