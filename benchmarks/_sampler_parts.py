"""Where a sampler tick's CPU goes, part by part, as benchmarks/sampler_overhead.py measures it.

A whole tick's CPU is known from schedstat (the sampler thread's run time),
but not what in it costs: the host reading, torch's stats call, NVML's
memory query (a driver call) and process list, the comparison with the last
sample, the send. On a GPU machine that split is what a change has to aim
at, so the benchmark installs thread-CPU timers around each part in one
helper kernel after its measured window (they would inflate it), lets it
tick for a while, and prints the mean per tick and the median per call.

Timers count only on the sampler thread (requests read the same sources on
the shell thread). Each adds a microsecond or two, and parts nest: ``read``
holds ``host``, ``torch`` and ``nvml``, and the timers inside them; ``tick``
holds them all (about eight timers' worth more than its code). What is left of
the thread's CPU per tick outside ``tick`` is the loop's wait and wake-up. With a baseline helper beside it, its 10 Hz
kernel gets the same timers over the same seconds: a part's cost side by side.
"""

from __future__ import annotations

import statistics

# (part, what it times, which parts it holds) in print order.
PARTS = (
    ("tick", "Sampler.tick: the whole tick", ""),
    ("read", "SampleSource.read: every source once", "tick"),
    ("host", "HostReader.read: RSS, available RAM, cgroup", "read"),
    ("torch", "initialized_device_reading (read_initialized_device before it), per device", "read"),
    ("torch_stats", "torch's stats binding, per device", "torch"),
    ("nvml", "NvmlReader.read, per device", "read"),
    ("nvml_memory", "nvmlDeviceGetMemoryInfo, per device", "nvml"),
    ("nvml_process_list", "nvmlDeviceGetComputeRunningProcesses, when the cache is stale", "nvml"),
    ("decide", "EmitPolicy.decide: compare with the last sample", "tick"),
    ("send", "a sample built and sent (changes and heartbeats only)", "tick"),
)

# Installed silently in a helper kernel: thread-CPU timers around each part of
# PARTS, counted on the sampler thread only (looked up at each call: a sampler
# that restarts keeps being timed). Instance attributes shadow the methods the
# sampler calls through ``self``; torch's module-level reader and its kept
# bindings are replaced the same way. A part whose attribute this helper lacks
# (an older baseline) is left alone and named in "missing".
TICK_PART_TIMERS = r"""
def _bench_tick_parts():
    import sys, threading, time
    from jupyterlab_vram_helper import runtime
    from jupyterlab_vram_helper.sampling.readers import torch_cuda
    rt = runtime.current()
    sampler, source = rt.sampler, rt.source
    get_ident, thread_time = threading.get_ident, time.thread_time
    parts, missing = {}, []
    def on_sampler():
        thread = sampler._thread
        return thread is not None and get_ident() == thread.ident
    def timed(part, fn):
        calls = parts.setdefault(part, [])
        def call(*args, **kwargs):
            if not on_sampler():
                return fn(*args, **kwargs)
            c = thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                calls.append(thread_time() - c)
        return call
    for part, owner, name in (
        ("tick", sampler, "tick"), ("send", sampler, "_emit_locked"),
        ("decide", getattr(sampler, "_policy", None), "decide"), ("read", source, "read"),
        ("host", getattr(source, "host", None), "read"), ("nvml", getattr(source, "nvml", None), "read"),
        ("nvml_memory", getattr(source, "nvml", None), "_memory"),
        ("nvml_process_list", getattr(source, "nvml", None), "_list_processes"),
        ("torch", torch_cuda, "initialized_device_reading" if hasattr(torch_cuda, "initialized_device_reading")
         else "read_initialized_device"),
    ):
        if hasattr(owner, name):
            setattr(owner, name, timed(part, getattr(owner, name)))
        else:
            missing.append(part)
    torch = torch_cuda.loaded_torch()
    if torch is not None and torch_cuda.cuda_initialized(torch):
        try:
            bound = torch_cuda._bound(torch)
            torch_cuda._allocator = bound._replace(stats=timed("torch_stats", bound.stats))
        except Exception:
            missing.append("torch_stats")
    sys.modules["__bench_tick_parts__"] = {"parts": parts, "missing": missing}
_bench_tick_parts()
del _bench_tick_parts
"""
TICK_PART_TIMES = "{k: list(v) for k, v in __import__('sys').modules['__bench_tick_parts__']['parts'].items()}"
TICK_PARTS_MISSING = "list(__import__('sys').modules['__bench_tick_parts__']['missing'])"
TICKS_TIMED = "len(__import__('sys').modules['__bench_tick_parts__']['parts'].get('tick', ()))"


def summarize(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per part that was called: calls, calls per tick, mean us per tick, median us per call."""
    ticks = len(times.get("tick") or [])
    summary: dict[str, dict[str, float]] = {}
    if not ticks:
        return summary
    for part, _, _ in PARTS:
        calls = times.get(part) or []
        if not calls:
            continue
        summary[part] = {
            "calls": len(calls),
            "calls_per_tick": len(calls) / ticks,
            "us_per_tick": sum(calls) / ticks * 1e6,
            "us_per_call_median": statistics.median(calls) * 1e6,
        }
    return summary


def print_summaries(measured: dict[str, tuple[dict[str, dict[str, float]], float | None]]) -> None:
    """One column per kernel (its parts' summary, its sampler thread's schedstat CPU per tick):
    mean us per tick and median us per call of each part, then what is left outside the tick."""
    names = list(measured)
    head = "".join(f"{name:>26}" for name in names)
    print(f"  {'us per tick (median per call)':<30}{head}")
    depth = {"": -1}
    for part, what, parent in PARTS:
        depth[part] = depth[parent] + 1
        cells = []
        for name in names:
            row = measured[name][0].get(part)
            cells.append(f"{row['us_per_tick']:10.1f} ({row['us_per_call_median']:7.1f})" if row else "")
        if any(cells):
            label = "  " * depth[part] + part
            print(f"  {label:<30}" + "".join(f"{cell:>26}" for cell in cells) + f"   {what}")
    thread, outside = [], []
    for name in names:
        summary, thread_us = measured[name]
        if "tick" in summary and thread_us is not None:
            thread.append(f"{thread_us:10.1f}")
            outside.append(f"{thread_us - summary['tick']['us_per_tick']:10.1f}")
        else:
            thread.append("")
            outside.append("")
    print(f"  {'the thread (schedstat)':<30}" + "".join(f"{cell:>26}" for cell in thread))
    print(f"  {'outside the tick':<30}" + "".join(f"{cell:>26}" for cell in outside) + "   the loop's wait and wake-up")


def json_figures(summary: dict[str, dict[str, float]], thread_us: float | None, prefix: str = "") -> dict[str, float]:
    """``tick_part_<part>_*`` for each part, ``tick_thread_us_per_tick`` and ``tick_outside_us``;
    each key with ``prefix`` in front (``baseline_`` for the baseline kernel)."""
    figures: dict[str, float] = {}
    for part, row in summary.items():
        figures[f"{prefix}tick_part_{part}_us_per_tick"] = round(row["us_per_tick"], 1)
        figures[f"{prefix}tick_part_{part}_us_per_call_median"] = round(row["us_per_call_median"], 1)
        figures[f"{prefix}tick_part_{part}_calls_per_tick"] = round(row["calls_per_tick"], 2)
    if "tick" in summary and thread_us is not None:
        figures[f"{prefix}tick_thread_us_per_tick"] = round(thread_us, 1)
        figures[f"{prefix}tick_outside_us"] = round(thread_us - summary["tick"]["us_per_tick"], 1)
    return figures
