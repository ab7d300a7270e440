"""A fresh home on a slow machine prints nothing robustbnn did not say (issue 47).

matplotlib logs "Matplotlib is building the font cache; this may take a moment." when its first
scan of the system fonts takes over 5 s: on a busy CI machine it did, and the line reached the
user's stderr before robustbnn's own. ``tests/slow_machine/sitecustomize.py`` makes that case
happen on purpose in every subprocess here, so these tests do not depend on the load.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robustbnn.first_run import FONT_CACHE_NOTICE, OWN_LINE

ROOT = Path(__file__).resolve().parents[1]
SLOW_MACHINE = Path(__file__).parent / "slow_machine"


def _fresh_slow_env(home: Path) -> dict[str, str]:
    """An empty home (no font cache), no robustbnn or XDG settings, a slow font scan."""
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ROBUSTBNN_", "XDG_", "MPL"))}
    env.update(HOME=str(home), ROBUSTBNN_JOBS="1", ROBUSTBNN_MIRROR="http://127.0.0.1:9",
               ROBUSTBNN_CACHE=str(home / "models"), PYTHONPATH=str(SLOW_MACHINE))
    return env


def _robustbnn(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "robustbnn"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "robustbnn"]
    return subprocess.run([*command, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=600, check=False)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.bench
def test_the_slow_machine_really_makes_matplotlib_say_it(tmp_path: Path) -> None:
    # Without robustbnn: the notice is there on every run of a fresh home, so the tests below
    # would see it if robustbnn let it through.
    env = _fresh_slow_env(tmp_path / "home")
    done = subprocess.run([sys.executable, "-c", "import logging; logging.basicConfig(); "
                           "import matplotlib.pyplot"], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    assert FONT_CACHE_NOTICE in done.stderr, done.stderr


@pytest.mark.bench
def test_a_refusal_on_a_fresh_slow_machine_is_one_line(tmp_path: Path) -> None:
    env = _fresh_slow_env(tmp_path / "home")
    done = _robustbnn(env, tmp_path, "bench", "--dataset", "mnist", "--plan")
    assert done.returncode == 1, done.stderr
    lines = _lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("robustbnn: error: MNIST files missing"), lines


@pytest.mark.bench
def test_drawing_on_a_fresh_slow_machine_says_it_in_robustbnns_words(tmp_path: Path) -> None:
    env = _fresh_slow_env(tmp_path / "home")
    done = _robustbnn(env, tmp_path, "report", str(ROOT / "reports"), "--out", "drawn")
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stderr)
    assert not [line for line in lines if "Matplotlib" in line], lines
    assert lines == [OWN_LINE], lines  # once, and nothing else on stderr
    assert list((tmp_path / "drawn" / "figures").glob("*.png"))  # it did draw
    # --quiet: no progress, so not this line either; the font list is cached now, so a new home.
    env = _fresh_slow_env(tmp_path / "home2")
    done = _robustbnn(env, tmp_path, "report", str(ROOT / "reports"), "--out", "drawn2",
                      "--quiet")
    assert done.returncode == 0 and _lines(done.stderr) == [], done.stderr


def test_the_notice_becomes_one_line_of_ours_and_other_notices_pass(
        caplog: pytest.LogCaptureFixture) -> None:
    import robustbnn  # noqa: F401  (installs the filter)

    logger = logging.getLogger("matplotlib.font_manager")
    # (an in-process `main([... "--quiet"])` of another test may have left robustbnn at WARNING)
    with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, logger="robustbnn"):
        logger.warning("Matplotlib is building the font cache; this may take a moment.")
        logger.warning("findfont: Font family 'Nope' not found.")
        got = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert got == [("robustbnn", logging.INFO, OWN_LINE),
                   ("matplotlib.font_manager", logging.WARNING,
                    "findfont: Font family 'Nope' not found.")]
