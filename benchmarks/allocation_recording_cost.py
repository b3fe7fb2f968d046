"""What recording allocations costs (the ``record_allocations`` request).

Prints figures; it is not a test. A real ipykernel, bootstrapped like the
frontend does, measures side by side in one run:

- the time of one allocation + free from a notebook cell, recording off,
  on, and off again (host: a NumPy array of 1,000 float64, as tracemalloc
  sees NumPy's buffers; with ``--device cuda`` also a 4 KiB CUDA tensor under
  PyTorch's allocator history);
- where the per-allocation time goes: plain ``tracemalloc`` at several depths
  in the same kernel (most of it is walking IPython's and ipykernel's own
  frames under the cell, whose line numbers CPython works out from large
  functions at every allocation), and at 16 frames in a plain interpreter;
- the memory recording holds: tracemalloc's own (``get_tracemalloc_memory``)
  with ``--live`` live allocations, and, with ``--device cuda``, the growth
  of the kernel's RSS while the allocator history fills its default bound
  (100,000 events);
- the per-cell figures computed after each cell while recording (the
  ``cell_alive`` message's ``elapsed_ms``), with the same live allocations;
- the cost of the by-line view (``allocation_sites``) with ``--live`` live
  allocations (target: at most 500 ms in the kernel): the helper's own
  ``elapsed_ms`` (median, min, max of ``--tries``) and the round trip.

    .venv/bin/python benchmarks/allocation_recording_cost.py [--live 100000] [--tries 5]
                                                             [--device cpu|cuda] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python_helper"))

from _common import CUDA_IN_USE, add_common_arguments, require_device, target, write_json  # noqa: E402
from kernel_harness import Kernel, attach_helper, bootstrap_code  # noqa: E402

QUIET = {"interval_s": 30.0, "heartbeat_s": 60.0}

# Best of 5 repeats of n allocations + frees, in ns per allocation.
TIME_HOST = (
    "min(__import__('timeit').repeat('np.ones(1000)', globals={'np': np}, number=20000, repeat=5)) / 20000 * 1e9"
)
# The same, shorter, for the sweep of tracemalloc depths (each costs up to ~90 us an allocation).
TIME_HOST_SWEEP = (
    "min(__import__('timeit').repeat('np.ones(1000)', globals={'np': np}, number=2000, repeat=3)) / 2000 * 1e9"
)
TIME_CUDA = (
    "min(__import__('timeit').repeat(\"torch.empty(1024, device='cuda:0')\", globals={'torch': torch},"
    " number=20000, repeat=5)) / 20000 * 1e9"
)

# The kernel's resident bytes (statm counts pages: 4 KiB on x86-64, 64 KiB on some arm64 kernels).
RSS_BYTES = "int(open('/proc/self/statm').read().split()[1]) * __import__('resource').getpagesize()"

# Live allocations from three lines. A small NumPy array is about 3 traced
# allocations (the object, its data, its shape); the figure printed is the
# count tracemalloc really holds.
LIVE = (
    "_live_a = [np.ones(8) for _ in range({a})]\n"
    "_live_b = [np.zeros(16) for _ in range({b})]\n"
    "_live_c = [np.full(4, 1.0) for _ in range({c})]\n"
)


def request(kernel: Kernel, comm_id: str, data: dict, n: int) -> dict:
    answer = kernel.request(comm_id, dict(data, request_id=f"b{n}"), timeout=600)
    if answer["type"] != "reply":
        raise RuntimeError(f"{data['type']} failed: {answer}")
    return answer["result"]


def _plain_python_ns(depth: int) -> float:
    """The same timing in a plain interpreter (this one's executable), tracemalloc at ``depth``:
    no IPython frames under the code, so each allocation's stack walk is short and cheap."""
    code = f"import tracemalloc, numpy as np\ntracemalloc.start({depth})\nprint({TIME_HOST_SWEEP})\n"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--live", type=int, default=100_000, help="about this many live traced allocations for the by-line view"
    )
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument(
        "--depths",
        default="1,4,8,16,32",
        help="tracemalloc depths timed in the kernel before recording starts (empty: none)",
    )
    add_common_arguments(parser)
    args = parser.parse_args()
    require_device(args.device)
    cuda = args.device == "cuda"

    kernel = Kernel()
    figures: dict = {}
    n = 0
    try:
        comm_id = attach_helper(kernel, bootstrap_code(), QUIET)
        kernel.execute("import numpy as np\n" + (CUDA_IN_USE if cuda else ""), timeout=300)

        def per_alloc(expression: str) -> float:
            return float(kernel.eval(expression))

        figures["host_ns_per_alloc_before"] = per_alloc(TIME_HOST)
        depths = [int(d) for d in args.depths.split(",") if d.strip()]
        for depth in depths:  # plain tracemalloc, started and stopped here, before the helper records
            kernel.execute(f"import tracemalloc\ntracemalloc.start({depth})\n", timeout=60)
            figures[f"host_ns_per_alloc_tracemalloc_{depth}_frames"] = per_alloc(TIME_HOST_SWEEP)
            kernel.execute("tracemalloc.stop()\n", timeout=60)
        if depths:
            figures["host_ns_per_alloc_tracemalloc_16_frames_plain_python"] = _plain_python_ns(16)
        if cuda:
            figures["cuda_ns_per_alloc_before"] = per_alloc(TIME_CUDA)
        n += 1
        t0 = time.perf_counter()
        state = request(kernel, comm_id, {"type": "record_allocations", "enabled": True}, n)
        # With CUDA up, this includes PyTorch's symbolizer run once (gpu_allocations.py).
        figures["record_on_ms"] = (time.perf_counter() - t0) * 1000
        figures["host_frames"] = state["host"]["frames"]
        figures["host_ns_per_alloc_recording"] = per_alloc(TIME_HOST)
        if cuda:
            # Read once recording is on, the history still empty: turning it on with CUDA up
            # first runs PyTorch's symbolizer, whose imports (~900 modules, ~150 MiB) are not the history.
            rss_before = kernel.eval(RSS_BYTES)
            figures["cuda_ns_per_alloc_recording"] = per_alloc(TIME_CUDA)
            # Fill the default history bound with alloc/free events, then read what the kernel grew by.
            kernel.execute("for _ in range(60000):\n    torch.empty(1024, device='cuda:0')\n", timeout=600)
            rss_after = kernel.eval(RSS_BYTES)
            figures["cuda_history_rss_growth_bytes"] = rss_after - rss_before

        live = args.live // 3
        kernel.execute(LIVE.format(a=live // 2, b=live // 4, c=live - live // 2 - live // 4), timeout=600)
        figures["tracemalloc_memory_bytes"] = kernel.eval("__import__('tracemalloc').get_tracemalloc_memory()")
        figures["live_traced_allocations"] = kernel.eval("len(__import__('tracemalloc').take_snapshot().traces)")

        # After each cell the helper groups live memory by cell on its sender thread (cell_alive).
        after_cell = []
        for k in range(args.tries):
            start = len(kernel.comm_data(comm_id))
            kernel.execute(f"_tick = {k}\n", cell_id=f"bench-cell-{k}")
            message = kernel.wait_for(comm_id, lambda d: d.get("type") == "cell_alive", timeout=120, start=start)
            after_cell.append(message["elapsed_ms"])
        figures["per_cell_ms_median"] = statistics.median(after_cell)

        inside, round_trip = [], []
        for _ in range(args.tries):
            n += 1
            t0 = time.perf_counter()
            listing = request(kernel, comm_id, {"type": "allocation_sites"}, n)
            round_trip.append((time.perf_counter() - t0) * 1000)
            inside.append(listing["elapsed_ms"])
        host = [d for d in listing["devices"] if d["device"] == "host"][0]
        figures["by_line_sites"] = len(host["sites"])
        figures["by_line_count"] = host["count"]
        figures["by_line_ms_median"] = statistics.median(inside)
        figures["by_line_ms_min"] = min(inside)
        figures["by_line_ms_max"] = max(inside)
        figures["by_line_round_trip_ms_median"] = statistics.median(round_trip)

        kernel.execute("del _live_a, _live_b, _live_c\n")
        n += 1
        request(kernel, comm_id, {"type": "record_allocations", "enabled": False}, n)
        figures["tracing_after_off"] = kernel.eval("__import__('tracemalloc').is_tracing()")
        figures["host_ns_per_alloc_after"] = per_alloc(TIME_HOST)
        if cuda:
            figures["cuda_ns_per_alloc_after"] = per_alloc(TIME_CUDA)
    finally:
        kernel.shutdown()

    f = figures
    print(f"Allocation recording cost ({args.device}; {f['host_frames']} host frames)")
    if depths:
        by_depth = ", ".join(f"{d}: {f[f'host_ns_per_alloc_tracemalloc_{d}_frames']:.0f}" for d in depths)
        print(
            f"  np.ones(1000) in a cell under plain tracemalloc, ns by depth: {by_depth}; "
            f"16 frames in a plain interpreter: {f['host_ns_per_alloc_tracemalloc_16_frames_plain_python']:.0f}"
        )
    print(
        f"  host allocation+free of np.ones(1000): off {f['host_ns_per_alloc_before']:.0f} ns, "
        f"recording {f['host_ns_per_alloc_recording']:.0f} ns "
        f"(x{f['host_ns_per_alloc_recording'] / f['host_ns_per_alloc_before']:.2f}), "
        f"off again {f['host_ns_per_alloc_after']:.0f} ns"
    )
    if cuda:
        print(
            f"  CUDA allocation+free of 4 KiB: off {f['cuda_ns_per_alloc_before']:.0f} ns, "
            f"recording {f['cuda_ns_per_alloc_recording']:.0f} ns, off again {f['cuda_ns_per_alloc_after']:.0f} ns"
        )
        print(
            f"  kernel RSS growth while the allocator history filled its default bound: "
            f"{f['cuda_history_rss_growth_bytes'] / 2**20:.1f} MiB"
        )
    print(
        f"  tracemalloc's own memory with {f['live_traced_allocations']} live traced allocations: "
        f"{f['tracemalloc_memory_bytes'] / 2**20:.1f} MiB "
        f"({f['tracemalloc_memory_bytes'] / max(1, f['live_traced_allocations']):.0f} B per allocation)"
    )
    print(
        f"  by-line view of {f['by_line_count']} live allocations ({f['by_line_sites']} sites): "
        f"median {f['by_line_ms_median']:.1f} ms in the kernel (min {f['by_line_ms_min']:.1f}, "
        f"max {f['by_line_ms_max']:.1f}); round trip {f['by_line_round_trip_ms_median']:.1f} ms "
        f"(target <= 500 ms)"
    )
    print(
        f"  per-cell live bytes after each cell (sender thread, holds the GIL): median {f['per_cell_ms_median']:.1f} ms"
    )
    print(f"  tracemalloc running after recording off: {f['tracing_after_off']}")
    print(
        f"  turning recording on (round trip; with CUDA, PyTorch's symbolizer runs once first): "
        f"{f['record_on_ms']:.0f} ms"
    )
    write_json(
        args.json,
        "allocation_recording_cost",
        args.device,
        {"live": args.live, "tries": args.tries},
        figures,
        [target("by-line view in the kernel (median)", f["by_line_ms_median"], 500, "ms")],
    )


if __name__ == "__main__":
    main()
