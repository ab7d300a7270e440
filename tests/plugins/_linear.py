"""The linear classifier the failing test plug-ins share (their failure is all they add)."""

import torch

from robustbnn.models import BayesianModule


class ZeroLinear(BayesianModule):
    """Logits x W, W starting at zero; every sample is the same."""

    def __init__(self, cfg, input_shape, num_classes, generator):
        super().__init__()
        self.num_classes = num_classes
        self.w = torch.nn.Parameter(torch.zeros(torch.Size(input_shape).numel(), num_classes))

    def sample_logits(self, x, n_samples, *, generator=None):
        return (x.flatten(1) @ self.w).expand(n_samples, -1, -1)
