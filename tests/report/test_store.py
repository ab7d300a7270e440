"""The results store: typed rows in results.jsonl, and atomic writes readable like any file."""

from __future__ import annotations

import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from robustbnn.results.schema import Result, setting
from robustbnn.results.scores import write_scores
from robustbnn.results.store import (
    RunFolderError,
    read_results,
    write_bytes_atomic,
    write_results,
    write_text_atomic,
)
from robustbnn.training import cache


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_text_gets_the_mode_open_would_give_and_overwrites(tmp_path: Path, umask_022):
    target = tmp_path / "run" / "results.csv"
    write_text_atomic(target, "a\n")
    write_text_atomic(target, "b\n")
    assert target.read_text() == "b\n"
    assert mode(target) == 0o644  # mkstemp alone gives 0600: unreadable to the group
    assert [p.name for p in target.parent.iterdir()] == ["results.csv"]


def test_scores_and_cache_entries_are_readable_too(tmp_path: Path, umask_022):
    path = write_scores(tmp_path, "mlp", "uniform", {"entropy": np.zeros(3)},
                        {"entropy": np.ones(2)})
    assert mode(path) == 0o644
    entry = cache.save(tmp_path / "cache", "mlp", "k" * 16, torch.nn.Linear(2, 3), {"a": 1})
    assert mode(entry) == 0o755
    assert mode(entry / "model.safetensors") == 0o644


def test_settings_round_trip_through_results_jsonl_with_their_types(tmp_path: Path) -> None:
    knobs = setting(eps=0.3, S_attack=32, clip=True, objective="expected", step_size=0.01)
    rows = [Result("m", 0, "pgd", "toy", knobs, "", "accuracy", 0.25),
            Result("m", 0, "clean", "toy", setting(S_eval=4), "", "accuracy", 0.9)]
    write_results(tmp_path, rows)
    first = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert first["setting"] == knobs and list(first["setting"]) == list(knobs)  # nested, ordered
    frame = read_results(tmp_path)
    back = frame["setting"].tolist()
    assert back == [knobs, {"S_eval": 4}]
    assert [type(v) for v in back[0].values()] == [float, int, bool, str, float]
    assert frame["seed"].dtype == "int64" and frame["value"].dtype == "float64"
    csv = (tmp_path / "results.csv").read_text().splitlines()
    assert csv[1] == "m,0,pgd,toy,eps=0.3;S_attack=32;clip=True;objective=expected;" \
                     "step_size=0.01,,accuracy,0.25"


def test_reading_results_needs_the_jsonl(tmp_path: Path) -> None:
    with pytest.raises(RunFolderError, match="no results.jsonl here.*rerun robustbnn bench"):
        read_results(tmp_path)
    (tmp_path / "results.jsonl").write_text("")
    with pytest.raises(RunFolderError, match="holds no results"):
        read_results(tmp_path)


def test_concurrent_atomic_writers_use_unique_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "figures" / "a.png"
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: write_bytes_atomic(target, bytes([i]) * 100_000), range(32)))
    assert len(set(target.read_bytes())) == 1 and target.stat().st_size == 100_000
    assert [p.name for p in target.parent.iterdir()] == ["a.png"]
