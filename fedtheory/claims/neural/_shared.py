"""Torch availability, the claim decorator of the neural package and torch's thread setting (private to this
package)."""
from __future__ import annotations

import importlib.util
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ..registry import claim

__all__ = ["TORCH_AVAILABLE", "neural_claim", "torch_threads"]


def torch_available() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a broken or deliberately blocked torch counts as absent
        return False


#: Whether the optional torch extra is importable (checked without importing it).
TORCH_AVAILABLE = torch_available()

def neural_claim(**kwargs: Any) -> Callable:
    """Register with paper="neural" when torch is installed; otherwise leave the function unregistered."""
    if TORCH_AVAILABLE:
        # they train networks for seconds each: declared slow, so that ``fedtheory verify --jobs`` starts them first
        return claim(paper="neural", **{"cost": "slow", **kwargs})
    return lambda fn: fn


@contextmanager
def torch_threads(n: int = 1) -> Iterator[None]:
    """Run torch with ``n`` intra-op threads, restoring the previous setting afterwards."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)

