"""FlatLayout: one flat weight vector per sample, split back and run through the net."""

from __future__ import annotations

import torch

from robustbnn.models._flat_params import FlatLayout
from tests._helpers import seeded


class _Wrapper(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(),
                                       torch.nn.Linear(4, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def test_layout_names_shapes_and_sizes_follow_named_parameters() -> None:
    layout = FlatLayout.of(_Wrapper().net)
    assert layout.names == ("net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias")
    assert layout.shapes == ((4, 5), (4,), (3, 4), (3,))
    assert layout.numels == (20, 4, 12, 3) and layout.size == 39


def test_unflatten_round_trips_and_logits_equal_a_loop_over_samples() -> None:
    module = _Wrapper()
    layout = FlatLayout.of(module.net)
    flat = torch.randn(6, layout.size, generator=seeded(0))  # S = 6
    x = torch.randn(7, 5, generator=seeded(1))  # B = 7
    parts = layout.unflatten(flat[2])
    assert torch.equal(torch.cat([t.flatten() for t in parts.values()]), flat[2])
    out = layout.logits(module, x, flat)
    assert out.shape == (6, 7, 3)
    for s in range(6):
        w = layout.unflatten(flat[s])
        h = torch.tanh(x @ w["net.0.weight"].T + w["net.0.bias"])
        torch.testing.assert_close(out[s], h @ w["net.2.weight"].T + w["net.2.bias"])
