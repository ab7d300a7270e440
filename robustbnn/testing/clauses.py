"""The clauses of the model contract, one method each (the kit is :mod:`robustbnn.testing`).

Each clause draws from explicit generators on the run device at fixed seeds, so a check is a
pure function of the model; a violation raises :class:`Broken` saying what was seen and how
models usually fix it.
"""

from __future__ import annotations

import copy
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from robustbnn.models import ModelSpec
from robustbnn.training import cache

S_VARY = 16  # samples per call where samples must (not) vary: a 3-member mixture repeats at S=3

Sampler = Callable[..., Tensor]  # sample_logits or attack_logits


class Broken(Exception):
    """A clause saw a violation; the message says what."""


class Clauses:
    """One model under check, with one method per clause.

    A clause raises :class:`Broken` when it is violated, and returns why it does not apply, or
    None when it holds.
    """

    def __init__(self, model: nn.Module, spec: ModelSpec, name: str, config: Any,
                 input_shape: tuple[int, ...], device: torch.device, batch: int,
                 n_samples: int) -> None:
        self.model, self.spec, self.name, self.config = model, spec, name, config
        self.input_shape, self.device, self.S = input_shape, device, n_samples
        cpu = torch.Generator().manual_seed(12345)
        self.x = torch.rand(batch, *input_shape, generator=cpu).to(device)  # (B, *) in [0, 1]
        self.C = getattr(model, "num_classes", None)
        self.y = torch.randint(self.C or 1, (batch,), generator=cpu).to(device)

    def gen(self, seed: int) -> torch.Generator:
        """A generator on the run device, seeded."""
        return torch.Generator(self.device).manual_seed(seed)

    def draw(self, sample: Sampler, seed: int, n: int | None = None) -> Tensor:
        """``n`` (default S) samples at the check inputs, without autograd."""
        with torch.no_grad():
            return sample(self.x, n or self.S, generator=self.gen(seed))

    # The clauses of sample_logits; ``attack_logits`` reruns them on model.attack_logits.
    def shape(self, sample: Sampler | None = None) -> None:
        """Shape (S, B, C), with and without autograd."""
        sample = sample or self.model.sample_logits
        if not isinstance(self.C, int):
            raise Broken(f"the module has no integer num_classes (got {self.C!r})")
        S, B, C = self.S, self.x.shape[0], self.C
        with torch.no_grad():
            calls = [(S, B, "under no_grad", sample(self.x, S, generator=self.gen(0))),
                     (1, B, "under no_grad", sample(self.x, 1, generator=self.gen(0))),
                     (S, 1, "under no_grad", sample(self.x[:1], S, generator=self.gen(0)))]
        calls.append((S, B, "with autograd", sample(self.x, S, generator=self.gen(0))))
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

    def same_generator_same_samples(self, first: Tensor, seed: int, n: int, where: str) -> None:
        """Before a clause compares two draws: equal generators reproduce ``first`` (``n``
        samples from ``seed``) at all.

        Otherwise a difference the clause sees says nothing about what it checks (train/eval
        mode, the cache): the samples come from somewhere other than the generator.
        """
        again = self.draw(self.model.sample_logits, seed, n)
        if not equal(first, again):
            raise Broken(f"two calls {where} with generators seeded alike already differ (max "
                         f"|diff| {max_diff(first, again)}), so this clause cannot tell "
                         "anything else apart: the samples do not come from the generator "
                         "argument alone (a draw from torch's global RNG, or another "
                         "source); thread the generator to every random draw")

    def train_eval(self) -> None:
        """Samples do not depend on train()/eval(), and eval() does not switch them off."""
        self.model.eval()
        in_eval = self.draw(self.model.sample_logits, 3, S_VARY)
        self.same_generator_same_samples(in_eval, 3, S_VARY, "in eval()")
        self.model.train()
        in_train = self.draw(self.model.sample_logits, 3, S_VARY)
        if not equal(in_eval, in_train):
            seen = (f"max |diff| {max_diff(in_train, in_eval)}" if in_eval.shape ==
                    in_train.shape else f"shapes {tuple(in_train.shape)} and "
                    f"{tuple(in_eval.shape)}")
            raise Broken(f"the same generator gives different samples in train() and eval() "
                         f"({seen}): sampling must not read self.training (e.g. nn.Dropout "
                         "or F.dropout(training=...))")
        if self.spec.stochastic and equal(in_eval, in_eval[:1].expand_as(in_eval)):
            raise Broken(f"in eval() all {S_VARY} samples of one call are identical: eval() "
                         "switches sampling off")

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

    def devices(self) -> str | None:
        """Samples land on the input's device; on a GPU run, a CPU copy samples too."""
        out = self.draw(self.model.sample_logits, 0)
        if out.device != self.x.device:
            raise Broken(f"inputs on {self.x.device} gave logits on {out.device}")
        if self.device.type == "cpu":
            return None
        on_cpu = copy.deepcopy(self.model).to("cpu")
        with torch.no_grad():
            out = on_cpu.sample_logits(self.x.cpu(), self.S, generator=torch.Generator())
        if tuple(out.shape) != (self.S, self.x.shape[0], self.C) or out.device.type != "cpu":
            raise Broken(f"a CPU copy gave {tuple(out.shape)} logits on {out.device}")
        return None

    def cache_round_trip(self) -> None:
        """Save → load into a fresh build (another init seed) gives equal samples."""
        fresh = build(self.spec, self.config, self.input_shape, self.C, 1).to(self.device)
        fresh.eval()
        with tempfile.TemporaryDirectory(prefix="robustbnn-check-") as tmp:
            cache.save(Path(tmp), "model", "roundtrip", self.model, {})
            if cache.load(Path(tmp), "model", "roundtrip", fresh) is None:
                raise Broken("the entry just saved did not load")
        a, b = self.draw(self.model.sample_logits, 7), self.draw(fresh.sample_logits, 7)
        self.same_generator_same_samples(a, 7, self.S, "of the saved model")
        if not equal(a, b):
            raise Broken("a fresh build loaded from the cache samples differently (max |diff| "
                         f"{max_diff(a, b)}): keep everything sampling reads (including what "
                         "on_epoch_end/after_fit compute) in parameters or buffers")

    def attack_logits(self) -> str | None:
        """``attack_logits``, when the model has one, obeys the sampling clauses."""
        sample = getattr(self.model, "attack_logits", None)
        if sample is None:
            return "no attack_logits (attacks use sample_logits)"
        broken = []
        for clause in ("shape", "dtype_finite", "logits", "input_gradient", "reproducible",
                       "variation", "global_rng", "state_unchanged"):
            try:
                getattr(self, clause)(sample)
            except Exception as err:  # noqa: BLE001
                broken.append(f"{clause}: {what(err)}")
        if broken:
            raise Broken("; ".join(broken))
        return None

    def loss(self) -> None:
        """``loss`` in train() mode is a finite scalar with gradients to the parameters."""
        self.model.train()  # what it changes (e.g. BatchNorm statistics) check_module undoes
        value = self.model.loss(self.x, self.y, n_train=100, generator=self.gen(8),
                                batch=(0, 1))
        if not isinstance(value, Tensor) or value.dim() != 0 or not value.is_floating_point():
            got = (f"{value.dtype} of shape {tuple(value.shape)}" if isinstance(value, Tensor)
                   else type(value).__name__)
            raise Broken(f"loss returned {got}, not a floating scalar")
        if not torch.isfinite(value):
            raise Broken(f"loss is {value.item()}")
        params = [p for p in self.model.parameters() if p.requires_grad]
        if not value.requires_grad or not params:
            raise Broken("the loss has no gradient to the parameters")
        grads = [g for g in torch.autograd.grad(value, params, allow_unused=True)
                 if g is not None]
        if not any(g.abs().sum() > 0 for g in grads):
            raise Broken("the loss's gradient is zero for every parameter")
        if not all(torch.isfinite(g).all() for g in grads):
            raise Broken("the loss's gradient has NaN or inf entries")


def build(spec: ModelSpec, cfg: Any, input_shape: tuple[int, ...], num_classes: int,
          seed: int) -> nn.Module:
    """Build on CPU from a seeded CPU generator, as the bench does."""
    return spec.build(cfg, input_shape, num_classes, torch.Generator().manual_seed(seed))


def what(err: Exception) -> str:
    """What a clause saw: the violation, or the exception the model's code raised."""
    if isinstance(err, Broken):
        return str(err)
    return f"raised {type(err).__name__}: {err}".replace("\n", " ")


def equal(a: Tensor, b: Tensor) -> bool:
    """Same shape and bitwise equal values (NaNs in the same places count as equal)."""
    return a.shape == b.shape and torch.equal(bits(a), bits(b))


def bits(t: Tensor) -> Tensor:
    """The raw bytes of ``t``, so NaN == NaN and -0.0 != 0.0."""
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def max_diff(a: Tensor, b: Tensor) -> str:
    """The largest |a - b| for a message, or that the shapes differ."""
    if a.shape != b.shape:
        return "n/a: shapes differ"
    return f"{(a.double() - b.double()).abs().max().item():.3g}"


def first_difference(before: dict[str, Tensor], after: dict[str, Tensor]) -> str | None:
    """The first state entry that was added, removed or changed bitwise, else None."""
    added_or_removed = sorted(before.keys() ^ after.keys())
    if added_or_removed:
        return added_or_removed[0]
    for key, value in before.items():
        other = after[key]
        if value.dtype != other.dtype or not equal(value, other):
            return key
    return None


# The global RNG seeds of clause global_rng's two calls: distinct, and unlike the seeds a
# model would hard-code.
GLOBAL_SEEDS = (918_273_645, 192_837_465)


def set_global_rngs(seed: int, device: torch.device) -> None:
    """Put every global RNG of :func:`global_rngs` in a fresh state from ``seed``.

    Only the run device's CUDA RNG, the one the checks fork (``torch.manual_seed`` would seed
    every GPU's).
    """
    torch.set_rng_state(torch.Generator().manual_seed(seed).get_state())
    random.seed(seed)
    np.random.seed(seed)
    if device.type == "cuda":
        torch.cuda.set_rng_state(torch.Generator(device).manual_seed(seed).get_state(), device)


def global_rngs(device: torch.device) -> dict[str, Any]:
    """The global RNG states a model must not touch."""
    states = {"torch's global CPU RNG": torch.get_rng_state(),
              "Python's random module": random.getstate(),
              "NumPy's global RNG": np.random.get_state()}
    if device.type == "cuda":
        states["torch's global CUDA RNG"] = torch.cuda.get_rng_state(device)
    return states


def same_state(a: Any, b: Any) -> bool:
    """Equality of RNG states made of tensors, arrays, tuples and scalars."""
    if isinstance(a, Tensor):
        return torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_state(u, v) for u, v in zip(a, b, strict=True))
    return a == b
