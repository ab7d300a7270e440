"""The clauses of the model contract, one method each (the kit is :mod:`robustbnn.testing`).

:class:`Clauses` adds to the clauses every sampler keeps
(:class:`~robustbnn.testing.sampler_clauses.SamplerClauses`) those of the model as a whole:
``train_eval``, ``devices``, ``cache_round_trip``, ``attack_logits`` and ``loss``.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from robustbnn.models import ModelSpec
from robustbnn.testing.bitwise import equal, max_diff
from robustbnn.testing.sampler_clauses import S_VARY, Broken, SamplerClauses
from robustbnn.training import cache

__all__ = ["Clauses", "build", "what"]


class Clauses(SamplerClauses):
    """One model under check, with one method per clause (:data:`~robustbnn.testing.CLAUSES`).

    A clause raises :class:`~robustbnn.testing.sampler_clauses.Broken` when it is violated, and
    returns why it does not apply, or None when it holds.
    """

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
        for clause in ("shape", "input_unchanged", "dtype_finite", "logits", "input_gradient",
                       "reproducible", "variation", "global_rng", "state_unchanged"):
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
