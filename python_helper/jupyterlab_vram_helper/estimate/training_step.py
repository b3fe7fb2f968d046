"""The plain in-process entry point of the estimate, for benchmarks and the GPU kit.

It takes the objects themselves rather than names in a notebook, and
returns the same result as the ``estimate_memory`` request, without a
sampler: the card's figures come from PyTorch alone, once CUDA is initialised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .estimate_run import Progress, run_estimate

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
    progress: Progress | None = None,
    card_bytes: int | None = None,
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
        card_bytes=card_bytes,
    )
