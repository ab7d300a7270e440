"""Plug-in models that each break one clause of the model contract (``robustbnn check`` tests).

``contract_ok`` keeps every clause; every ``bad_*`` model changes one thing about it. None of
them is imported by the package or the contract tests: load this module with ``--plugin``.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class NoisyConfig(TrainConfig):
    """A linear classifier with Gaussian weight noise."""


class Noisy(BayesianModule):
    """Logits x W_s with W_s = W + 0.1 ε_s, ε_s ~ N(0, I) drawn from the generator."""

    def __init__(self, cfg: NoisyConfig, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes = num_classes
        d = torch.Size(input_shape).numel()
        self.w = torch.nn.Parameter(0.1 * torch.randn(d, num_classes, generator=generator))

    def noise(self, n_samples: int, x: Tensor, generator: torch.Generator | None) -> Tensor:
        """ε, shape (S, D, C)."""
        return torch.randn((n_samples, *self.w.shape), generator=generator, device=x.device)

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        w = self.w + 0.1 * self.noise(n_samples, x, generator)  # (S, D, C)
        return torch.einsum("bd,sdc->sbc", x.flatten(1), w)  # (S, B, C)


class SamplesLast(Noisy):
    """Returns (B, S, C)."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return super().sample_logits(x, n_samples, generator=generator).transpose(0, 1)


class SeedsGlobalRng(Noisy):
    """Reproducible, but reseeds torch's global RNG from the generator and draws from it."""

    def noise(self, n_samples: int, x: Tensor, generator: torch.Generator | None) -> Tensor:
        torch.manual_seed(int(torch.randint(2**31, (1,), generator=generator)))
        return torch.randn((n_samples, *self.w.shape), device=x.device)


class IgnoresGenerator(Noisy):
    """Draws from torch's global RNG instead of the generator."""

    def noise(self, n_samples: int, x: Tensor, generator: torch.Generator | None) -> Tensor:
        return torch.randn((n_samples, *self.w.shape), device=x.device)


class FixedSeed(Noisy):
    """Draws from its own generator, seeded alike on every call, whatever it is given."""

    def noise(self, n_samples: int, x: Tensor, generator: torch.Generator | None) -> Tensor:
        own = torch.Generator(x.device).manual_seed(0)
        return torch.randn((n_samples, *self.w.shape), generator=own, device=x.device)


class NoiseOnlyInTrain(Noisy):
    """Samples only in train() mode, as nn.Dropout does: eval() switches sampling off."""

    def noise(self, n_samples: int, x: Tensor, generator: torch.Generator | None) -> Tensor:
        eps = super().noise(n_samples, x, generator)
        return eps if self.training else torch.zeros_like(eps)


class CountsCalls(Noisy):
    """Increments a buffer on every call."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        self.calls += 1
        return super().sample_logits(x, n_samples, generator=generator)


class Detached(Noisy):
    """Detaches its logits, so attacks get no input gradient."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return super().sample_logits(x, n_samples, generator=generator).detach()


class DetachedInput(Noisy):
    """Detaches its input, so the logits depend on the weights but not on x in the graph."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return super().sample_logits(x.detach(), n_samples, generator=generator)


class Probabilities(Noisy):
    """Returns softmax probabilities instead of logits."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return super().sample_logits(x, n_samples, generator=generator).softmax(-1)


class GlobalInit(Noisy):
    """Initialises its weights from torch's global RNG, not from build's generator."""

    def __init__(self, cfg: NoisyConfig, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__(cfg, input_shape, num_classes, None)


class TemperatureOutsideBuffers(Noisy):
    """Fits a temperature after training but keeps it in a plain attribute, not a buffer, so
    the cache drops it."""

    temperature = 1.0

    def after_fit(self, train: object, val: object, *,
                  generator: torch.Generator | None = None) -> None:
        self.temperature = 2.0

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return super().sample_logits(x, n_samples, generator=generator) / self.temperature


class AttackSamplesLast(Noisy):
    """Keeps the contract in ``sample_logits``, but its ``attack_logits`` returns (B, S, C)."""

    def attack_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return self.sample_logits(x, n_samples, generator=generator).transpose(0, 1)


BAD = {  # name -> (class, the clause it breaks)
    "bad_samples_last": (SamplesLast, "shape"),
    "bad_seeds_global_rng": (SeedsGlobalRng, "global_rng"),
    "bad_ignores_generator": (IgnoresGenerator, "reproducible"),
    "bad_fixed_seed": (FixedSeed, "variation"),
    "bad_noise_only_in_train": (NoiseOnlyInTrain, "train_eval"),
    "bad_counts_calls": (CountsCalls, "state_unchanged"),
    "bad_detached": (Detached, "input_gradient"),
    "bad_detached_input": (DetachedInput, "input_gradient"),
    "bad_probabilities": (Probabilities, "logits"),
    "bad_global_init": (GlobalInit, "build"),
    "bad_state_outside_buffers": (TemperatureOutsideBuffers, "cache_round_trip"),
    "bad_attack_samples_last": (AttackSamplesLast, "attack_logits"),
}

MODELS.register("contract_ok", ModelSpec(Noisy, NoisyConfig, "keeps the contract", "tests"))
for _name, (_cls, _clause) in BAD.items():
    MODELS.register(_name, ModelSpec(_cls, NoisyConfig, f"breaks clause {_clause}", "tests"))
