"""Predicts a training step's peak GPU memory and the largest batch size that fits, before running it.

This is the kernel side of "Will it fit?" (docs/protocol.md, ``estimate_memory``).
It never imports PyTorch itself: it uses the ``torch`` the user imported, and
refuses where there is none. The runtime loads it at the first request
(estimate_request.py); training_step.py is its plain in-process entry point,
which benchmarks and the GPU kit call directly.
"""
