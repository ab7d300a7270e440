"""``resize_ood``: block means when the dataset's sides divide the OOD set's, else a refusal."""

from __future__ import annotations

import pytest
import torch

from robustbnn.data.resize import resize_ood
from robustbnn.errors import ConfigError


def test_block_means_by_hand():
    x = torch.arange(2 * 1 * 4 * 6, dtype=torch.float32).reshape(2, 1, 4, 6)
    out = resize_ood(x, (2, 3), name="uniform")
    assert out.shape == (2, 1, 2, 3)
    # block (i, j) of image n: rows 2i, 2i+1 and columns 2j, 2j+1
    want = torch.stack([torch.stack([torch.stack([x[n, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2].mean()
                                                  for j in range(3)]) for i in range(2)])
                        for n in range(2)]).unsqueeze(1)
    torch.testing.assert_close(out, want, rtol=0, atol=1e-6)


def test_unequal_factors_and_28_to_7():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(3, 1, 28, 28, generator=g)
    out = resize_ood(x, (7, 14), name="gaussian")
    assert out.shape == (3, 1, 7, 14)
    torch.testing.assert_close(out, x.reshape(3, 1, 7, 4, 14, 2).mean(dim=(3, 5)))
    torch.testing.assert_close(resize_ood(x, (7, 7), name="gaussian"),
                               torch.nn.functional.interpolate(x, (7, 7), mode="area"))


def test_equal_shape_is_untouched():
    x = torch.rand(5, 1, 28, 28)
    assert resize_ood(x, (28, 28), name="uniform") is x


@pytest.mark.parametrize("shape", [(10, 10), (56, 56), (7, 10)])
def test_impossible_shape_names_set_shapes_and_way_out(shape):
    with pytest.raises(ConfigError) as info:
        resize_ood(torch.zeros(2, 1, 28, 28), shape, name="not_mnist")
    msg = str(info.value)
    assert "'not_mnist'" in msg and "28x28" in msg and f"{shape[0]}x{shape[1]}" in msg
    assert "drop not_mnist from --ood" in msg and "\n" not in msg
