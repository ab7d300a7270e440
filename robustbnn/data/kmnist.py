"""Kuzushiji-MNIST (KMNIST) test images as an OOD set for MNIST models.

Reads ``t10k-images-idx3-ubyte.gz`` from ``<root>/kmnist/`` or torchvision's
``<root>/KMNIST/raw/`` (checked against torchvision's md5), or downloads it
from torchvision's mirror when ``download=True``. Loaded by the shared
:class:`~robustbnn.data._tv_idx.TorchvisionIdxSet`.

References:
    Clanuwat et al., "Deep Learning for Classical Japanese Literature", 2018,
    https://arxiv.org/abs/1812.01718
"""

from __future__ import annotations

from robustbnn.data._tv_idx import IMAGES, TorchvisionIdxSet

KMNIST = TorchvisionIdxSet(
    title="KMNIST",
    folder="kmnist",
    tv_class="KMNIST",
    digests={IMAGES: "5c965bf0a639b31b8f53240b1b52f4d7"},  # torchvision KMNIST.resources
    mirrors=("http://codh.rois.ac.jp/kmnist/dataset/kmnist/",),  # its .mirrors
)
