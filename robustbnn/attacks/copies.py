"""An attack's inputs are its own: every call gets copies, and a call that changes them is refused.

The harness's test points are shared: one process loads them once and every cell it runs reads
them (:func:`robustbnn.run.context.bench_data`). An attack that writes into the ``x`` it is
given (``x.mul_(0)``) would change the numbers of every cell after it, so the harness hands it
copies, as PyTorch's own code clones at a trust boundary, and compares them with the originals
after the call: an attack that changed one is refused by name, since its ``x_adv`` was computed
from inputs that were no longer the test points (and its budget cannot be judged from them).

Example:
    >>> import torch
    >>> x = torch.full((2, 3), 0.5)
    >>> call_on_copies(lambda xb: xb + 0.1, x, attack="noise").sub(x).abs().max().item() < 0.11
    True
    >>> try:
    ...     call_on_copies(lambda xb: xb.mul_(0), x, attack="zeroes")
    ... except AttackContractError as err:
    ...     str(err).split(";")[0]
    "attack 'zeroes' changed its input x in place (max |diff| 0.5)"
    >>> x.unique().tolist()  # the caller's inputs are as they were
    [0.5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from robustbnn.errors import AttackContractError

__all__ = ["INPUT_NAMES", "call_on_copies", "check_unchanged", "in_place_message"]

INPUT_NAMES = ("x", "y")
"""How a message names the tensors an attack is called with, by position."""


def call_on_copies(fn: Callable[..., Any], *tensors: Tensor, attack: str,
                   names: Sequence[str] = INPUT_NAMES, check: str = "") -> Any:
    """``fn`` called on detached copies of ``tensors``, refused if it changed one of them.

    Args:
        fn: The attack call, e.g. ``functools.partial(attack, model, generator=g)``.
        *tensors: Its inputs, e.g. ``x`` (B, *) and ``y`` (B,); they are not handed to ``fn``.
        attack: The attack's name, for the message.
        names: The tensors' names, by position (default ``x``, ``y``; later ones by index).
        check: The command that checks the attack, for the message (none by default).

    Returns:
        What ``fn`` returned.

    Raises:
        AttackContractError: When ``fn`` changed a copy in place, naming the attack, the input
            and the largest change, and the way out.
    """
    copies = tuple(t.detach().clone() for t in tensors)
    out = fn(*copies)
    check_unchanged(tensors, copies, attack=attack, names=names, check=check)
    return out


def check_unchanged(pristine: Sequence[Tensor], given: Sequence[Tensor], *, attack: str,
                    names: Sequence[str] = INPUT_NAMES, check: str = "") -> None:
    """Refuse when a tensor an attack was ``given`` is no longer bitwise its ``pristine`` one.

    Raises:
        AttackContractError: The first changed input, by :func:`in_place_message`.
    """
    for i, (before, after) in enumerate(zip(pristine, given, strict=True)):
        if before.shape != after.shape or not _same(before.detach(), after.detach()):
            name = names[i] if i < len(names) else f"input {i}"
            raise AttackContractError(in_place_message(attack, name, before, after, check))


def _same(a: Tensor, b: Tensor) -> bool:
    """Equal values, NaN equal to NaN (an OOD set with NaN pixels is the set's fault)."""
    if not a.is_floating_point():
        return torch.equal(a, b)
    return bool(torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True))


def in_place_message(attack: str, name: str, before: Tensor, after: Tensor,
                     check: str = "") -> str:
    """``attack 'NAME' changed its input x in place (max |diff| d); ...`` and the way out
    (``check``, the command that checks the attack, when given)."""
    if before.shape == after.shape:
        diff = (after.detach().double() - before.detach().double()).abs().nan_to_num(0.0)
        seen = f"max |diff| {diff.max().item():.3g}"
    else:
        seen = f"shape {tuple(before.shape)} -> {tuple(after.shape)}"
    return (f"attack {attack!r} changed its input {name} in place ({seen}); its x_adv is "
            f"refused, since it was computed from inputs that were no longer the test points "
            f"(the harness kept its own copy): work on a copy (x = x.clone()) or out of place "
            f"(x_adv = x + delta, not x.add_(delta))" + (f", and check it with `{check}`"
                                                          if check else ""))
