"""Reads the memory figures that the sampler thread sends every interval.

The sidebar's live figures come from here: the sampler thread
(sampler.py) reads every source into a sample (sample.py), numbered by the
GPUs the kernel sees (devices.py), and keeps the recent ones for a frontend
that attaches later (sample_timeline.py). Each source has a reader in
readers/. safe_reads.py and torch_reads.py read the user's objects and
tensors without running the user's code; they sit here, at the bottom of
the package, because the cleanup and the notebook names requests read
objects the same way. Nothing here imports torch or TensorFlow, and nothing
is imported by this file: the bootstrap pays for a module only when
something uses it.
"""
