"""The clauses every sampler keeps: ``sample_logits``, and ``attack_logits`` when a model has
one (clause ``attack_logits`` reruns them on it).

Each clause draws from explicit generators on the run device at fixed seeds, so a check is a
pure function of the model; a violation raises :class:`Broken` saying what was seen and how
models usually fix it. The clauses of the model as a whole (modes, devices, the cache, the
loss) are :mod:`robustbnn.testing.clauses`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from robustbnn.models import ModelSpec
from robustbnn.testing.bitwise import equal, first_difference, max_diff
from robustbnn.testing.global_rngs import GLOBAL_SEEDS, global_rngs, same_state, set_global_rngs

__all__ = ["S_VARY", "Broken", "CheckOptions", "Sampler", "SamplerClauses"]

S_VARY = 16  # samples per call where samples must (not) vary: a 3-member mixture repeats at S=3

Sampler = Callable[..., Tensor]  # sample_logits or attack_logits


class Broken(Exception):
    """A clause saw a violation; the message says what."""


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """Where a check runs and at which sizes; the defaults are distinct, so a swapped axis fails.

    Attributes:
        device: The run device (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"auto"``).
        input_shape: Shape of one input, passed to ``build``.
        num_classes: C of the model :func:`~robustbnn.testing.model.check_model` builds
            (:func:`~robustbnn.testing.model.check_module` reads C from ``model.num_classes``).
        batch: B.
        n_samples: S; keep S, B and C distinct.
    """

    device: str | torch.device = "cpu"
    input_shape: tuple[int, ...] = (1, 6, 7)
    num_classes: int = 7
    batch: int = 5
    n_samples: int = 3


class SamplerClauses:
    """One model under check, with one method per clause of its samplers.

    A clause raises :class:`Broken` when it is violated, and returns why it does not apply, or
    None when it holds.

    Every call gets its own copy of the check inputs, so a model that changes its input in place
    breaks clause ``input_unchanged`` alone, not every clause that compares two calls.

    Args:
        model: The model under check, on the run device.
        spec: Its registry entry (``stochastic``, ``build``).
        config: The config it was built from.
        options: The run device (a ``torch.device``) and the input shape, B and S of the check
            inputs.
        name: The model's name, for the messages that name it.
    """

    def __init__(self, model: nn.Module, spec: ModelSpec, config: Any,
                 options: CheckOptions, *, name: str = "") -> None:
        self.model, self.spec, self.config = model, spec, config
        self.name = name or type(model).__name__
        self.input_shape, self.S = tuple(options.input_shape), options.n_samples
        self.device = device = torch.device(options.device)
        cpu = torch.Generator().manual_seed(12345)
        # (B, *) in [0, 1]
        self.x = torch.rand(options.batch, *self.input_shape, generator=cpu).to(device)
        self.C = getattr(model, "num_classes", None)
        self.y = torch.randint(self.C or 1, (options.batch,), generator=cpu).to(device)

    def gen(self, seed: int) -> torch.Generator:
        """A generator on the run device, seeded."""
        return torch.Generator(self.device).manual_seed(seed)

    def draw(self, sample: Sampler, seed: int, n: int | None = None) -> Tensor:
        """``n`` (default S) samples at the check inputs, without autograd."""
        with torch.no_grad():
            return sample(self.x.clone(), n or self.S, generator=self.gen(seed))

    def shape(self, sample: Sampler | None = None) -> None:
        """Shape (S, B, C), with and without autograd."""
        sample = sample or self.model.sample_logits
        if not isinstance(self.C, int):
            raise Broken(f"the module has no integer num_classes (got {self.C!r})")
        S, B, C = self.S, self.x.shape[0], self.C
        with torch.no_grad():
            calls = [(S, B, "under no_grad", sample(self.x.clone(), S, generator=self.gen(0))),
                     (1, B, "under no_grad", sample(self.x.clone(), 1, generator=self.gen(0))),
                     (S, 1, "under no_grad", sample(self.x[:1].clone(), S,
                                                    generator=self.gen(0)))]
        calls.append((S, B, "with autograd", sample(self.x.clone(), S, generator=self.gen(0))))
        for s, b, mode, out in calls:
            got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
            if got != (s, b, C):
                hint = ""
                if got == (b, s, C):
                    hint = " (samples last: put the sample axis first)"
                elif 1 in (s, b) and got in ((s * b, C), (C,)):
                    hint = " (an axis of size 1 was squeezed away: keep it)"
                elif got == (s * b, C):
                    hint = " (flattened: keep S and B apart)"
                raise Broken(f"{sample.__name__}(x, {s}) with B={b}, C={C} gave shape {got} "
                             f"{mode}, not (S, B, C) = {(s, b, C)}{hint}")

    def input_unchanged(self, sample: Sampler | None = None) -> None:
        """The input ``x`` is as it was after a call, with and without autograd.

        The harness passes the same test points to many calls and cells; it gives each call
        its own copy, but a model that writes into its input computes from what it left there.
        """
        sample = sample or self.model.sample_logits
        for mode, grad in (("under no_grad", False), ("with autograd", True)):
            x = self.x.clone()
            with torch.set_grad_enabled(grad):
                sample(x, self.S, generator=self.gen(0))
            if not equal(x, self.x):
                raise Broken(f"model {self.name!r} changes its input x in place (max |diff| "
                             f"{max_diff(x, self.x)}, {mode}); clone it first (x = x.clone()) "
                             "or compute out of place (x * s, not x.mul_(s)): the harness "
                             "passes the same points to every call")

    def dtype_finite(self, sample: Sampler | None = None) -> None:
        """Floating point and finite."""
        out = self.draw(sample or self.model.sample_logits, 0)
        if not out.is_floating_point():
            raise Broken(f"logits have dtype {out.dtype}, not a floating type")
        if not torch.isfinite(out).all():
            raise Broken(f"{(~torch.isfinite(out)).sum().item()} of {out.numel()} logits are "
                         "NaN or inf for inputs in [0, 1]")

    def input_gradient(self, sample: Sampler | None = None) -> None:
        """A finite, nonzero gradient with respect to x."""
        x = self.x.clone().requires_grad_(True)
        out = (sample or self.model.sample_logits)(x, self.S, generator=self.gen(0))
        if not out.requires_grad:
            raise Broken("the logits do not require grad: a .detach(), no_grad() or "
                         "non-differentiable op cuts them off from x (attacks need d/dx)")
        (grad,) = torch.autograd.grad(out.logsumexp(-1).sum(), x, allow_unused=True)
        if grad is None:
            raise Broken("the logits do not depend on x in the autograd graph")
        if not torch.isfinite(grad).all():
            raise Broken("the input gradient has NaN or inf entries")
        if not grad.abs().sum() > 0:
            raise Broken("the input gradient is zero everywhere")

    def reproducible(self, sample: Sampler | None = None) -> None:
        """Equal generator states give bitwise equal samples."""
        sample = sample or self.model.sample_logits
        a, b = self.draw(sample, 1), self.draw(sample, 1)
        if not equal(a, b):
            raise Broken("two calls with generators seeded alike differ (max |diff| "
                         f"{max_diff(a, b)}): thread the generator to every random draw")

    def variation(self, sample: Sampler | None = None) -> None:
        """Stochastic: other generators and other slices differ; else all are equal."""
        sample = sample or self.model.sample_logits
        a, c = self.draw(sample, 1, S_VARY), self.draw(sample, 2, S_VARY)
        if self.spec.stochastic:
            if equal(a, c):
                raise Broken("in eval(), generators seeded 1 and 2 give identical samples: the "
                             "model ignores its generator (or its spec should say "
                             "stochastic=False)")
            if equal(a, a[:1].expand_as(a)):
                raise Broken(f"in eval(), all {S_VARY} samples of one call are identical "
                             "although the spec says stochastic=True")
        else:
            if not torch.allclose(a, c):
                raise Broken("stochastic=False, but generators seeded 1 and 2 give different "
                             f"samples (max |diff| {max_diff(a, c)})")
            if not torch.allclose(a, a[:1].expand_as(a)):
                raise Broken("stochastic=False, but the samples of one call differ")

    def logits(self, sample: Sampler | None = None) -> None:
        """Logits, not probabilities: not every row is non-negative and sums to 1."""
        out = self.draw(sample or self.model.sample_logits, 0)  # (S, B, C)
        if not out.is_floating_point():
            return  # clause dtype_finite's to report
        # Float tolerance of a row sum: C roundings of size eps, with room to spare.
        tol = 10 * out.shape[-1] * torch.finfo(out.dtype).eps
        off = (out.double().sum(-1) - 1).abs()  # (S, B)
        if out.numel() and (out >= 0).all() and (off <= tol).all():
            raise Broken(f"returns probabilities, not logits: every row of its "
                         f"{tuple(out.shape)} output is non-negative and sums to 1 (max "
                         f"|sum - 1| {off.max().item():.3g}); return the unnormalised scores "
                         "(the harness applies softmax)")

    def global_rng(self, sample: Sampler | None = None) -> None:
        """The global RNGs (torch's CPU and CUDA, Python's, NumPy's) are untouched.

        Two consecutive calls, each with a fresh generator, start from two distinct global
        states set here: a model that reseeds a global RNG (``torch.manual_seed(1234)``)
        leaves it where it left it the call before, so one call alone cannot see it.
        """
        for mode in ("eval", "train"):
            self.model.train(mode == "train")
            changed: dict[str, list[Any]] = {}
            for seed in GLOBAL_SEEDS:
                set_global_rngs(seed, self.device)
                before = global_rngs(self.device)
                self.draw(sample or self.model.sample_logits, 4)
                after = global_rngs(self.device)
                for rng in before:
                    if not same_state(before[rng], after[rng]):
                        changed.setdefault(rng, []).append(after[rng])
            for rng, afters in changed.items():
                reseeded = len(afters) == len(GLOBAL_SEEDS) and same_state(*afters)
                how = (" to the same state from two different ones (it reseeds it, e.g. "
                       "torch.manual_seed in sample_logits)" if reseeded else "")
                raise Broken(f"a call in {mode}() mode changed {rng}{how}: draw from the "
                             "generator argument (library code that cannot: wrap it in "
                             "robustbnn.contract.rng.seeded_global)")

    def state_unchanged(self, sample: Sampler | None = None) -> None:
        """state_dict bitwise equal and every submodule's mode unchanged, in both modes."""
        for mode in ("eval", "train"):
            self.model.train(mode == "train")
            before = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            flags = [m.training for m in self.model.modules()]
            self.draw(sample or self.model.sample_logits, 5)
            key = first_difference(before, self.model.state_dict())
            if key:
                raise Broken(f"a call in {mode}() mode changed state {key!r}: sample weights "
                             "functionally or restore them in a finally block")
            if flags != [m.training for m in self.model.modules()]:
                raise Broken(f"a call in {mode}() mode switched a submodule's train/eval mode")
