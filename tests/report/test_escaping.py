"""Names and config values from data reach the Markdown and HTML reports as text, never markup.

Issue 28, defect 12: an OOD set named ``![t](https://evil.example/t.png)`` rendered a remote
image in the legend of ``leaderboard.md``, and ``config.ood_preprocessing`` of ``run.json``
rendered a link in ``ood.md``; defect 10: NUL and bidirectional marks in names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from robustbnn.report.detail import ood_frame, ood_markdown
from robustbnn.report.escape import escape, visible
from robustbnn.report.legend import legend
from robustbnn.report.render import render
from robustbnn.results.manifest import OURS
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame

from ._commonmark import links, text
from ._runs import pgd_rows, rows, write_run

IMAGE = "![t](https://evil.example/t.png)"
LINK = "[click](https://evil.example/x)"


def foreign(markdown: str) -> list[str]:
    """The links of ``markdown`` but those to the render's own files (the aspect tables)."""
    return [f for f in links(markdown)
            if not any(f == f"link_open {{'href': '{name}'}}" for name in OURS)]


def _renamed(results: list[Result], **names: str) -> list[Result]:
    """``results`` with dataset (or task, measure) names replaced: ``old=new``."""
    def swap(value: str) -> str:
        return names.get(value, value)

    return [Result(r.model, r.seed, swap(r.task), swap(r.dataset), r.setting, swap(r.measure),
                   r.metric, r.value) for r in results]


def test_an_ood_set_name_renders_no_image_in_the_leaderboard(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", _renamed(rows("m"), uniform=IMAGE))
    render([run], run, figures=False)
    md = (run / "leaderboard.md").read_text(encoding="utf-8")
    assert foreign(md) == []  # before: an image of https://evil.example/t.png
    assert f"Sets ['{IMAGE}', 'gaussian']" in text(md)  # shown as the name it is
    page = (run / "leaderboard.html").read_text(encoding="utf-8")
    assert "evil.example" in page and not re.search(r"<(img|a)\b[^>]*evil", page)
    assert links((run / "ood.md").read_text(encoding="utf-8")) == []


def test_ood_preprocessing_of_run_json_renders_no_link(tmp_path: Path) -> None:
    run = {"config": {"dataset": "mnist", "n_train": 0, "ood_in_split": "val",
                      "ood_preprocessing": LINK, "s_eval": 100},
           "models": {"mlp": {"config": {"hidden": [256, 256, 256], "activation": "gelu",
                                         "init": "glorot"}}}}
    results = results_frame([Result("mlp", 0, "ood", "uniform", setting(S_eval=100),
                                    "max_prob", "auroc", 0.95)])
    md = ood_markdown(ood_frame(results, [run]))
    assert "## Published under another protocol" in md
    assert links(md) == []  # before: a link to https://evil.example/x
    assert f"this run {LINK}" in text(md) or f"this run '{LINK}'" in text(md)
    (item,) = [i for i in legend(results, [run]) if i.startswith("**OOD.**")]
    assert links(item) == [] and f"preprocessing {LINK};" in text(item)


def test_every_report_of_hostile_names_renders_no_link(tmp_path: Path) -> None:
    hostile = {"model": "<img src=x>[m](http://e.x)", "task": "sq`[u](http://e.x)`are",
               "measure": "*b*[x]: http://e.x", "set": "www.evil.example"}
    results = (_renamed(rows(hostile["model"]), uniform=hostile["set"], bald=hostile["measure"])
               + _renamed(pgd_rows("m", task="square"), square=hostile["task"]))
    run = write_run(tmp_path / "run", results)
    render([run], run, figures=False)
    for name in ("leaderboard.md", "ood.md", "attack.md"):
        md = (run / name).read_text(encoding="utf-8")
        assert foreign(md) == [], name
        assert "\\[m\\](http\\://e.x)" in md or name == "ood.md", name
    board = json.loads((run / "leaderboard.json").read_text(encoding="utf-8"))
    assert hostile["model"] in [r["model"] for r in board["rows"]]  # the data keeps the name
    item = next(i for i in board["legend"] if i.startswith("**sq"))
    assert links(item) == [] and f"{hostile['task']}." in text(item)


def test_escape_keeps_names_readable_and_code_spans_whole() -> None:
    assert escape("expected_entropy S_attack=32 heldout:4 (5% FPR) @20") == \
        "expected_entropy S_attack=32 heldout:4 (5% FPR) @20"
    assert escape("_a_ *b* `c` [d] <e> &f | #g ~h $i$") == \
        "\\_a\\_ \\*b\\* \\`c\\` \\[d\\] &lt;e&gt; &amp;f \\| \\#g \\~h \\$i\\$"
    assert escape("https://e.x www.e.x a@e.x") == "https\\://e.x www\\.e.x a\\@e.x"
    assert escape("unit", to="code") == "`unit`"
    assert escape("a`b", to="code") == "``a`b``"
    assert text(f"x {escape('`a`` b`', to='code')} y") == "x `a`` b` y"
    assert escape("<'\">&", to="html") == "&lt;&#x27;&quot;&gt;&amp;"


def test_odd_unicode_in_a_name_prints_visibly_on_one_line() -> None:
    assert visible("m\x00\u202e\u200fl\ud800p\nq\tr") == "m\\u0000\\u202e\\u200fl\\ud800p q r"
    assert escape("m\u202ep") == "m\\\\u202ep" and text(escape("m\u202ep")) == "m\\u202ep"
    assert escape("m\x00p", to="html") == "m\\u0000p"
    assert escape("m\ud800p", to="code").encode("utf-8") == b"`m\\ud800p`"
