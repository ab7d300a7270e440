"""Fashion-MNIST test images as an OOD set for MNIST models.

Reads ``t10k-images-idx3-ubyte.gz`` from ``<root>/fashion_mnist/`` or torchvision's
``<root>/FashionMNIST/raw/`` (checked against torchvision's md5), or downloads it
from torchvision's mirror when ``download=True``. Loaded by the shared
:class:`~robustbnn.data._tv_idx.TorchvisionIdxSet`.

References:
    Xiao, Rasul & Vollgraf, "Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine
    Learning Algorithms", 2017, https://arxiv.org/abs/1708.07747
"""

from __future__ import annotations

from robustbnn.data._tv_idx import IMAGES, TorchvisionIdxSet

FASHION_MNIST = TorchvisionIdxSet(
    title="Fashion-MNIST",
    folder="fashion_mnist",
    tv_class="FashionMNIST",
    digests={IMAGES: "bef4ecab320f06d8554ea6380940ec79"},  # torchvision FashionMNIST.resources
    mirrors=("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),  # its .mirrors
)
