"""The function that a cluster action runs in each worker, built so that it travels by value.

The helper's modules are not importable on the workers, so a function defined here would be
pickled by reference to this module and fail to load there. Its source is therefore compiled in
a fresh namespace whose ``__name__`` is ``"__main__"``: cloudpickle, which Dask uses, pickles
such a function with its code. It imports nothing but the standard library, never imports torch
and never initialises CUDA: torch is read only where the worker already imported it, and its
allocator only where CUDA is already initialised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WORKER_SOURCE = '''
def jupyterlab_vram_worker_action(action):
    """Run one action (gc, empty_cache, read_allocators) here, with the memory before and after."""
    import gc
    import os
    import sys
    import time

    def rss():
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            pass
        return None

    def allocator():
        torch = sys.modules.get("torch")
        if torch is None:
            return {"read_at": time.time(), "torch": False, "cuda_initialized": False, "devices": []}
        cuda = getattr(torch, "cuda", None)
        try:
            initialized = bool(cuda.is_initialized())
        except Exception:
            initialized = False
        devices = []
        if initialized:
            for index in range(cuda.device_count()):
                devices.append({
                    "device": index,
                    "allocated_bytes": int(cuda.memory_allocated(index)),
                    "reserved_bytes": int(cuda.memory_reserved(index)),
                    "peak_bytes": int(cuda.max_memory_allocated(index)),
                })
        return {"read_at": time.time(), "torch": True, "cuda_initialized": initialized, "devices": devices}

    def reserved(reading):
        if not reading["cuda_initialized"]:
            return None
        return sum(device["reserved_bytes"] for device in reading["devices"])

    host_before, before = rss(), allocator()
    if action == "gc":
        gc.collect()
    elif action == "empty_cache" and before["cuda_initialized"]:
        sys.modules["torch"].cuda.empty_cache()
    host_after, after = rss(), allocator()
    return {
        "pid": os.getpid(),
        "host_before_bytes": host_before,
        "host_after_bytes": host_after,
        "torch": after["torch"],
        "gpu_reserved_before_bytes": reserved(before),
        "gpu_reserved_after_bytes": reserved(after),
        "allocator": after,
    }
'''

_built: Callable[..., Any] | None = None


def worker_action() -> Callable[[str], dict[str, Any]]:
    """The worker-side function, compiled once in a namespace of its own (so pickled by value)."""
    global _built
    if _built is None:
        namespace: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(WORKER_SOURCE, "<jupyterlab-vram worker action>", "exec"), namespace)
        _built = namespace["jupyterlab_vram_worker_action"]
    return _built
