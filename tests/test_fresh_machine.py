"""A new user's first steps on a fresh machine, through the installed console script.

An empty home folder, no ``ROBUSTBNN_DATA``, no model cache, and a local HTTP server standing in
for the dataset mirrors (``ROBUSTBNN_MIRROR``). The server serves real dataset files: those of
the folder ``ROBUSTBNN_DATA`` names in this test process (CI points it at its copy of the
datasets), so the download, checksum and parse code all run for real on real bytes. Where no such
folder is set, the test skips and says why; it never touches the network.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVED = {"mnist": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                    "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
          "notmnist": ("t10k-images-idx3-ubyte.gz",),
          # The smaller forms the readers accept: a mirror without the full Omniglot background
          # zip or the CIFAR-10 archive serves these instead.
          "omniglot": ("images_background_small1.zip", "images_background_small2.zip"),
          "cifar10": tuple(f"cifar10_batch_{k}.png" for k in range(4))}


def _source() -> Path:
    """The real dataset files to serve, or skip with the reason."""
    root = os.environ.get("ROBUSTBNN_DATA")
    if not root:
        pytest.skip("no ROBUSTBNN_DATA folder with the real dataset files to serve "
                    "(CI sets it where a copy of the datasets is present)")
    missing = [f"{d}/{f}" for d, names in SERVED.items() for f in names
               if not (Path(root) / d / f).is_file()]
    if missing:
        pytest.skip(f"ROBUSTBNN_DATA={root} lacks {', '.join(missing)}")
    return Path(root)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # no request log on the test's stderr
        pass


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[str]:
    """A local HTTP server: ``/good/`` serves the real files laid out like a data root,
    ``/bad/`` the same files with one byte of each flipped. Yields its base URL."""
    source = _source()
    site = tmp_path / "site"
    for kind in ("good", "bad"):
        for folder, names in SERVED.items():
            (site / kind / folder).mkdir(parents=True)
            for name in names:
                target = site / kind / folder / name
                if kind == "good":
                    target.symlink_to(source / folder / name)
                else:
                    data = bytearray((source / folder / name).read_bytes())
                    data[len(data) // 2] ^= 0xFF
                    target.write_bytes(bytes(data))
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# A slow machine, on purpose: matplotlib's "building the font cache" notice, which it logs
# when scanning the fonts takes over 5 s, fires in every process (tests/slow_machine/).
SLOW_MACHINE = Path(__file__).parent / "slow_machine"


@pytest.fixture
def fresh(tmp_path: Path) -> dict[str, str]:
    """The environment of a fresh, slow machine: an empty home (no matplotlib font cache), no
    data root, no model cache, and matplotlib's font scan as slow as on a busy machine."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ROBUSTBNN_", "XDG_", "MPL"))}
    env.update(HOME=str(home), ROBUSTBNN_JOBS="1", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join(filter(None, (str(SLOW_MACHINE),
                                                        os.environ.get("PYTHONPATH")))))
    return env


def _robustbnn() -> str:
    """The installed console script, beside this interpreter."""
    script = Path(sys.executable).parent / "robustbnn"
    if not script.is_file():
        script = Path(shutil.which("robustbnn") or "robustbnn")
    return str(script)


def _run(env: dict[str, str], cwd: Path, *args: str, timeout: int = 900
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_robustbnn(), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _data_root(env: dict[str, str]) -> Path:
    """Where the data lands with nothing configured: the user cache folder of that home."""
    out = subprocess.run([sys.executable, "-c",
                          "from robustbnn.data.root import default_data_root as d; print(d())"],
                         env=env, capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _errors(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.mark.slow
def test_a_new_user_downloads_plans_and_runs(mirror: str, fresh: dict[str, str],
                                             tmp_path: Path) -> None:
    env = {**fresh, "ROBUSTBNN_MIRROR": f"{mirror}/good"}
    work = tmp_path / "work"
    work.mkdir()
    root = _data_root(env)
    assert not root.exists() and str(root).startswith(env["HOME"])

    # Without --download: one line naming the set, the path searched and the command.
    result = _run(env, work, "bench", "--dataset", "mnist", "--plan")
    assert result.returncode == 1, result.stderr
    lines = _errors(result)
    assert len(lines) == 1 and lines[0].startswith("robustbnn: error:"), lines
    assert "mnist" in lines[0] and str(root) in lines[0] and "--download" in lines[0]
    assert "from --data-root" not in lines[0]  # a flag the user never passed

    result = _run(env, work, "bench", "--dataset", "mnist", "--plan", "--download")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (root / "mnist").iterdir()) == sorted(SERVED["mnist"])

    # Its cells' ids hold the digests of its OOD sets, so planning needs them: fetched here,
    # each in the form the mirror has (the full forms are not on it: 404, a warning, the next).
    result = _run(env, work, "reproduce", "bhn_table2", "--plan")
    assert result.returncode == 1 and "--download" in result.stderr, result.stderr
    result = _run(env, work, "reproduce", "bhn_table2", "--plan", "--download")
    assert result.returncode == 0, result.stderr
    assert "bhn_table2" in result.stdout
    assert "images_background.zip is not served there" in result.stderr
    assert "cifar-10-python.tar.gz is not served there" in result.stderr
    for folder in ("notmnist", "omniglot", "cifar10"):
        assert sorted(p.name for p in (root / folder).iterdir()) == sorted(SERVED[folder])

    # A small real run on the downloaded sets.
    result = _run(env, work, "bench", "--suite", "smoke", "--dataset", "mnist",
                  "--ood", "notmnist,omniglot", "--quiet", "--out", "run")
    assert result.returncode == 0, result.stderr
    leaderboard = (work / "run" / "leaderboard.md").read_text()
    assert "notmnist" in (work / "run" / "results.csv").read_text() and "|" in leaderboard
    assert not [p for p in root.rglob("*") if p.name.endswith(".part")]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["bad", "unreachable"])
def test_a_failed_download_is_one_line_and_leaves_nothing(mirror: str, fresh: dict[str, str],
                                                          tmp_path: Path, where: str) -> None:
    if where == "bad":
        url = f"{mirror}/bad"
    else:
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{s.getsockname()[1]}"
    env = {**fresh, "ROBUSTBNN_MIRROR": url}
    root = _data_root(env)
    result = _run(env, tmp_path, "bench", "--dataset", "mnist", "--plan", "--download")
    assert result.returncode == 1
    *progress, error = _errors(result)  # "downloading <url> (9.9 MB)", then the error
    assert all(line.startswith("downloading ") for line in progress), progress
    lines = [error]
    assert error.startswith("robustbnn: error:"), error
    assert url in lines[0] and "mnist" in lines[0]
    assert ("sha256" in lines[0]) == (where == "bad")
    left = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
    assert left == []
