"""Flat-parameter functional models for the torch backend.

A :class:`FlatModel` wraps a ``torch.nn.Module`` used only as a *template*: its parameters are never trained
in place. A model point is one flat vector theta of length ``n_params`` (the layout of
``module.named_parameters()``, concatenated in order), and

    model.apply(theta, x) = functional_call(module, unflatten(theta), (x,))

is a pure function of (theta, x). Because ``unflatten`` is a ``split`` followed by ``view``s, ``apply`` works
inside ``torch.func.vmap`` with theta batched over clients, which is how :class:`fedtheory.torch.TorchProblem`
evaluates every client's loss and gradient in one call.

Models (inputs are flat feature rows; the CNN reshapes its 64 features to a 1x8x8 image itself):

* :func:`logistic_regression` -- multinomial logistic regression (``n_classes`` logits), or the binary model
  z = a^T x (one output, no bias by default) that matches :mod:`fedtheory.problems.logistic` exactly.
* :func:`mlp` -- fully connected network; ``hidden=64`` is the 2-layer MLP (one hidden layer),
  ``hidden=(200, 100)`` the FedDyn / FedElasticNet MNIST network.
* :func:`cnn_digits` -- a small CNN for scikit-learn's 8x8 digits: conv3x3(c1)-act-maxpool2-conv3x3(c2)-act-
  maxpool2-linear (c1 = 8, c2 = 16 by default: 1 562 parameters).
"""
from __future__ import annotations

import copy
import math
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ..validation import check_int, check_seed

__all__ = ["FlatModel", "logistic_regression", "mlp", "cnn_digits", "ACTIVATIONS"]

#: Activation functions by name; "tanh" and "softplus" are smooth (finite-difference tests use them).
ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh, "softplus": nn.Softplus}


class FlatModel:
    """A module template plus the flat-parameter layout (see the module docstring).

    Parameters
    ----------
    module:
        The template ``nn.Module`` (its own parameters are only used by :meth:`init_params`'s layout).
    in_features:
        Length of one input row.
    n_outputs:
        Number of outputs per row (1 for the binary logistic model, C for C-class models).
    name:
        A short description (used in reprs, claim instance labels and the docs).
    """

    def __init__(self, module: nn.Module, in_features: int, n_outputs: int, name: str) -> None:
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        self.module = module
        self.in_features = check_int("in_features", in_features, low=1)
        self.n_outputs = check_int("n_outputs", n_outputs, low=1)
        self.name = name
        params = list(module.named_parameters())
        if not params:
            raise ValueError("module must have at least one parameter")
        self.names = [k for k, _ in params]
        self.shapes = [tuple(p.shape) for _, p in params]
        self.sizes = [int(math.prod(s)) for s in self.shapes]
        self.n_params = int(sum(self.sizes))
        # buffers (e.g. batch-norm statistics) would make apply() stateful: not supported
        if any(True for _ in module.buffers()):
            raise ValueError("modules with buffers (e.g. BatchNorm) are not supported: apply() must be pure")

    def __repr__(self) -> str:
        return f"FlatModel({self.name}, n_params={self.n_params})"

    def unflatten(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        """{parameter name: view of theta} (works on a vmapped theta)."""
        pieces = torch.split(theta, self.sizes)
        return {k: p.view(s) for k, p, s in zip(self.names, pieces, self.shapes)}

    def apply(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Outputs of the model at the flat parameters theta for input rows x (shape (m, in_features))."""
        return torch.func.functional_call(self.module, self.unflatten(theta), (x,))

    def init_params(self, seed: int = 0) -> np.ndarray:
        """A flat float64 parameter vector drawn with torch's default layer initialisation under ``seed``.

        The global torch generator is forked, so this neither reads nor changes the caller's torch RNG state;
        the same seed gives the same vector bitwise.
        """
        seed = check_seed("seed", seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            fresh = _rebuild(self.module)
            flat = torch.cat([p.detach().reshape(-1).to(torch.float64) for p in fresh.parameters()])
        return flat.cpu().numpy().copy()


def _rebuild(module: nn.Module) -> nn.Module:
    """A copy of the module with every layer re-initialised (reset_parameters) from the current torch RNG."""
    fresh = copy.deepcopy(module)
    for layer in fresh.modules():
        reset = getattr(layer, "reset_parameters", None)
        if callable(reset):
            reset()
    return fresh


class _Reshape(nn.Module):
    def __init__(self, shape: Sequence[int]) -> None:
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[:-1] + self.shape)


class _Squeeze(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.squeeze(-1)


def _activation(name: str) -> nn.Module:
    if name not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {tuple(ACTIVATIONS)}, got {name!r}")
    return ACTIVATIONS[name]()


def logistic_regression(in_features: int, n_classes: int = 10, *, bias: bool | None = None) -> FlatModel:
    """Multinomial logistic regression x -> W x + b with ``n_classes`` logits.

    ``n_classes=2`` gives the *binary* model z = a^T x with one output (use ``loss="logistic"`` and labels in
    {-1, +1}); it has no bias by default so that it is exactly :class:`fedtheory.problems.logistic.LogisticProblem`'s
    objective. Multinomial models have a bias by default.
    """
    d = check_int("in_features", in_features, low=1)
    C = check_int("n_classes", n_classes, low=2)
    if C == 2:
        layer = nn.Linear(d, 1, bias=bool(bias) if bias is not None else False)
        return FlatModel(nn.Sequential(layer, _Squeeze()), d, 1, f"binary logistic regression d={d}")
    layer = nn.Linear(d, C, bias=True if bias is None else bool(bias))
    return FlatModel(nn.Sequential(layer), d, C, f"multinomial logistic regression {d}->{C}")


def mlp(in_features: int, n_classes: int = 10, hidden: int | Sequence[int] = 64, *,
        activation: str = "relu") -> FlatModel:
    """Fully connected network in -> hidden... -> n_classes logits (``hidden=64``: the 2-layer MLP)."""
    d = check_int("in_features", in_features, low=1)
    C = check_int("n_classes", n_classes, low=2)
    widths = [hidden] if np.ndim(hidden) == 0 else list(hidden)
    if not widths:
        raise ValueError("hidden must list at least one width (use logistic_regression for no hidden layer)")
    widths = [check_int("hidden", h, low=1) for h in widths]
    layers: list[nn.Module] = []
    prev = d
    for h in widths:
        layers += [nn.Linear(prev, h), _activation(activation)]
        prev = h
    layers.append(nn.Linear(prev, C))
    return FlatModel(nn.Sequential(*layers), d, C, f"MLP {d}-{'-'.join(map(str, widths))}-{C} ({activation})")


def cnn_digits(n_classes: int = 10, channels: tuple[int, int] = (8, 16), *, activation: str = "relu") -> FlatModel:
    """Small CNN for 8x8 single-channel images given as 64 flat features (scikit-learn's digits)."""
    C = check_int("n_classes", n_classes, low=2)
    if len(channels) != 2:
        raise ValueError(f"channels must be two positive ints (c1, c2), got {channels!r}")
    c1, c2 = (check_int("channels", c, low=1) for c in channels)
    module = nn.Sequential(
        _Reshape((1, 8, 8)),
        nn.Conv2d(1, c1, 3, padding=1), _activation(activation), nn.MaxPool2d(2),   # 8x8 -> 4x4
        nn.Conv2d(c1, c2, 3, padding=1), _activation(activation), nn.MaxPool2d(2),  # 4x4 -> 2x2
        nn.Flatten(start_dim=-3), nn.Linear(4 * c2, C))
    return FlatModel(module, 64, C, f"CNN 8x8 conv{c1}-conv{c2}-{C} ({activation})")
