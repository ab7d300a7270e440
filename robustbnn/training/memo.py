"""The trained-model memo: each process keeps its last few trained models, checked, in eval mode.

Consecutive cells of one model (clean, attacks, OOD) then share one load from the cache. The
harness fixes the mode once here; samples never depend on it (../shared/STYLE.md).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from torch import nn

from robustbnn.contract.checked import Checked

__all__ = ["TrainedModels"]


class TrainedModels:
    """The last ``keep`` trained models of a process, each wrapped in :class:`Checked`.

    Args:
        keep: How many models to keep (the least recently used goes first).
    """

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._models: OrderedDict[Hashable, Checked] = OrderedDict()

    def get(self, key: Hashable, name: str, load: Callable[[], nn.Module]) -> Checked:
        """The model remembered under ``key``, or ``load()``'s, checked and remembered."""
        if key in self._models:
            self._models.move_to_end(key)
            return self._models[key]
        return self.remember(key, name, load())

    def remember(self, key: Hashable, name: str, model: nn.Module) -> Checked:
        """Keep ``model`` (named ``name``) under ``key``, in eval mode and contract-checked."""
        model.eval()  # the harness fixes the mode once; samples do not depend on it
        self._models[key] = Checked(model, name)
        self._models.move_to_end(key)
        while len(self._models) > self.keep:
            self._models.popitem(last=False)
        return self._models[key]

    def clear(self) -> None:
        """Forget every model (tests; a worker that must reload)."""
        self._models.clear()
