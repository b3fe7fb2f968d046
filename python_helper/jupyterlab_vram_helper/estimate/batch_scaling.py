"""Builds the batch of another size from the user's sample batch, leaf by leaf.

The sample batch is a tensor, or a tuple, list or dict of them, nested; its
batch size is the first dimension of its first tensor. Every tensor whose
first dimension is that size stands for the batch and gets the new size;
every other leaf (a mask shared by all samples, a flag, a number) is passed
on as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Collections are looked into this deep; a batch nested deeper is refused.
MAX_DEPTH = 8


class BatchError(ValueError):
    """The sample batch is not a tensor or a collection of tensors."""


def tensor_leaves(batch: Any, tensor_type: type, depth: int = 0) -> list[Any]:
    """The tensors of ``batch``, in order, looking into tuples, lists and dicts."""
    if isinstance(batch, tensor_type):
        return [batch]
    if depth >= MAX_DEPTH:
        return []
    if isinstance(batch, (tuple, list)):
        return [t for item in batch for t in tensor_leaves(item, tensor_type, depth + 1)]
    if isinstance(batch, dict):
        return [t for item in batch.values() for t in tensor_leaves(item, tensor_type, depth + 1)]
    return []


def sample_batch_size(batch: Any, tensor_type: type) -> int:
    """The batch size of the sample: the first dimension of its first tensor."""
    for leaf in tensor_leaves(batch, tensor_type):
        if leaf.dim() >= 1 and leaf.shape[0] >= 1:
            return int(leaf.shape[0])
        raise BatchError(f"the batch's first tensor has shape {tuple(leaf.shape)}: it has no batch dimension")
    raise BatchError(f"the batch is a {type(batch).__name__} with no tensor in it")


def map_leaves(batch: Any, tensor_type: type, change: Callable[[Any], Any], depth: int = 0) -> Any:
    """``batch`` with each tensor replaced by ``change(tensor)``, its containers rebuilt alike."""
    if isinstance(batch, tensor_type):
        return change(batch)
    if depth >= MAX_DEPTH:
        return batch
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(map_leaves(item, tensor_type, change, depth + 1) for item in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(map_leaves(item, tensor_type, change, depth + 1) for item in batch)
    if isinstance(batch, dict):
        return {key: map_leaves(item, tensor_type, change, depth + 1) for key, item in batch.items()}
    return batch


def fake_batch(torch: Any, batch: Any, sample_size: int, size: int, device: str) -> Any:
    """An empty batch of ``size`` on ``device`` shaped like ``batch``; call it inside the fake mode."""

    def empty_like(leaf: Any) -> Any:
        shape = list(leaf.shape)
        if shape and shape[0] == sample_size:
            shape[0] = size
        fake = torch.empty(shape, dtype=leaf.dtype, device=device)
        return fake.requires_grad_(True) if leaf.requires_grad else fake

    return map_leaves(batch, torch.Tensor, empty_like)


def sliced_batch(torch: Any, batch: Any, sample_size: int, size: int) -> Any:
    """The first ``size`` samples of the real ``batch`` (views, no copy), for the real-step fallback."""

    def first(leaf: Any) -> Any:
        return leaf[:size] if leaf.dim() >= 1 and leaf.shape[0] == sample_size else leaf

    return map_leaves(batch, torch.Tensor, first)
