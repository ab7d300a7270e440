"""Every figure is written as a PNG with an SVG twin (text as text, the same bytes on every
render), and the figures group models by the family that ``run.json`` records."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from robustbnn.models import MODELS
from robustbnn.models.base import ModelSpec
from robustbnn.report import figures
from robustbnn.report.families import OTHER, model_families
from robustbnn.results.store import results_frame

from ._runs import rows, write_run

SVG = "{http://www.w3.org/2000/svg}"


def _targeted(model: str) -> list:
    """Only the targeted attack's rows: one small figure, ``targeted_<model>.png``."""
    return [r for r in rows(model) if r.task == "targeted"]


def test_every_figure_written_has_an_svg_twin_that_parses(tmp_path: Path) -> None:
    paths = figures.write_figures(results_frame(_targeted("a")), tmp_path)
    assert paths == [tmp_path / "figures" / "targeted_a.png",
                     tmp_path / "figures" / "targeted_a.svg"]  # the manifest lists both
    assert sorted((tmp_path / "figures").iterdir()) == sorted(paths)
    root = ET.parse(paths[1]).getroot()
    assert root.tag == f"{SVG}svg"
    assert "targeted iterative FGSM" in "".join(root.itertext())  # text stays text


def test_rendering_a_figure_twice_writes_identical_bytes(tmp_path: Path) -> None:
    frame = results_frame(_targeted("a"))
    first = figures.targeted_figure(frame, "a", tmp_path / "one.png")
    second = figures.targeted_figure(frame, "a", tmp_path / "two.png")
    svg = first.with_suffix(".svg").read_bytes()
    assert svg == second.with_suffix(".svg").read_bytes()
    assert b"<dc:date>" not in svg and b"Matplotlib v" not in svg  # no date, no version
    assert first.read_bytes() == second.read_bytes()


def test_families_come_from_run_json_and_old_runs_have_none(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a") + rows("b"))
    info = json.loads((run / "run.json").read_text())
    assert figures.recorded_families(run, ["a", "b"]) == {"a": OTHER, "b": OTHER}
    info["models"] = {"a": {"family": "variational", "seconds": 1.0}, "b": {"seconds": 2.0}}
    (run / "run.json").write_text(json.dumps(info))
    assert figures.recorded_families(run, ["a", "b"]) == {"a": "variational", "b": OTHER}
    later = {"models": {"b": {"family": "ensemble"}}}
    assert model_families([info, later], ["a", "b"]) == {"a": "variational", "b": "ensemble"}


def test_every_built_in_model_names_one_of_a_few_families() -> None:
    families = {name: MODELS.get(name).family for name in MODELS.names()}
    assert OTHER not in families.values()
    assert 3 <= len(set(families.values())) <= 6
    assert families["mc_dropout"] == families["bbalpha_05"]
    assert families["bbb_gaussian"] != families["bhn_iaf"]
    spec = MODELS.get("mlp")
    assert ModelSpec(spec.build, spec.config, "d", "r").family == OTHER  # a plug-in's default
