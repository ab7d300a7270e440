"""Held-out-class OOD: the reduced bundle, the OOD images, and name parsing."""

from __future__ import annotations

import pytest
import torch

from robustbnn.data.heldout import heldout_name, heldout_split, parse_heldout
from robustbnn.data.types import DataBundle, Split
from robustbnn.errors import ConfigError


def _bundle() -> DataBundle:
    y_train = torch.tensor([0, 1, 2, 3, 2, 1, 3, 0, 2])
    x_train = torch.arange(9, dtype=torch.float32)[:, None, None, None].expand(9, 1, 2, 3)
    val = Split(torch.zeros(4, 1, 2, 3), torch.tensor([2, 0, 1, 3]))
    test = Split(torch.ones(5, 1, 2, 3), torch.tensor([3, 2, 2, 1, 0]))
    return DataBundle("toy", Split(x_train, y_train), val, test, 4, "abc", "toy source")


def test_heldout_split_drops_the_class_shifts_labels_and_returns_its_training_images() -> None:
    data = _bundle()
    reduced, x_ood = heldout_split(data, 2)
    assert reduced.num_classes == 3
    assert reduced.train.y.tolist() == [0, 1, 2, 1, 2, 0]  # 3 -> 2; the 2s are gone
    assert reduced.train.x[:, 0, 0, 0].tolist() == [0, 1, 3, 5, 6, 7]
    assert reduced.val.y.tolist() == [0, 1, 2] and reduced.test.y.tolist() == [2, 1, 0]
    assert x_ood.shape == (3, 1, 2, 3) and x_ood[:, 0, 0, 0].tolist() == [2, 4, 8]
    assert reduced.fingerprint != data.fingerprint  # its own cache entries
    assert heldout_split(data, 3)[0].fingerprint not in (reduced.fingerprint, data.fingerprint)
    assert "class 2 held out" in reduced.source


def test_parse_heldout() -> None:
    assert parse_heldout(heldout_name(7)) == 7 and parse_heldout("glyphs") is None
    for bad in ("heldout:", "heldout:x", "heldout:10", "heldout:-1"):
        with pytest.raises(ConfigError, match=r"heldout:<k> with k in 0\.\.9"):
            parse_heldout(bad)
    with pytest.raises(ConfigError, match="held-out class 4 is not a class of toy"):
        heldout_split(_bundle(), 4)
