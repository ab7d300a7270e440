"""Temporary folders of cache writers killed mid-save are removed by the next run on the host;
a live writer's are kept."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from robustbnn._atomic import OWNER
from robustbnn.training import cache, cache_folders


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_leftovers_of_dead_writers_go_and_live_ones_stay(tmp_path: Path) -> None:
    host, key = OWNER.rsplit("-", 1)[0], "0123456789abcdef"
    folder = tmp_path / "mlp"
    names = {"dead": f".{key}-tmp-{host}-{_dead_pid()}-ab12_x9",
             "live": f".{key}-tmp-{host}-{os.getpid()}-cd34",
             "other host": f".{key}-tmp-elsewhere-{_dead_pid()}-ef56",
             "old naming, fresh": f".{key}-tmp-gh78",
             "old naming, stale": f".{key}-tmp-ij90",
             "trash": f".trash-{key}-0123456789ab",
             "entry": key}
    for name in names.values():
        (folder / name).mkdir(parents=True)
        (folder / name / cache.WEIGHTS).write_bytes(b"partial")
    day_ago = time.time() - cache_folders.STALE_SECONDS - 60
    os.utime(folder / names["old naming, stale"], (day_ago, day_ago))
    assert cache_folders.remove_dead_temps(tmp_path) == 3
    left = {k for k, name in names.items() if (folder / name).exists()}
    assert left == {"live", "other host", "old naming, fresh", "entry"}


def test_a_writer_names_itself_in_its_temporary_folder(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def killed(src: object, dst: object) -> None:  # SIGKILL between write and rename
        seen.append(Path(str(src)).name)
        raise KeyboardInterrupt

    monkeypatch.setattr(cache.os, "replace", killed)
    monkeypatch.setattr(cache.shutil, "rmtree", lambda *a, **k: None)  # no cleanup when killed
    with pytest.raises(KeyboardInterrupt):
        cache.save(tmp_path, "mlp", "0123456789abcdef", torch.nn.Linear(2, 2), {})
    monkeypatch.undo()
    assert seen and seen[0].startswith(f".0123456789abcdef-tmp-{OWNER.rsplit('-', 1)[0]}-")
    assert cache_folders.remove_dead_temps(tmp_path) == 0  # this writer is alive: kept
    (tmp_path / "mlp" / seen[0]).rename(tmp_path / "mlp" / seen[0].replace(
        f"-{os.getpid()}-", f"-{_dead_pid()}-"))
    assert cache_folders.remove_dead_temps(tmp_path) == 1
    assert not list((tmp_path / "mlp").glob(".*-tmp-*"))
