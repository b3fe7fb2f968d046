"""The plain in-process entry point of the estimate, for benchmarks and the GPU kit.

It takes the objects themselves rather than names in a notebook, and
returns the same result as the ``estimate_memory`` request. Without the
sampler's ``gpus`` the card's figures come from PyTorch alone, once CUDA is
initialised, or from ``card_bytes``, a planned card.
"""

from __future__ import annotations

from .estimate_run import run_estimate

#: Predict the peak memory of a training and an evaluation step of a model on
#: a sample batch (see :func:`estimate_run.run_estimate`, which it is).
estimate_training_step = run_estimate

__all__ = ["estimate_training_step"]
