"""Shared test setup: CPU by default (``--device cuda`` to run on a GPU), seeded RNGs."""

from __future__ import annotations

import pytest
import torch


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--device", default="cpu", help="device for model tests (cpu or cuda)")


@pytest.fixture
def device(request: pytest.FixtureRequest) -> torch.device:
    return torch.device(request.config.getoption("--device"))


@pytest.fixture(autouse=True)
def _seeded():
    """Seed inside fork_rng so no test leaks RNG state into another."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """Never write to the user's cache from a test."""
    monkeypatch.setenv("ROBUSTBNN_CACHE", str(tmp_path_factory.mktemp("cache")))
