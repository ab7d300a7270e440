"""The plain PyTorch networks that users would otherwise write, for the baselines."""

from __future__ import annotations

from torch import nn


def standard_dropout_mlp(model: nn.Module) -> nn.Sequential:
    """A dropout-family registry MLP as the ``nn.Dropout`` MLP users would write (same weights).

    Dropout on the input (BB-α's ``input_p``) and after every hidden layer; kept on by
    ``train()`` mode, a fresh mask per example, as torch-uncertainty's MC-dropout wrapper and
    torchattacks' ``set_model_training_mode(dropout_training=True)`` run it.
    """
    layers: list[nn.Module] = [nn.Flatten()]
    if model.head_p > 0:
        layers.append(nn.Dropout(model.head_p))
    for i, linear in enumerate(model.layers):
        layers.append(linear)
        if i < len(model.layers) - 1:
            layers += [nn.ReLU(), nn.Dropout(model.p)]
    return nn.Sequential(*layers)
