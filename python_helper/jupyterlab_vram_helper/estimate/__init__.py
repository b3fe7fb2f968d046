"""Predicts a training step's peak GPU memory and the largest batch size that fits, before running it.

This is the kernel side of "Will it fit?" (docs/protocol.md, ``estimate_memory``).
It never imports PyTorch itself: it uses the ``torch`` the user imported, and
refuses where there is none. The runtime loads it at the first request.
:func:`estimate_training_step` is its plain in-process entry point, which
benchmarks and the GPU kit call directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .estimate_run import run_estimate

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import EstimateMemoryResult


def estimate_training_step(
    model: Any,
    batch: Any,
    optimizer: Any = None,
    loss: Any = None,
    *,
    batch_sizes: list[int] | None = None,
    margin: float = 0.1,
    device: int | None = None,
    real_step: bool = False,
    names: dict[str, str | None] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> EstimateMemoryResult:
    """Predict the peak memory of a training and an evaluation step of ``model`` on ``batch`` (a result dict)."""
    return run_estimate(
        model,
        batch,
        optimizer,
        loss,
        batch_sizes=batch_sizes,
        margin=margin,
        device=device,
        real_step=real_step,
        names=names,
        progress=progress,
    )


__all__ = ["estimate_training_step"]
