"""Shared test setup: CPU by default (``--device cuda`` to run on a GPU), seeded RNGs.

Hypothesis profiles (``HYPOTHESIS_PROFILE``, default ``ci``): ``ci`` runs 1,000 examples per
property with a fixed derandomized seed, no deadline (the machine may be shared) and no example
database (nothing written into the working tree); ``dev`` runs 100 for quick local loops.
"""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import HealthCheck, settings

# Where downloads go in tests that serve no mirror: refused at once, never the network.
NO_NETWORK = "http://127.0.0.1:9"

settings.register_profile("ci", max_examples=1000, deadline=None, derandomize=True,
                          database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    # pytest-xdist (``-n auto`` in pyproject's addopts): one process per core, so each gets its
    # share of the cores as torch threads instead of every worker taking them all.
    torch.set_num_threads(max(1, (os.cpu_count() or 1)
                              // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))


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
    """Never write to the user's cache from a test; run bench cells in-process (``--jobs
    auto`` would spawn workers, which see none of a test's monkeypatches); never touch the
    network: every download goes to a loopback port nothing listens on (port 9), unless a
    test serves its own mirror (``tests/_mirror.py``)."""
    monkeypatch.setenv("ROBUSTBNN_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("ROBUSTBNN_JOBS", "1")
    monkeypatch.setenv("ROBUSTBNN_MIRROR", NO_NETWORK)


@pytest.fixture
def thirdparty(monkeypatch: pytest.MonkeyPatch):
    """The third-party plug-in package ``tests/plugins/thirdparty`` installed through its entry
    points: on ``sys.path`` here and on ``PYTHONPATH`` for subprocesses; its registrations are
    removed afterwards. Yields a :class:`tests.plugins._thirdparty.ThirdParty`."""
    from tests.plugins._thirdparty import installed

    yield from installed(monkeypatch)
