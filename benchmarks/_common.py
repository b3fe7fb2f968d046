"""What the benchmarks share: the ``--device`` and ``--json`` options, the CUDA
probe, the cell that puts a kernel's CUDA into use, a process's CPU time per
thread, and the JSON they write (scripts/gpu-check.sh collects it into the GPU
report)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# Exit status of a benchmark asked for CUDA on a machine without it (the GPU kit reads it as a skip).
NO_CUDA = 3

# Run in every measured kernel in cuda mode, the baseline's too: torch imported,
# a CUDA context, and a live allocation, so the helper's NVML and allocator
# reads have real state behind them.
CUDA_IN_USE = (
    "import torch\n"
    "_bench_cuda_state = torch.empty(64 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
    "torch.cuda.synchronize()\n"
)


# Run in every measured kernel with --device standin-cuda: ``torch`` becomes a
# stand-in whose CUDA is initialised on two devices, with torch's Python
# wrappers the helper calls (is_initialized, device_count) written as torch
# writes them and its C bindings (_cuda_memoryStats, _cuda_resetPeakMemoryStats)
# replaced by C-level dict lookups that return a stats dict of torch's shape.
# It measures the helper's own Python on the CUDA path (lookups, checks,
# calls around torch's) on a machine without a GPU; torch's own cost is not
# in it (its stats call: 12 us with warm caches on an H100 machine, more cold).
STANDIN_CUDA = r"""
def _standin_cuda():
    import functools, sys, types
    counters = lambda: {"current": 1 << 26, "peak": 1 << 27, "allocated": 1 << 30, "freed": (1 << 30) - (1 << 26)}
    pooled = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
              "active_bytes", "inactive_split_bytes", "requested_bytes")
    stats = {name: {pool: counters() for pool in ("all", "small_pool", "large_pool")} for name in pooled}
    stats.update({"oversize_allocations": counters(), "oversize_segments": counters(), "num_alloc_retries": 0,
                  "num_ooms": 0, "num_sync_all_streams": 0, "num_device_alloc": 3, "num_device_free": 0,
                  "max_split_size": -1})
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0+standin"
    torch.version = types.SimpleNamespace(cuda="standin")
    torch._C = types.SimpleNamespace(
        _cuda_getDeviceCount=functools.partial(int, 2),
        _cuda_memoryStats={0: stats, 1: stats}.get,
        _cuda_resetPeakMemoryStats={0: None, 1: None}.get,
        _cuda_hasPrimaryContext={0: True, 1: True}.get,
        _cuda_isInBadFork=functools.partial(bool, 0),
    )
    state = {"initialized": True, "device_count": 2}
    def is_initialized():
        return state["initialized"] and not torch._C._cuda_isInBadFork()
    def _is_compiled():
        return hasattr(torch._C, "_cuda_getDeviceCount")
    def device_count():
        if not _is_compiled():
            return 0
        if state["device_count"] is not None:
            return state["device_count"]
        return torch._C._cuda_getDeviceCount()
    props = [types.SimpleNamespace(name="stand-in GPU", total_memory=80 << 30, uuid=f"standin-{i}") for i in range(2)]
    torch.cuda = types.SimpleNamespace(
        is_initialized=is_initialized, device_count=device_count, get_device_properties=props.__getitem__,
        get_allocator_backend=functools.partial(str, "native"),
    )
    sys.modules["torch"] = torch
_standin_cuda()
del _standin_cuda
"""

# What each --device runs in every measured kernel before measuring.
DEVICE_SETUP = {"cpu": None, "cuda": CUDA_IN_USE, "standin-cuda": STANDIN_CUDA}


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """Seconds each live thread of process ``pid`` has run: Linux schedstat, in
    nanoseconds (psutil's user+system time counts whole clock ticks, 10 ms);
    {} where it cannot be read (not Linux). A thread that ended is missing."""
    times: dict[int, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return times
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                times[int(tid)] = int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
    return times


def cpu_reading(pid: int) -> dict[int, float]:
    """Seconds each thread of process ``pid`` has run (:func:`thread_cpu_seconds`), or
    {0: the process's user+system time} where schedstat is missing (psutil's clock ticks)."""
    threads = thread_cpu_seconds(pid)
    if threads:
        return threads
    import psutil  # only where schedstat is missing

    t = psutil.Process(pid).cpu_times()
    return {0: t.user + t.system}


def cpu_between(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two readings of :func:`cpu_reading`: per thread, so one that ended meanwhile
    takes only its own time in the interval with it (missed), not its whole life."""
    return sum(seconds - before.get(tid, 0.0) for tid, seconds in after.items())


# Evaluated in a kernel: its threads' names by native id (matches schedstat's tids).
THREAD_NAMES = "{t.native_id: t.name for t in __import__('threading').enumerate()}"


def add_common_arguments(parser: argparse.ArgumentParser, standin: bool = False) -> None:
    """``--device`` (with ``standin-cuda`` where ``standin``: benchmarks that measure
    the helper's own calls, not real tensors) and ``--json``."""
    help_text = "cpu: as on a machine without a GPU; cuda: every kernel uses CUDA"
    if standin:
        help_text += (
            "; standin-cuda: every kernel has a stand-in for torch with CUDA up, on a machine "
            "without a GPU (the helper's own cost on the CUDA path, not torch's)"
        )
    parser.add_argument(
        "--device",
        choices=tuple(DEVICE_SETUP) if standin else ("cpu", "cuda"),
        default="cpu",
        help=help_text + " (default cpu)",
    )
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the figures as JSON here")


def require_device(device: str) -> None:
    """Exit with NO_CUDA, saying why, when cuda is asked for and absent.

    Probed in a subprocess: the benchmark's own process never initialises CUDA.
    """
    if device != "cuda":
        return
    code = "import torch, sys; sys.stdout.write('yes' if torch.cuda.is_available() else 'no')"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        why = "the probe took over 120 s"
    else:
        if out.returncode == 0 and out.stdout.strip() == "yes":
            return
        # A probe killed by a signal (a crash in CUDA's initialisation) may say nothing on stderr.
        why = (
            (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
            if out.returncode
            else "torch.cuda.is_available() is False"
        )
    print(f"--device cuda: no CUDA GPU here ({why}); nothing measured.")
    sys.exit(NO_CUDA)


def target(name: str, value: float, limit: float, unit: str) -> dict[str, Any]:
    return {"name": name, "value": round(value, 3), "limit": limit, "unit": unit, "met": value <= limit}


def write_json(
    path: Path | None,
    benchmark: str,
    device: str,
    params: dict[str, Any],
    figures: dict[str, Any],
    targets: list[dict[str, Any]],
) -> None:
    if path is None:
        return
    data = {"benchmark": benchmark, "device": device, "params": params, "figures": figures, "targets": targets}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
