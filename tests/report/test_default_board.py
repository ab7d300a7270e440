"""The committed default board (reports/default) against its committed per-example data: it
re-renders byte for byte, its OOD intervals cover the seeds, its sort leader is an estimate,
and the docs' hand recomputation gives its printed interval and p-value."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from robustbnn.report.robust_columns import UPPER_BOUND

ROOT = Path(__file__).resolve().parents[2]
BOARD = ROOT / "reports" / "default"
DATA = [BOARD / "data" / f"seed{s}" for s in (0, 1, 2)]
RERENDERED = ("all_columns.json", "all_columns.csv", "leaderboard.md", "leaderboard.json")
OOD_COLUMNS = ("ood_auroc_mean", "adv_ood_auroc_eps0.1")


def _json(name: str) -> dict:
    return json.loads((BOARD / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rerendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("default")
    subprocess.run([sys.executable, "-m", "robustbnn", "report", *map(str, DATA), "--out",
                    str(out), "--no-figures", "--quiet"], check=True, cwd=ROOT)
    return out


def test_the_committed_data_is_there_and_compact() -> None:
    for run in DATA:
        assert (run / "results.jsonl").is_file() and (run / "run.json").is_file()
        assert len(list((run / "examples").glob("*.npz"))) == 17
    size = sum(f.stat().st_size for run in DATA for f in run.rglob("*") if f.is_file())
    assert size < 60 * 2**20  # docs/reports.md states it (56.6 MB)


def test_the_board_rerenders_byte_for_byte(rerendered: Path) -> None:
    for name in RERENDERED:
        assert (rerendered / name).read_bytes() == (BOARD / name).read_bytes(), name


def test_every_ood_interval_is_at_least_the_seed_only_t_interval() -> None:
    """Each OOD column's interval contains the t interval of its three run values (cut to
    [0, 1]): the seeds are covered, however small the examples' part."""
    from robustbnn.report.columns import compute_columns
    from robustbnn.report.render import load_runs

    results, _ = load_runs(DATA)
    _, values = compute_columns(results)
    rows = {r["model"]: r for r in _json("all_columns.json")["rows"]}
    checked = 0
    for key in OOD_COLUMNS:
        for model, runs in values[key].groupby(level="model"):
            v = runs.to_numpy(dtype=float)
            half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v))
            lo, hi = max(v.mean() - half, 0.0), min(v.mean() + half, 1.0)
            row = rows[model]
            assert row[f"{key}_lo"] <= lo + 1e-9 and row[f"{key}_hi"] >= hi - 1e-9, (key, model)
            checked += 1
    assert checked == 2 * 17


def test_the_sort_leader_is_an_estimate_and_bounds_are_not_ranked() -> None:
    board = _json("leaderboard.json")
    key = board["sort"]
    rows = board["rows"]
    assert rows[0][f"{key}_bound"] != UPPER_BOUND
    bounds = [r["model"] for r in rows if r[f"{key}_bound"] == UPPER_BOUND]
    assert board.get("unranked", []) == bounds
    assert [r["model"] for r in rows[len(rows) - len(bounds):]] == bounds
    ranked = {m for group in board["ranking"]["groups"] for m in group}
    assert not ranked & set(bounds)


def _hand_block() -> str:
    text = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    section = text.split("### Recompute one interval and one p-value by hand", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_docs_recompute_the_printed_interval_and_p_value_by_hand() -> None:
    space: dict = {}
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(_hand_block(), "docs/reports.md", "exec"), space)  # noqa: S102
    row = {r["model"]: r for r in _json("all_columns.json")["rows"]}[space["model"]]
    # the printed interval, to its printed 3 decimals (the bootstrap's Monte Carlo error
    # on the examples' part is about 1.6% of it)
    key = space["column"]
    assert abs(space["lo"] - row[f"{key}_lo"]) <= 0.001
    assert abs(space["hi"] - row[f"{key}_hi"]) <= 0.001
    versus = _json("leaderboard.json")["ranking"]["versus_best"][space["other"]]
    assert space["difference"] == pytest.approx(versus["difference"], abs=1e-6)
    assert abs(math.log(space["p"] / versus["p_value"])) < 0.1  # within 10%
    assert f"[{space['lo']:.3f}, {space['hi']:.3f}]" in printed.getvalue()
    assert np.isfinite(space["p"])
