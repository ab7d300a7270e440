"""A read-only model cache (issue 49, item 7): a run whose every model is in it runs and
writes nothing there; a run that must train and save a model is refused in one line naming
the folder and the way out, before anything is written."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from robustbnn.cli import main


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` and everything in it read-only, even for root (immutable where it runs as
    root: ``chattr +i``, which ext4 and most local file systems support)."""
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None or subprocess.run([chattr, "-R", "+i", str(folder)],
                                            capture_output=True).returncode != 0:
            pytest.skip("root writes anywhere, and this file system has no immutable files")
        try:
            yield
        finally:
            subprocess.run([chattr, "-R", "-i", str(folder)], check=True)
        return
    paths = [folder, *folder.rglob("*")]
    modes = {p: p.stat().st_mode for p in paths}
    for p in paths:
        p.chmod(modes[p] & ~0o222)
    try:
        yield
    finally:
        for p in paths:
            p.chmod(modes[p])


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


def _bench(tmp_path: Path, out: str, models: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--models", models, "--attacks", "fgsm",
            "--robustness", "none", "--shift", "none", "--jobs", "1", "--threads", "1",
            "--quiet", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / out)]


@pytest.mark.bench
@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_a_read_only_cache_serves_a_run_whose_models_it_holds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_bench(tmp_path, "first", "mlp")) == 0
    cache = tmp_path / "cache"
    before = _snapshot(cache)
    with read_only(cache):
        # Before: "--cache-dir ...: cannot write in ...", exit 2, although mlp is cached.
        assert main(_bench(tmp_path, "second", "mlp")) == 0, capsys.readouterr().err
        assert (tmp_path / "second" / "leaderboard.md").is_file()
        capsys.readouterr()
        # A model it does not hold must be trained and saved there: refused, nothing written.
        assert main(_bench(tmp_path, "third", "mlp,mc_dropout")) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert err[0].startswith(f"robustbnn: error: the model cache {cache} is read-only (")
        assert err[0].endswith(
            ") and does not hold the trained mc_dropout of this run, which must be trained and "
            "saved there; make it writable, point --cache-dir at a writable folder, or pass "
            "--no-cache"), err[0]
        assert not (tmp_path / "third").exists()
    assert _snapshot(cache) == before
