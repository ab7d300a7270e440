"""Randomness for libraries that draw from torch's global generator.

The model contract asks every ``sample_logits`` to take its randomness from the ``generator``
it is given. Many libraries (bayesian-torch, Pyro, most layers written before
``torch.Generator`` was common) call ``torch.randn`` without one, so they draw from the global
RNG: a run then depends on what ran before it, and a cached rerun differs from the trained run.
:func:`seeded_global` makes such a call a pure function of the generator::

    def sample_logits(self, x, n_samples, *, generator=None):
        with seeded_global(generator):
            return torch.stack([self.net(x)[0] for _ in range(n_samples)])

It forks the global RNG (CPU and the devices in use), seeds it from one draw of ``generator``,
and restores the caller's global state on exit: the same generator state gives the same
samples, the caller's own random stream is untouched, and the generator advances, so two calls
in a row give different samples.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["seeded_global"]


@contextlib.contextmanager
def seeded_global(generator: torch.Generator | None) -> Iterator[None]:
    """Run the body with torch's global RNG seeded from ``generator``, then restore it.

    Args:
        generator: The call's generator. ``None`` leaves the global RNG as it is (the
            contract's behaviour for a call without a generator).

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> with seeded_global(g):
        ...     a = torch.randn(2)
        >>> with seeded_global(torch.Generator().manual_seed(0)):
        ...     b = torch.randn(2)
        >>> torch.equal(a, b)
        True
    """
    if generator is None:
        yield
        return
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
    devices = []
    if generator.device.type == "cuda":
        devices = [generator.device.index or 0]
    elif torch.cuda.is_available() and torch.cuda.is_initialized():
        devices = list(range(torch.cuda.device_count()))
    with torch.random.fork_rng(devices=devices):
        # Not torch.manual_seed: on a machine whose CUDA is not yet initialised it queues a
        # seed for later, which would change the CUDA stream after the fork is gone.
        torch.default_generator.manual_seed(seed)
        for index in devices:
            torch.cuda.default_generators[index].manual_seed(seed)
        yield
