"""The public API for plug-in authors: one list in code (``robustbnn.public``), the page that
shows it (docs/api/public.md), and plug-ins of the previous release that still run, warned."""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from robustbnn.attacks import ATTACKS, GradientSettings, attack_labels, mc_input_grad
from robustbnn.attacks.budget import check_budget
from robustbnn.cli import main
from robustbnn.public import DEPRECATED, PUBLIC, REMOVED_IN, RobustbnnDeprecationWarning
from robustbnn.testing import CheckOptions, check_model

from ._models import NoisyLinear

OLD_PLUGIN = "tests.plugins.old_l2_pgd_plugin"
PAGE = Path(__file__).resolve().parents[2] / "docs" / "api" / "public.md"


@pytest.fixture
def old_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The old plug-in imported afresh (it registers on import), its registration undone."""
    monkeypatch.delitem(sys.modules, OLD_PLUGIN, raising=False)
    with ATTACKS.sandbox():
        yield


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.rand(4, 1, 6, 7, generator=g), torch.randint(0, 7, (4,), generator=g)


def test_an_attack_plugin_of_the_previous_release_runs_and_is_warned(old_plugin: None) -> None:
    from robustbnn.plugins import load_plugins

    load_plugins([OLD_PLUGIN])  # as --plugin does: import it, and it registers itself
    attack = ATTACKS.get("old_pgd_l2")(eps=0.5, n_samples=2, steps=3)
    x, y = _inputs()
    with pytest.warns(RobustbnnDeprecationWarning) as seen:
        x_adv = attack(NoisyLinear(), x, y, generator=torch.Generator().manual_seed(0))
    check_budget(x, x_adv, 0.5, "l2", attack="old_pgd_l2")
    assert not torch.equal(x_adv, x)  # it moved: the gradient came through
    message = str(seen[0].message)
    assert message.startswith("mc_input_grad(model, x, y, n_samples=2, objective='expected') "
                              f"is deprecated and goes away in robustbnn {REMOVED_IN}: call "
                              "mc_input_grad(model, x, y, GradientSettings(n_samples=2, "
                              "objective='expected'), ...)"), message
    assert seen[0].filename.endswith("old_l2_pgd_plugin.py")  # points at the plug-in's line


def test_an_old_attack_plugin_passes_the_attack_kit_from_the_cli(
        old_plugin: None, capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobustbnnDeprecationWarning)
        code = main(["check", "--plugin", OLD_PLUGIN, "--attack", "old_pgd_l2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.splitlines()[-1] == "checked 1 attack(s): every clause passed"


def test_the_old_gradient_call_equals_the_new_one() -> None:
    x, y = _inputs()
    model = NoisyLinear()
    new = mc_input_grad(model, x, y, GradientSettings(3, "expected", "predicted"),
                        generator=torch.Generator().manual_seed(5))
    with pytest.warns(RobustbnnDeprecationWarning, match="name= is no longer needed"):
        old = mc_input_grad(model, x, y, n_samples=3, objective="expected", label="predicted",
                            generator=torch.Generator().manual_seed(5), name="noisy")
    assert torch.equal(old, new)
    with pytest.warns(RobustbnnDeprecationWarning, match=r"^attack_labels\(model, x, y, "
                                                          r"label='predicted', n_samples=3\)"):
        labels = attack_labels(model, x, y, label="predicted", n_samples=3,
                               generator=torch.Generator().manual_seed(5))
    assert torch.equal(labels, attack_labels(model, x, y, GradientSettings(3, label="predicted"),
                                             generator=torch.Generator().manual_seed(5)))


def test_the_old_check_model_keywords_still_check(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.warns(RobustbnnDeprecationWarning, match=r"CheckOptions\(device='cpu', "
                                                          r"num_classes=5\)"):
        old = check_model("mlp", device="cpu", num_classes=5, clauses=("shape",))
    new = check_model("mlp", options=CheckOptions(device="cpu", num_classes=5),
                      clauses=("shape",))
    assert old == new


def test_mixing_or_misspelling_the_forms_is_a_type_error() -> None:
    x, y = _inputs()
    with pytest.raises(TypeError, match="either settings or the old keywords"):
        mc_input_grad(NoisyLinear(), x, y, GradientSettings(2), n_samples=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'samples'"):
        mc_input_grad(NoisyLinear(), x, y, samples=2)
    with pytest.raises(TypeError, match="missing its settings"):
        mc_input_grad(NoisyLinear(), x, y)


def _resolve(dotted: str) -> object:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_public_name_exists() -> None:
    for names in PUBLIC.values():
        for dotted in names:
            assert _resolve(dotted) is not None, dotted


def test_the_page_lists_exactly_the_public_names_and_deprecations() -> None:
    text = PAGE.read_text(encoding="utf-8")
    sections = dict.fromkeys(re.findall(r"^## (.+)$", text, flags=re.M))
    shown: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif match := re.match(r"^\| `(robustbnn[\w.]*)` \|", line):
            shown.setdefault(section, []).append(match[1])
    assert shown == {s: list(n) for s, n in PUBLIC.items()}
    assert "Deprecated forms" in sections
    for old in DEPRECATED:
        assert f"| `{old.old}` | `{old.new}` | {old.removed_in} |" in text, old
