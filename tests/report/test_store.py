"""The results store's atomic writes: readable like an ordinary file, overwriting, no leftovers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest
import torch

from robustbnn import cache
from robustbnn.report.scores import write_scores
from robustbnn.report.store import write_text_atomic


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
