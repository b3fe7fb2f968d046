"""Readers of memory figures, one per source.

Each reader is cheap to construct, does nothing at import time, never imports
torch or TensorFlow (it looks them up in ``sys.modules``), and turns every
failure into ``None`` figures: "unknown" is a valid answer, a crash is not.
"""
