"""The renderer removes only what it wrote, survives concurrent renders, stays in its folder."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from robustbnn.report.render import MANIFEST, render
from robustbnn.results.paths import UnsafeNameError, safe_name
from robustbnn.results.scores import write_scores

from ._runs import MEASURES, render_together, rows, write_run

PNG = b"\x89PNG\r\n\x1a\n"


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.bench
def test_only_files_of_the_previous_render_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render([write_run(tmp_path / "ab", rows("a") + rows("b"))], out)
    assert {"attack_a.png", "attack_b.png", "targeted_b.png"} <= _names(out / "figures")
    (out / "figures" / "mine.png").write_bytes(PNG)  # the user's own files
    (out / "notes.md").write_text("mine\n")
    only_a = write_run(tmp_path / "a", rows("a"))
    for _ in range(2):
        render([only_a], out)
        figures = _names(out / "figures")
        assert "mine.png" in figures and "attack_a.png" in figures
        assert "attack_b.png" not in figures and "targeted_b.png" not in figures  # stale
        assert (out / "notes.md").read_text() == "mine\n"
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert "figures/attack_a.png" in manifest and "figures/mine.png" not in manifest


def test_stale_ood_tables_go_when_the_results_have_no_ood_rows(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render([write_run(tmp_path / "with", rows("a"))], out, figures=False)
    assert (out / "ood.md").is_file() and (out / "ood.csv").is_file()
    no_ood = write_run(tmp_path / "without", [r for r in rows("a") if r.task != "ood"])
    render([no_ood], out, figures=False)
    assert not (out / "ood.md").exists() and not (out / "ood.csv").exists()
    assert (out / "attack.md").is_file() and (out / "leaderboard.md").is_file()
    assert "ood.md" not in (out / "leaderboard.html").read_text()


@pytest.mark.bench
def test_no_figures_keeps_the_earlier_figures(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a"))
    render([run], run)
    render([run], run, figures=False)
    assert "attack_a.png" in _names(run / "figures")
    render([write_run(tmp_path / "b", rows("b"))], run)  # still tracked: removed when stale
    assert "attack_a.png" not in _names(run / "figures")


def test_a_forged_manifest_deletes_nothing_the_renderer_cannot_write(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a"))
    (tmp_path / "outside.png").write_bytes(PNG)
    (run / MANIFEST).write_text(json.dumps({"files": [
        "results.jsonl", "run.json", "../outside.png", "figures/../../outside.png",
        str(tmp_path / "outside.png"), "figures/sub/x.png", 7]}))
    render([run], run, figures=False)
    assert (tmp_path / "outside.png").is_file()
    assert (run / "results.jsonl").is_file() and (run / "run.json").is_file()


@pytest.mark.bench
def test_concurrent_renders_of_one_folder_all_succeed(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a"))
    out = tmp_path / "out"
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(6)
    procs = [ctx.Process(target=render_together, args=(barrier, run, out)) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * 6
    files = [p for p in out.rglob("*") if p.is_file()]
    assert [p.name for p in files if p.name.startswith(".") and p.name != MANIFEST] == []
    pngs = [p for p in files if p.suffix == ".png"]
    assert len(pngs) == 3  # the FGSM overview, attack_a and targeted_a
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG) and data.endswith(b"IEND\xaeB`\x82"), png
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["model"] for r in board["rows"]] == ["a"]
    listed = json.loads((out / MANIFEST).read_text())["files"]
    assert sorted(listed) == sorted(p.relative_to(out).as_posix() for p in files
                                    if p.name != MANIFEST)


def _tree(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.bench
@pytest.mark.parametrize("model", ["../../x/pwned", "a/b", "/abs/evil", "..\\win"])
def test_a_model_name_never_writes_outside_the_folders(tmp_path: Path, model: str) -> None:
    deep = tmp_path / "d1" / "d2"
    run = write_run(deep / "run", rows(model))
    measures = ("predictive_entropy", *MEASURES)
    for dataset in ("uniform", "gaussian"):
        write_scores(run, model, dataset, {m: np.array([0.1, 0.2]) for m in measures},
                     {m: np.array([0.9, 0.3]) for m in measures})
    before = _tree(tmp_path)
    out = deep / "out"
    render([run], out)
    new = _tree(tmp_path) - before
    assert new and all(out in p.parents for p in new), sorted(new)
    assert all(run in p.parents for p in before)  # the scores stayed in the run folder too
    assert (out / "figures" / f"ood_{safe_name(model)}.png").is_file()  # scores found again
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["model"] for r in board["rows"]] == [model]  # the data keeps the real name


@pytest.mark.bench
@pytest.mark.parametrize("model", ["", ".", ".."])
def test_a_model_name_that_cannot_name_a_file_is_refused(tmp_path: Path, model: str) -> None:
    run = write_run(tmp_path / "run", rows(model))
    with pytest.raises(UnsafeNameError, match="cannot name a file"):
        render([run], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before anything was drawn
    with pytest.raises(UnsafeNameError):
        write_scores(tmp_path / "run", model, "uniform", {"e": np.zeros(1)}, {"e": np.ones(1)})
