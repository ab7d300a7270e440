"""The boundary wrapper: ``checked()`` wraps a model once, and every call is checked once."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
import torch

from robustbnn.attacks import FGSM, PGD, GradientSettings, TargetedIFGSM
from robustbnn.attacks.adaptive import DetectorAwarePGD
from robustbnn.attacks.adversarial_ood import LowerUncertainty
from robustbnn.attacks.reliability import gradient_snr
from robustbnn.attacks.sanity import fixed_randomness_succeeds
from robustbnn.contract import types
from robustbnn.contract.checked import Checked, checked
from robustbnn.contract.predict import Evaluation, sample_probs
from robustbnn.errors import ModelContractError
from robustbnn.metrics.worst_of_k import worst_of_k
from tests._helpers import seeded
from tests.attacks._models import SHAPE, NoisyLinear, Recorder, linear


def test_checked_wraps_once_and_names_a_raw_model_by_its_class() -> None:
    model = linear()
    wrapped = checked(model)
    assert isinstance(wrapped, Checked) and wrapped.model is model
    assert wrapped.name == "LinearModel" and wrapped.num_classes == 7
    assert checked(wrapped) is wrapped  # idempotent: never a wrapper around a wrapper
    named = Checked(model, "mlp")
    assert checked(named) is named and named.name == "mlp"


class _SamplesLast(NoisyLinear):
    def sample_logits(self, x, n_samples, *, generator=None):  # noqa: ANN001, ANN202
        return super().sample_logits(x, n_samples, generator=generator).transpose(0, 1)


def test_a_raw_model_is_named_by_its_class_a_checked_one_by_its_name() -> None:
    x, y = torch.rand(5, *SHAPE), torch.arange(5)
    with pytest.raises(ModelContractError) as raw:
        FGSM(eps=0.1, n_samples=3)(_SamplesLast(), x, y)
    assert str(raw.value) == ("model '_SamplesLast': clause 'shape' failed: sample_logits must "
                              "return (S, B, C) = (3, 5, 7), got (5, 3, 7) (samples last: put "
                              "the sample axis first)")
    with pytest.raises(ModelContractError, match="^model 'bbb': clause 'shape'"):
        FGSM(eps=0.1, n_samples=3)(Checked(_SamplesLast(), "bbb"), x, y)


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count every ``check_sample_logits`` call, in whichever module imported it."""
    calls: list[int] = []
    real = types.check_sample_logits

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return real(*args, **kwargs)

    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "") or ""
        if name.startswith("robustbnn") and getattr(module, "check_sample_logits", None) is real:
            monkeypatch.setattr(module, "check_sample_logits", counting)
    return calls


X, Y = torch.rand(4, *SHAPE, generator=seeded(0)), torch.tensor([1, 2, 3, 4])
ENTRY_POINTS: dict[str, Callable[[torch.nn.Module], object]] = {
    "fgsm": lambda m: FGSM(eps=0.1, n_samples=2, label="predicted")(m, X, Y, generator=seeded(1)),
    "pgd": lambda m: PGD(eps=0.1, step_size=0.05, steps=2, restarts=2, n_samples=2,
                         label="predicted")(m, X, Y, generator=seeded(1)),
    "targeted": lambda m: TargetedIFGSM(steps=2, n_samples=2)(m, X, Y, generator=seeded(1)),
    "detector_aware": lambda m: DetectorAwarePGD(steps=2, n_samples=2)(m, X, Y,
                                                                     generator=seeded(1)),
    "lower_uncertainty": lambda m: LowerUncertainty("max_prob", 0.1, 0.05, 2, 2)(
        m, X, generator=seeded(1)),
    "gradient_snr": lambda m: gradient_snr(m, X, Y, n_samples=3, generator=seeded(1)),
    "sample_probs": lambda m: sample_probs(m, X, 3, generator=seeded(1)),
    "worst_of_k": lambda m: worst_of_k(m, X, Y, Evaluation(2, seeded(1)), k=2),
    "fixed_randomness": lambda m: fixed_randomness_succeeds(
        m, X, Y, PGD(eps=0.1, steps=2, n_samples=2), member=seeded(2), generator=seeded(1)),
}


@pytest.mark.parametrize("wrap", [False, True], ids=["raw", "checked"])
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_every_call_is_checked_exactly_once(entry: str, wrap: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    model = Recorder(NoisyLinear())
    checks = _count_checks(monkeypatch)
    ENTRY_POINTS[entry](Checked(model, "noisy") if wrap else model)
    assert model.calls and len(checks) == len(model.calls)


def test_settings_objects_check_their_values() -> None:
    with pytest.raises(ValueError, match=r"^need n_samples >= 1, got 0$"):
        GradientSettings(0)
    with pytest.raises(ValueError, match=r"^need s_eval >= 1, got 0$"):
        Evaluation(0)
    with pytest.raises(ValueError, match=r"^need eps >= 0, steps >= 0 and n_samples >= 1, "
                       r"got 0.1, -1, 1$"):
        LowerUncertainty("max_prob", 0.1, 0.01, -1, 1)
    with pytest.raises(ValueError, match="variation_ratio is piecewise constant"):
        LowerUncertainty("variation_ratio", 0.1, 0.01, 1, 1)
