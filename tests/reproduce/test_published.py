"""published.json: every number carries a protocol made of real run fields."""

from __future__ import annotations

import dataclasses

import pytest

from robustbnn.bench_config import BenchConfig
from robustbnn.models import MODELS
from robustbnn.report.published import differences, find, table, tables
from robustbnn.results.names import KNOBS

BENCH_FIELDS = {f.name for f in dataclasses.fields(BenchConfig)}
MODEL_FIELDS = {f.name for n in MODELS.names() for f in dataclasses.fields(MODELS.get(n).config)}


def test_every_protocol_field_names_a_real_setting() -> None:
    for t in tables().values():
        for e in t.entries:
            for field in e.protocol:
                kind, _, name = field.partition(".")
                known = {"bench": BENCH_FIELDS, "model": MODEL_FIELDS, "setting": set(KNOBS)}
                if field == "bench.pixel_scale":  # BbB's ÷126: no run of ours can claim it
                    continue
                assert name in known[kind], f"{t.name} {e.row}/{e.column}: unknown {field}"


def test_every_row_maps_to_registered_models() -> None:
    for t in tables().values():
        for e in t.entries:
            assert e.models, f"{t.name}: row {e.row!r} maps to none of our models"
            for m in e.models:
                MODELS.get(m)


def test_published_values_are_copied_exactly() -> None:
    t2 = {(e.row, e.column): e.value for e in table("bhn_table2").entries}
    assert t2["MC dropout", "notmnist auroc"] == 97.78
    assert t2["MLP", "notmnist aupr_out"] == 39.70
    assert t2["BHN", "gaussian aupr_in"] == 86.62
    t1 = {(e.row, e.column): e.value for e in table("bhn_table1_mnist5000").entries}
    assert t1["BHN 12", "B"] == 96.51 and t1["dropout", "A"] == 95.58
    noise = {e.row: e.value for e in table("bbb_tutorial_noise").entries}
    assert noise == {"MLP": 0.1446, "BNN": 0.9909}
    assert len(table("bhn_table3").entries) == 3 * 10 * (1 + 3 + 3 + 3)


def test_counts_are_part_of_the_protocol_of_pr_only() -> None:
    auroc = find("mlp", task="ood", dataset="notmnist", measure="max_prob", metric="auroc")[0]
    pr = find("mlp", task="ood", dataset="notmnist", measure="max_prob", metric="aupr_out")[0]
    assert "setting.n_out" not in auroc.protocol
    assert pr.protocol["setting.n_out"] == 1000 and pr.protocol["setting.n_in"] == 10000


def test_differences_name_the_field_both_values_and_accept_any_of() -> None:
    proto = {"bench.dataset": "mnist", "model.hidden": {"any_of": [[800, 800], [800]]}}
    assert differences(proto, {"bench.dataset": "mnist", "model.hidden": [800]}) == []
    assert differences(proto, {"bench.dataset": "mnist", "model.hidden": (800, 800)}) == []
    assert differences(proto, {"bench.dataset": "mnist5k", "model.hidden": [400]}) == [
        "bench.dataset: published mnist, this run mnist5k",
        "model.hidden: published [800, 800] or [800], this run [400]"]
    assert differences({"model.init": "glorot"}, {}) == [
        "model.init: published glorot, this run (not set)"]


def test_unknown_table_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known: \\['bbb_table1'"):
        table("bhn_table9")
