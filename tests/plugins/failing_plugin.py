"""A plug-in model whose training always raises (the grid's failing-cell test)."""

import dataclasses

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, ModelSpec
from tests.plugins._linear import ZeroLinear


@dataclasses.dataclass(frozen=True)
class FailingConfig(TrainConfig):
    pass


class Failing(ZeroLinear):
    """A linear classifier whose loss raises, as a buggy plug-in would."""

    def loss(self, x, y, *, n_train, generator=None, batch=(0, 1)):
        raise RuntimeError("plug-in bug: loss not implemented")


MODELS.register("failing_model", ModelSpec(Failing, FailingConfig, "always fails", "test"))
