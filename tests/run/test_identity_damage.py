"""A damaged ``cells/identity.json`` is named as damaged, never taken for another run
configuration's (issue 43, item 7): rebuilt when every cell in the folder is this run's,
else refused with how to recover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.run.store import CellStore, RunFolderConflict

DAMAGES = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "deleted": lambda p: p.unlink(),
    "not UTF-8": lambda p: p.write_bytes(b"\xff\xfe" + p.read_bytes()[2:]),
}
SAYS = {"truncated": "is damaged (truncated or not JSON)", "deleted": "is missing",
        "not UTF-8": "is damaged (not UTF-8 text)"}


@pytest.mark.bench
def test_a_damaged_identity_beside_this_runs_cells_is_rebuilt_and_every_cell_reused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    args = ["bench", "--suite", "smoke", "--no-cache", "--jobs", "1", "--models", "mlp",
            "--attacks", "fgsm", "--robustness", "none", "--shift", "none", "--out", str(out)]
    assert main([*args, "--quiet"]) == 0
    identity = out / "cells" / "identity.json"
    good = identity.read_bytes()
    first = (out / "results.csv").read_bytes()
    capsys.readouterr()
    for damage, says in SAYS.items():
        DAMAGES[damage](identity)
        assert main(args) == 0, damage
        err = capsys.readouterr().err
        assert f"{identity} {says}; its 10 cell(s) all belong to this run, so it was rewritten" \
            in err, damage
        assert "another run configuration" not in err
        assert "reusing 10 finished cells" in err and "cells: 10 reused, 0 run" in err
        assert identity.read_bytes() == good
        assert (out / "results.csv").read_bytes() == first


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    """A run folder of configuration ``{"seed": 0}`` with two cells."""
    out = tmp_path / "out"
    CellStore(out).claim({"seed": 0})
    for cell in ("a" * 20, "b" * 20):
        (out / "cells" / f"{cell}.json").write_text("{}\n")
    return out, out / "cells" / "identity.json"


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_identity_beside_other_cells_is_named_with_how_to_recover(
        tmp_path: Path, damage: str) -> None:
    out, identity = _folder(tmp_path)
    DAMAGES[damage](identity)
    with pytest.raises(RunFolderConflict) as err:  # another configuration: other cells
        CellStore(out).claim({"seed": 1})
    assert str(err.value) == (
        f"{identity} {SAYS[damage]}, so which run configuration {out} holds is unknown, and 2 "
        "of its 2 cell(s) are not this run's; restore that file (from a backup, or rerun the "
        "command that made the folder), or pass --out NEW_DIR, or --overwrite to replace the "
        "folder's results (its cells are then recomputed)")
    assert (out / "cells" / f"{'a' * 20}.json").exists()  # nothing was touched
    CellStore(out).claim({"seed": 1}, overwrite=True)
    assert json.loads(identity.read_text()) == {"seed": 1}
    assert [p.name for p in (out / "cells").glob("*.json")] == ["identity.json"]


def test_an_intact_identity_of_another_configuration_is_still_called_so(tmp_path: Path) -> None:
    out, _ = _folder(tmp_path)
    with pytest.raises(RunFolderConflict, match="holds the results of another run config"):
        CellStore(out).claim({"seed": 1})
