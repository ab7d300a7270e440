from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from robustbnn.data import Split
from robustbnn.data.bundle import fingerprint, make_bundle


def _splits(seed=0):
    rng = np.random.default_rng(seed)
    return {name: (rng.integers(0, 256, (n, 28, 28), dtype=np.uint8),
                   rng.integers(0, 10, n).astype(np.uint8))
            for name, n in [("train", 7), ("val", 3), ("test", 5)]}


def test_make_bundle():
    splits = _splits()
    b = make_bundle("toy", splits, num_classes=10, source="test")
    assert (len(b.train), len(b.val), len(b.test)) == (7, 3, 5)
    assert b.train.x.shape == (7, 1, 28, 28) and b.train.x.dtype == torch.float32
    assert b.train.y.dtype == torch.int64
    assert torch.equal(b.val.x[:, 0], torch.from_numpy(splits["val"][0]).float() / 255)
    assert 0.0 <= b.test.x.min() and b.test.x.max() <= 1.0
    assert b.fingerprint == fingerprint(splits) and len(b.fingerprint) == 64


def test_fingerprint_sees_data_and_split_boundaries():
    splits = _splits()
    assert fingerprint(splits) == fingerprint(_splits())
    assert fingerprint(splits) != fingerprint(_splits(seed=1))
    (xt, yt), (xv, yv) = splits["train"], splits["val"]
    moved = dict(splits, train=(xt[:-1], yt[:-1]),
                 val=(np.concatenate([xt[-1:], xv]), np.concatenate([yt[-1:], yv])))
    assert fingerprint(moved) != fingerprint(splits)
    relabeled = dict(splits, test=(splits["test"][0], (splits["test"][1] + 1) % 10))
    assert fingerprint(relabeled) != fingerprint(splits)


def test_split_validates():
    x, y = torch.zeros(3, 1, 28, 28), torch.zeros(3, dtype=torch.int64)
    assert len(Split(x, y)) == 3
    with pytest.raises(ValueError, match="float32"):
        Split(x.double(), y)
    with pytest.raises(ValueError, match=r"\(N, 1, H, W\)"):
        Split(x[:, 0], y)
    with pytest.raises(ValueError, match="int64"):
        Split(x, y.int())
    with pytest.raises(ValueError, match="3 images but 2 labels"):
        Split(x, y[:2])
    with pytest.raises(dataclasses.FrozenInstanceError):
        Split(x, y).x = x  # type: ignore[misc]
