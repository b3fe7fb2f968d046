"""The process tree's cost in the sampler: a kernel with 0 and with 16 children, side by side in one run.

Runs the helper's sample source in this process (no kernel: the tree is what
is measured), reading once per simulated second as the sampler does at its
default 1 Hz, and prints the CPU one reading takes (the thread's CPU time)
with no child and with 16 forked children holding 64 MB each, as a share of
one core at 1 Hz; the target is at most +0.2 % of a core. Then the parts:
finding descendants from the children files against one /proc/*/stat scan,
and one smaps_rollup read per MB resident (why rollup_budget.py paces them).

    python benchmarks/process_tree_cost.py [--children 16] [--mb 64] [--seconds 30]

The per-cell hooks with no children are measured by cell_hooks_overhead.py:
they read one attribute more.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python_helper"))

from jupyterlab_vram_helper.sampling.processes import proc_files  # noqa: E402
from jupyterlab_vram_helper.sampling.processes.descendants import Descendants  # noqa: E402
from jupyterlab_vram_helper.sampling.processes.process_tree import ProcessTreeReader  # noqa: E402
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader  # noqa: E402
from jupyterlab_vram_helper.sampling.sample import SampleSource  # noqa: E402


class SimulatedClock:
    """A monotonic clock the benchmark moves one second per reading, so that paced reads come due as at 1 Hz."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now


def _hold(mb: int, ready) -> None:
    held = bytearray(mb << 20)
    held[::4096] = b"\x01" * len(range(0, len(held), 4096))
    ready.set()
    time.sleep(3600)


def reading_cpu_us(seconds: int, tree_on: bool = True) -> list[float]:
    """CPU microseconds of each of ``seconds`` readings, one simulated second apart (``tree_on``
    False: the sample source as before the tree, for the baseline)."""
    clock = SimulatedClock()
    tree = ProcessTreeReader(clock=clock)
    tree.available = tree_on
    from jupyterlab_vram_helper.sampling.processes.rollup_budget import RollupBudget

    tree._budget = RollupBudget(clock)
    source = SampleSource(nvml=NvmlReader(load=lambda: None), processes=tree, clock=clock)
    source.read()  # the first reading names every process and reads each smaps_rollup (a burst)
    costs = []
    for _ in range(seconds):
        clock.now += 1.0
        started = time.thread_time()
        source.read()
        costs.append((time.thread_time() - started) * 1e6)
    return costs


def per_call_us(call, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - started) / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=16)
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=30)
    args = parser.parse_args()

    no_tree = reading_cpu_us(args.seconds, tree_on=False)
    without = reading_cpu_us(args.seconds)
    context = multiprocessing.get_context("fork")
    readies = [context.Event() for _ in range(args.children)]
    children = [context.Process(target=_hold, args=(args.mb, ready), daemon=True) for ready in readies]
    for child in children:
        child.start()
    for ready in readies:
        ready.wait(60)
    try:
        with_children = reading_cpu_us(args.seconds)
        finder_files = Descendants(os.getpid(), use_children_files=True)
        finder_scan = Descendants(os.getpid(), use_children_files=False)
        files_us = per_call_us(finder_files.find, 200)
        scan_us = per_call_us(finder_scan.find, 20)
        pid = children[0].pid
        rollup_us = per_call_us(lambda: proc_files.read_rollup("/proc", pid), 50)
        processes = len(os.listdir("/proc"))
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.join()

    base, loaded = statistics.median(without), statistics.median(with_children)
    mean_base, mean_loaded = statistics.fmean(without), statistics.fmean(with_children)
    print(f"sample reading at 1 Hz, {args.seconds} readings (CPU per reading; mean includes paced smaps_rollup reads)")
    none = statistics.median(no_tree)
    print(f"  {'':20}{'no tree':>12}{'0 children':>14}{f'{args.children} children':>14}{'added':>12}")
    print(f"  {'median (us)':20}{none:12.0f}{base:14.0f}{loaded:14.0f}{loaded - base:12.0f}")
    mean_none = statistics.fmean(no_tree)
    print(f"  {'mean (us)':20}{mean_none:12.0f}{mean_base:14.0f}{mean_loaded:14.0f}{mean_loaded - mean_base:12.0f}")
    added = (mean_loaded - mean_base) / 1e6 * 100
    print(f"  share of one core at 1 Hz, added: {added:.3f} % (target <= 0.2 %)")
    print(
        f"finding {args.children} descendants: children files {files_us:.0f} us, "
        f"one /proc/*/stat scan ({processes} processes) {scan_us:.0f} us"
    )
    print(f"smaps_rollup of one {args.mb} MB child: {rollup_us:.0f} us ({rollup_us / args.mb:.1f} us per MB)")


if __name__ == "__main__":
    main()
