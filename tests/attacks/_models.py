"""Tiny models and spies for attack tests."""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor, nn

from robustbnn.attacks import ATTACKS
from tests._toys import LinearModel

SHAPE = (1, 6, 7)  # D = 42 inputs, C = 7 classes
SMALL = {"eps": 0.1, "step_size": 0.02, "steps": 5, "n_samples": 2, "restarts": 2,
         "checkpoint_every": 2}


def make(name: str, **changes):
    """A registered attack with small hyper-parameters (only the fields it has)."""
    cls = ATTACKS.get(name)
    fields = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in {**SMALL, **changes}.items() if k in fields})


def linear(seed: int = 0, scale: float = 1.0) -> LinearModel:
    g = torch.Generator().manual_seed(seed)
    return LinearModel(scale * torch.randn(42, 7, generator=g), torch.randn(7, generator=g))


class NoisyLinear(nn.Module):
    """Stochastic linear classifier: each sample perturbs the weights with N(0, sigma^2)."""

    def __init__(self, seed: int = 0, sigma: float = 1.0) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.num_classes = 7
        self.sigma = sigma
        self.weight = nn.Parameter(torch.randn(42, 7, generator=g))
        self.bias = nn.Parameter(torch.randn(7, generator=g))

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        noise = torch.randn(n_samples, 42, 7, generator=generator)  # (S, D, C)
        w = self.weight + self.sigma * noise
        return torch.einsum("bd,sdc->sbc", x.flatten(1), w) + self.bias  # (S, B, C)


class Recorder(nn.Module):
    """Passes calls through and records (generator, grad enabled) of every sample_logits."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.num_classes = inner.num_classes
        self.calls: list[tuple[torch.Generator | None, bool]] = []

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        self.calls.append((generator, torch.is_grad_enabled()))
        return self.inner.sample_logits(x, n_samples, generator=generator)


def _forbidden(*args, **kwargs):
    raise AssertionError("an attack switched the module mode")


class NoModeSwitch(nn.Module):
    """A spy: switching the mode of it or of any submodule raises."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.num_classes = inner.num_classes
        for module in inner.modules():
            module.train = _forbidden  # instance attribute shadows nn.Module.train
            module.eval = _forbidden

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return self.inner.sample_logits(x, n_samples, generator=generator)

    def train(self, mode: bool = True):
        _forbidden()

    def eval(self):
        _forbidden()


class ConstantModel(nn.Module):
    """Logits that do not depend on x: every input gradient is exactly zero."""

    num_classes = 7

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        logits = 0.0 * x.flatten(1)[:, :7] + torch.arange(7.0)  # (B, C)
        return logits.expand(n_samples, *logits.shape)


class RoundedLinear(LinearModel):
    """A gradient-masked linear model: it sees round(x), whose gradient is zero."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        return super().sample_logits(torch.round(x), n_samples, generator=generator)


def rounded_linear(seed: int = 0) -> RoundedLinear:
    g = torch.Generator().manual_seed(seed)
    return RoundedLinear(torch.randn(42, 7, generator=g), torch.randn(7, generator=g))


class InputDropoutLinear(nn.Module):
    """A linear classifier behind heavy input dropout: each sample keeps each pixel of each
    example with probability ``1 - p`` (inverted scaling). One sample's gradient sees only the
    kept pixels, so an attack with more samples moves more of the input per step."""

    def __init__(self, seed: int = 0, p: float = 0.9) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.num_classes = 7
        self.p = p
        self.weight = nn.Parameter(torch.randn(42, 7, generator=g))
        self.bias = nn.Parameter(torch.zeros(7))

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        flat = x.flatten(1)
        keep = torch.rand(n_samples, *flat.shape, generator=generator) >= self.p  # (S, B, D)
        kept = flat * keep / (1 - self.p)
        return kept @ self.weight + self.bias  # (S, B, C)
