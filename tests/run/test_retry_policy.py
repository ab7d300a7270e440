"""Only failures a retry can fix are retried (issue 43, item 10); a full disk names the path."""

from __future__ import annotations

import concurrent.futures.process
import errno
import os
from pathlib import Path

import pytest

from robustbnn import _atomic
from robustbnn.cli import main
from robustbnn.errors import ConfigError
from robustbnn.run.executors import TaskLost
from robustbnn.run.retry import retryable
from tests.plugins.fresh import forgotten_after_each_test

PLUGIN = "tests.run._slow_plugin"

_forgotten = forgotten_after_each_test(PLUGIN)


NO_SPACE = os.strerror(errno.ENOSPC)


class WorkerCrashedError(Exception):
    """Ray's, by name (Ray is not needed here)."""


class RayTaskError(Exception):
    """Ray's wrapper of a task's own exception, by name."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


@pytest.mark.parametrize("err", [
    TypeError("x"), ValueError("x"), UnicodeEncodeError("ascii", "\u00e9", 0, 1, "no"),
    MemoryError(), OSError(errno.ENOSPC, NO_SPACE), OSError(errno.EDQUOT, "quota"),
    PermissionError(errno.EACCES, "denied"), FileNotFoundError(errno.ENOENT, "gone"),
    ConfigError("x"), RuntimeError("CUDA out of memory"), RayTaskError(TypeError("x")),
], ids=lambda e: type(e).__name__)
def test_what_a_retry_cannot_fix_is_not_retryable(err: BaseException) -> None:
    assert not retryable(err)


@pytest.mark.parametrize("err", [
    concurrent.futures.process.BrokenProcessPool("a worker died"), TaskLost("lost"),
    WorkerCrashedError(), ConnectionResetError(errno.ECONNRESET, "reset"),
    BlockingIOError(errno.EAGAIN, "try again"), InterruptedError(errno.EINTR, "interrupted"),
    TimeoutError(errno.ETIMEDOUT, "timed out"), RayTaskError(ConnectionResetError(104, "x")),
], ids=lambda e: type(e).__name__)
def test_what_a_retry_can_fix_is_retryable(err: BaseException) -> None:
    assert retryable(err)


@pytest.mark.bench
@pytest.mark.parametrize(("error", "retried"), [("TypeError", False), ("ENOSPC", False),
                                                 ("UnicodeEncodeError", False),
                                                 ("ECONNRESET", True)])
def test_a_cell_is_retried_only_for_a_failure_a_retry_can_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        error: str, retried: bool) -> None:
    monkeypatch.setenv("RBNN_SLOW", f"raise:{error}")  # slow_model's training raises it
    code = main(["bench", "--suite", "smoke", "--no-cache", "--jobs", "1", "--models",
                 "slow_model", "--attacks", "fgsm", "--robustness", "none", "--shift", "none",
                 "--plugin", PLUGIN, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert "cell 'train slow_model' failed" in err
    assert ("failed (" in err) and (("; retrying" in err) is retried), err


def test_a_full_disk_names_the_file_it_could_not_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Full:
        def __init__(self, fd: int, mode: str) -> None:
            os.close(fd)

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, NO_SPACE)  # as the kernel says it: no file named

    monkeypatch.setattr(_atomic.os, "fdopen", Full)
    target = tmp_path / "cells" / "a.json"
    with pytest.raises(OSError) as err:
        _atomic.write_text_atomic(target, "{}")
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(target)
    assert str(err.value) == f"[Errno {errno.ENOSPC}] {NO_SPACE}: '{target}'"
    assert os.listdir(target.parent) == []  # the temporary file was removed


def test_the_cli_names_the_full_disk_s_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _atomic.os.fdopen

    class Full:
        def __init__(self, fd: int, mode: str) -> None:
            self.fh = real(fd, mode)

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(_atomic.os, "fdopen", Full)
    out = tmp_path / "out"
    assert main(["bench", "--suite", "smoke", "--no-cache", "--jobs", "1", "--models", "mlp",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"robustbnn: error: {NO_SPACE}: {out / 'cells' / 'identity.json'}; "
                       "check the path, its permissions and the free space (--debug shows the "
                       "traceback)")
