"""A kernel fed trivial cells, as benchmarks/cell_hooks_overhead.py drives it.

Timers installed silently around every pre/post_run_cell callback, the
kernel's CPU per thread (Linux schedstat), a lone cell's record delay,
"Run All" bursts, and the hooks' reads timed one by one. Prints nothing itself.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from queue import Empty

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import THREAD_NAMES, cpu_between, cpu_reading  # noqa: E402
from kernel_harness import Kernel, _parse_date  # noqa: E402

# Installed silently in each kernel after its tool: timers around every
# registered pre/post_run_cell callback, switched on and off by TIMERS. Per
# cell, pre + post. The wall interval holds the callback alone: the CPU clock
# (a system call, 5-10 us with cold caches, where the wall clock is a vDSO
# read) is read outside it; inside, it made an empty callback measure 8-12 us
# instead of 1.4-1.7. The timers cost the kernel CPU and busy->idle time
# themselves, so those are measured while they are off.
TIMING_WRAPPERS = r"""
def _bench_install():
    import sys
    from time import perf_counter, thread_time
    ip = get_ipython()
    store = {"pre_run_cell": [], "post_run_cell": [], "pre_cpu": [], "post_cpu": []}
    def wrap(event, fn):
        times, cpu_times = store[event], store[event[:-9] + "_cpu"]  # pre_run_cell -> pre_cpu
        def timed(*args, **kwargs):
            c = thread_time()
            t = perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                t = perf_counter() - t
                cpu_times.append(thread_time() - c)
                times.append(t)
        return timed
    untimed = {event: list(ip.events.callbacks[event]) for event in ("pre_run_cell", "post_run_cell")}
    timed = {event: [wrap(event, f) for f in callbacks] for event, callbacks in untimed.items()}
    def timers(on):
        for event, callbacks in (timed if on else untimed).items():
            ip.events.callbacks[event][:] = callbacks
    store["timers"] = timers
    sys.modules["__bench_hook_times__"] = store
_bench_install()
del _bench_install
"""
TIMERS = "__import__('sys').modules['__bench_hook_times__']['timers']({on})"

HOOK_TIMES = (
    "(lambda s: (s['pre_run_cell'][{skip}:{end}], s['post_run_cell'][{skip}:{end}]))"
    "(__import__('sys').modules['__bench_hook_times__'])"
)
HOOK_COUNT = "len(__import__('sys').modules['__bench_hook_times__']['pre_run_cell'])"

# Installed silently in the helper's kernel for the last phase: timers around
# the reads the hooks make, on the kernel's main thread only (the sampler and
# the sender thread make the same calls): the RSS read, where CUDA is
# initialised torch's stats read and peak reset (the bound C entry points),
# and the hand-off of the sender's round (a queue put that may wake its thread).
# Per call; each timer adds about a microsecond to the hooks it sits in.
PART_TIMERS = r"""
def _bench_parts():
    import sys, threading, time
    from jupyterlab_vram_helper import runtime
    from jupyterlab_vram_helper.sampling.readers import torch_cuda
    main = threading.main_thread()
    store = {"rss_read": [], "torch_stats": [], "peak_reset": [], "round_queued": []}
    def timed(part, fn):
        def call(*args, **kwargs):
            if threading.current_thread() is not main:
                return fn(*args, **kwargs)
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                store[part].append(time.perf_counter() - t)
        return call
    cells = runtime.current().cells
    rss = cells._rss
    cells._call_soon = timed("round_queued", cells._call_soon)
    rss.rss_and_peak = timed("rss_read", rss.rss_and_peak)
    torch = torch_cuda.loaded_torch()
    if torch is not None and torch_cuda.cuda_initialized(torch):
        bound = torch_cuda._bound(torch)
        torch_cuda._allocator = bound._replace(
            stats=timed("torch_stats", bound.stats),
            reset_peaks=timed("peak_reset", bound.reset_peaks) if bound.reset_peaks is not None else None,
        )
        # The hooks keep torch's entry points once CUDA is up: made again from the timed ones.
        runtime.current().cells._cuda = None
    sys.modules["__bench_part_times__"] = store
_bench_parts()
del _bench_parts
"""
PART_TIMES = "{k: list(v) for k, v in __import__('sys').modules['__bench_part_times__'].items()}"

HOOK_CPU_TIMES = (
    "(lambda s: (s['pre_cpu'][{skip}:{end}], s['post_cpu'][{skip}:{end}]))"
    "(__import__('sys').modules['__bench_hook_times__'])"
)


class Subject:
    def __init__(self, name: str):
        self.name = name
        self.kernel = Kernel()
        self.pid = self.kernel.eval("__import__('os').getpid()")
        self.round_trip: list[float] = []
        self.busy_idle: list[float] = []
        self.cpu_seconds = 0.0  # over the cells measured with the hook timers off

    def thread_cpu(self) -> dict[int, float]:
        """Seconds each live thread of the kernel has run (``_common.cpu_reading``)."""
        return cpu_reading(self.pid)

    def thread_names(self) -> dict[int, str]:
        return self.kernel.eval(THREAD_NAMES)

    def lone_cell_delay(self, code: str) -> float | None:
        """Seconds from the kernel's idle status to the ``cells`` message with this cell's record."""
        kc = self.kernel.kc
        msg_id = kc.execute(code, store_history=True)
        idle_at: float | None = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                m = kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            if (
                m["msg_type"] == "status"
                and m["parent_header"].get("msg_id") == msg_id
                and m["content"]["execution_state"] == "idle"
            ):
                idle_at = _parse_date(m["header"]["date"])
            elif m["msg_type"] == "comm_msg" and m["content"]["data"].get("type") == "cells" and idle_at is not None:
                return _parse_date(m["header"]["date"]) - idle_at
        return None

    def run_cell(self, code: str, record: bool) -> None:
        kc = self.kernel.kc
        start = time.perf_counter()
        msg_id = kc.execute(code, store_history=True)
        while True:
            msg = kc.get_shell_msg(timeout=60)
            if msg["parent_header"].get("msg_id") == msg_id:
                break
        elapsed = time.perf_counter() - start
        busy = idle = None
        deadline = time.monotonic() + 60
        while idle is None:
            try:
                m = kc.get_iopub_msg(timeout=max(0.0, deadline - time.monotonic()))
            except Empty:
                raise TimeoutError(f"{self.name}: no idle status") from None
            if m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id:
                if m["content"]["execution_state"] == "busy":
                    busy = _parse_date(m["header"]["date"])
                elif m["content"]["execution_state"] == "idle":
                    idle = _parse_date(m["header"]["date"])
        if record:
            self.round_trip.append(elapsed)
            if busy is not None:
                self.busy_idle.append(idle - busy)

    def run_burst(self, code: str, cells: int) -> dict[str, float]:
        """Send ``cells`` execute requests at once, as JupyterLab's "Run All" does; wait for the last idle.

        Returns the wall time, the kernel's CPU time, and the per-cell
        ``cells`` messages that arrived meanwhile (and the records in them).
        """
        kc = self.kernel.kc
        cpu_start = self.thread_cpu()
        start = time.perf_counter()
        ids = [kc.execute(code, store_history=True) for _ in range(cells)]
        last, replies = ids[-1], 0
        while replies < cells:
            msg = kc.get_shell_msg(timeout=120)
            if msg["parent_header"].get("msg_id") in ids:
                replies += 1
        messages = records = 0
        idle_at: float | None = None
        elapsed = 0.0
        deadline = time.monotonic() + 120
        # The last round of records follows the idle status: listen a little longer.
        while idle_at is None or time.monotonic() < idle_at + 0.2:
            try:
                m = kc.get_iopub_msg(timeout=0.05)
            except Empty:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.name}: no idle status after the burst") from None
                continue
            if m["msg_type"] == "status" and m["parent_header"].get("msg_id") == last:
                if m["content"]["execution_state"] == "idle" and idle_at is None:
                    idle_at, elapsed = time.monotonic(), time.perf_counter() - start
            elif m["msg_type"] == "comm_msg" and m["content"]["data"].get("type") == "cells":
                messages += 1
                records += len(m["content"]["data"]["records"])
        return {
            "wall": elapsed,
            "cpu": cpu_between(cpu_start, self.thread_cpu()),
            "messages": messages,
            "records": records,
        }

    def drain(self) -> None:
        while True:
            try:
                self.kernel.kc.get_iopub_msg(timeout=0.01)
            except Empty:
                return

    def timers(self, on: bool) -> None:
        """Switch the hook timers (:data:`TIMING_WRAPPERS`) on or off, silently."""
        reply = self.kernel.execute(TIMERS.format(on=on), silent=True, store_history=False)
        assert reply["status"] == "ok", reply
        self.drain()

    def hook_count(self) -> int:
        """How many cells' hook times the kernel holds so far."""
        return self.kernel.eval(HOOK_COUNT)

    def part_times(self) -> dict[str, list[float]]:
        """Per call, seconds of each read timed by :data:`PART_TIMERS` since it was installed."""
        return self.kernel.eval(PART_TIMES)

    def hook_times(self, skip: int, count: int, cpu: bool = False) -> list[float]:
        """Per-cell hook times of ``count`` cells after the first ``skip`` (in chunks: IPython's repr stops at 1,000
        items)."""
        times: list[float] = []
        for start in range(skip, skip + count, 500):
            end = min(start + 500, skip + count)
            pre, post = self.kernel.eval((HOOK_CPU_TIMES if cpu else HOOK_TIMES).format(skip=start, end=end))
            times += [a + b for a, b in zip(pre, post, strict=True)]
        return times


# Timed but not in the hooks: the helper hands the sender its round from the
# kernel's event loop once the reply has gone (cell_accounting's reply_loop),
# once per round; taking it out of the hooks' time would understate the rest.
AFTER_HOOKS = ("round_queued",)


def hook_parts(helper: Subject, plain: Subject, code: str, cells: int) -> tuple[dict[str, float], dict[str, float]]:
    """Where the hooks' time goes: ``cells`` more cells (taking turns with the plain kernel)
    with the RSS read, torch's stats read, the peak reset and the sender's hand-off timed on their own;
    medians in microseconds (the hooks' per cell, each part's per call) and each part's calls
    per cell (torch's: one per device); ({}, {}) when ``cells`` is 0."""
    if cells <= 0:
        return {}, {}
    reply = helper.kernel.execute(PART_TIMERS, silent=True, store_history=False)
    assert reply["status"] == "ok", reply
    helper.timers(True)
    first = helper.hook_count()
    for _ in range(cells):
        plain.run_cell(code, record=False)
        helper.run_cell(code, record=False)
    helper.timers(False)
    medians, calls = {"hooks": statistics.median(helper.hook_times(first, cells)) * 1e6}, {}
    for part, times in helper.part_times().items():
        if times:
            medians[part], calls[part] = statistics.median(times) * 1e6, round(len(times) / cells, 2)
    return {part: round(value, 1) for part, value in medians.items()}, calls


def hooks_rest(parts: dict[str, float], calls: dict[str, float]) -> float:
    """The hooks' median less each read in them (median per call times calls per cell)."""
    inside = [part for part in parts if part != "hooks" and part not in AFTER_HOOKS]
    return round(parts["hooks"] - sum(parts[part] * calls.get(part, 1.0) for part in inside), 1)
