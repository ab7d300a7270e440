"""Shared fixtures and the end-of-session table of ratios (see ``_ratios.py``)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch

from benchmarks._ratios import summary_lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print every ratio of the session as a Markdown table."""
    terminalreporter.write_line("")
    for line in summary_lines():
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def device() -> torch.device:
    """CUDA when present (``ROBUSTBNN_BENCH_DEVICE`` overrides), else the CPU."""
    name = os.environ.get("ROBUSTBNN_BENCH_DEVICE") or ("cuda" if torch.cuda.is_available()
                                                        else "cpu")
    return torch.device(name)
