"""What per-cell accounting costs a cell: ours side by side with ipyexperiments' CellLogger.

Prints figures; it is not a test. Three kernels run at once and trivial cells
are sent to them in turn (so machine noise hits all three alike):

- ``plain``: a bare ipykernel;
- ``helper``: the jupyterlab-vram helper bootstrapped as the frontend does,
  with a comm open (so every cell's record is really sent);
- ``ipyexperiments``: ``IPyExperimentsCPU(exp_enable=False, cl_enable=True,
  cl_compact=True)``, i.e. only its CellLogger (the CPU one); left out, with
  a note, where ipyexperiments cannot be imported (as on the GPU kit's machine).

    .venv/bin/python benchmarks/cell_hooks_overhead.py [--cells 1000] [--code pass]
                                                       [--device cpu|cuda|standin-cuda] [--json PATH]

With ``--device cuda`` every kernel has imported torch, created its CUDA
context and holds an allocation first, so the helper's hooks also reset the
allocator's peak and read its counters at every cell. ``--device
standin-cuda`` takes the same path on a machine without a GPU, with a
stand-in for torch whose C bindings are dict lookups (_common.STANDIN_CUDA):
it measures the helper's own Python around torch's calls, not torch's cost.

Cells go one at a time, ``--cells`` per kernel with in-kernel timers on the
hooks and as many without, in alternating blocks of 100: the timers cost the
kernel CPU and time of their own, so every figure but the hooks' comes from
the untimed cells. Per kernel and cell it records:

- round trip: client-side time from sending execute_request to receiving its
  execute_reply (includes ZMQ and the client: noisy, but what a user waits);
- busy->idle: the kernel's own status timestamps around the request;
- hook time (timed cells): ``time.perf_counter`` around every pre/post_run_cell
  callback, measured inside the kernel (wrappers installed silently after the
  tool; nothing else inside the interval: an empty callback measures ~1.5 us),
  and the same in ``time.thread_time`` (the hook thread's CPU only: without
  time lost to preemption or waiting for the GIL);
- CPU per cell: the kernel process's CPU over the untimed cells / cells, every thread
  included (our sender and sampler, ipyexperiments' peak-monitor thread).
  On Linux it is the sum of the threads' ``/proc/<pid>/task/*/schedstat``
  run times (nanoseconds), and the added CPU is also shown per thread, which
  says where a cell's cost goes; elsewhere psutil's user+system time.

Then lone cells (one at a time, a pause between): how long after the
kernel's idle status the ``cells`` message with the cell's record goes out
(kernel clock), i.e. how late a lone cell's badge is (target <= 50 ms), and
their hooks' wall time: a lone cell finds the sender's thread asleep and
wakes it, where cells in a row mostly join a round already handed over.

Added time = a kernel's median minus the plain kernel's median. Targets: the
hooks' own wall time (in-kernel, far less noisy than anything seen from the
client) <= 50 us median (<= 100 us with ``--device cuda``, where torch's
stats read and peak reset run in the hooks); the kernel CPU added per cell, the record's send
included, <= 150 us; busy->idle added <= 100 us, read on the kernel's own
clock with a 95% bootstrap interval (on a small shared machine a trivial
cell's busy->idle spreads over milliseconds, so one run's difference of
medians is uncertain by tens of microseconds). The hooks' time includes the
cold-cache cost of the first /proc read after the kernel sat idle, part of
which the plain kernel pays later, in its own code.

Then "Run All" rounds: ``--burst`` cells sent at once to each kernel in turn
(what JupyterLab does), with the wall time, the kernel CPU per cell and, for
the helper, how many ``cells`` messages carried the records (the sender
gathers the records of every cell that ends within its 40 ms window into one message).

Last, where the hooks' time goes: ``--part-cells`` more cells (the plain
kernel taking turns) with the helper's reads timed on their own on the
kernel's main thread: the RSS read, and with CUDA torch's stats read and peak
reset (one per device). Medians per call times calls per cell beside the
hooks' median of the same cells; the rest is our Python and IPython's
dispatch. The sender's hand-off is timed too but shown apart: it runs from the
kernel's event loop after the hooks, once per round.

``--baseline-bootstrap PATH`` adds a fourth kernel, ``baseline``, with the
helper bootstrap code in PATH (``node scripts/bundle-helper.mjs --stdout``
run in another checkout): a change and what it replaces, side by side in one
run, which on a small shared machine is the only fair comparison. Know the
floor first: with the same helper in both kernels (six runs of 1,500 cells,
2-vCPU VM) the helper's kernel minus the baseline's was -35 to +101 us of
CPU, -23 to +104 us of busy->idle and -1.1 to +2.4 us of hook time per
cell: CPU and busy->idle need several runs, a difference in hook time of a
few microseconds is real.

``--json PATH`` also writes the medians, the added times, the ratios and the
targets' verdicts as JSON.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python_helper"))

from _cell_kernels import AFTER_HOOKS, TIMING_WRAPPERS, Subject, hook_parts, hooks_rest  # noqa: E402
from _common import DEVICE_SETUP, add_common_arguments, cpu_between, require_device, target, write_json  # noqa: E402
from kernel_harness import attach_helper, bootstrap_code  # noqa: E402

# The hooks' own wall time per cell, median. With a real CUDA the hooks also
# call torch's stats binding and peak reset at every cell: the GPU kit's target.
HOOKS_TARGET_US = {"cpu": 50.0, "standin-cuda": 50.0, "cuda": 100.0}
CPU_TARGET_US = 150.0  # kernel CPU added per cell, the record's send included
LONE_DELAY_TARGET_S = 0.05  # a lone cell's record, after the kernel's idle status

IPYEXPERIMENTS = (
    "from ipyexperiments import IPyExperimentsCPU as _IPyExperimentsCPU\n"
    "_cell_logger_exp = _IPyExperimentsCPU(exp_enable=False, cl_enable=True, cl_compact=True)\n"
)


def ipyexperiments_missing() -> str:
    """Why ipyexperiments cannot be used here ("" when it can).

    Imported by the interpreter the kernels run (this one), in a subprocess:
    it may import torch, and this process stays free of CUDA.
    """
    probe = subprocess.run([sys.executable, "-c", "import ipyexperiments"], capture_output=True, text=True, timeout=120)
    if probe.returncode == 0:
        return ""
    lines = probe.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {probe.returncode}"


# JSON key (figure, unit, statistic) of each column of the printed tables.
COLUMN_KEYS = {
    "round_trip": "round_trip_us_median",
    "busy_idle": "busy_idle_us_median",
    "hooks": "hooks_wall_us_median",
    "hooks_p90": "hooks_wall_us_p90",
    "hooks_cpu": "hooks_cpu_us_median",
    "cpu": "kernel_cpu_us_per_cell",
}


# How the helper's hooks read the RSS and its peak (readers/kernel_rss.py): with
# statm and getrusage where those prove the peak, else the status file. A
# kernel inherits its launcher's peak in getrusage's maximum: below it, the
# status file is read (--launcher-peak-mb shows that case).
RSS_READING = r"""(lambda host, rss, maximum: (lambda rss_now, high_water: (
    "{} (getrusage's maximum {} MiB, VmHWM {} MiB, VmRSS {} MiB)".format(
        "statm + getrusage" if rss._try_cheap else "the status file", maximum >> 10, high_water >> 20, rss_now >> 20)
))(*host._rss_and_high_water(open("/proc/self/status", "rb").read())))(
    __import__("jupyterlab_vram_helper.sampling.readers.kernel_rss").sampling.readers.kernel_rss,
    __import__("jupyterlab_vram_helper.runtime").runtime.current().cells._rss,
    (lambda resource: resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)).ru_maxrss)(
        __import__("resource")),
)"""

BLOCK_CELLS = 100  # cells per kernel in a block; blocks alternate between hook timers off and on


def one_by_one(order: list[Subject], code: str, cells: int, block: int = BLOCK_CELLS) -> dict[str, dict[int, float]]:
    """``cells`` cells per kernel with the hook timers off and as many with them on, one at a time,
    kernels taking turns, in blocks that alternate (so a change in the machine's speed hits both).

    With the timers off: round trip, busy->idle and the kernel's CPU
    (``Subject.cpu_seconds``), free of the timers' own cost; with them on:
    the hooks' times. Returns, per kernel, the seconds each thread ran in the
    untimed blocks (Linux schedstat; {} elsewhere).
    """
    threads: dict[str, dict[int, float]] = {s.name: {} for s in order}
    done = {False: 0, True: 0}
    timed, turn = True, 0
    while min(done.values()) < cells:
        if done[not timed] < cells:
            timed = not timed
        count = min(block, cells - done[timed])
        for s in order:
            s.timers(timed)
        if not timed:
            before = {s.name: s.thread_cpu() for s in order}
        for _ in range(count):
            # rotate who goes first, so no kernel always follows the same one
            for s in order[turn % len(order) :] + order[: turn % len(order)]:
                s.run_cell(code, record=not timed)
            turn += 1
        if not timed:
            for s in order:
                after = s.thread_cpu()
                s.cpu_seconds += cpu_between(before[s.name], after)
                for tid, seconds in after.items():
                    threads[s.name][tid] = threads[s.name].get(tid, 0.0) + seconds - before[s.name].get(tid, 0.0)
        done[timed] += count
    for s in order:
        s.timers(False)
    return threads


def added_cpu_by_thread(
    seconds: dict[str, dict[int, float]], names: dict[str, dict[int, str]], cells: int, kernel: str = "helper"
) -> dict[str, float]:
    """Microseconds per cell each thread of ``kernel`` ran beyond the same thread of the plain one.

    ``seconds``: per kernel, each thread's CPU over the measured cells
    (:func:`one_by_one`). Threads are matched by name (ipykernel's own:
    MainThread, IOPub, ...); a thread only ``kernel`` has (ours) counts
    whole. {} where schedstat cannot be read.
    """

    def per_name(kernel: str) -> dict[str, float]:
        totals: dict[str, float] = {}
        for tid, spent in seconds[kernel].items():
            name = names[kernel].get(tid, "other threads")
            totals[name] = totals.get(name, 0.0) + spent
        return totals

    if not seconds.get("plain") or not seconds.get(kernel):
        return {}
    plain, helper = per_name("plain"), per_name(kernel)
    added = {
        name: (helper.get(name, 0.0) - plain.get(name, 0.0)) / cells * 1e6 for name in sorted(set(plain) | set(helper))
    }
    main_first = dict(sorted(added.items(), key=lambda item: -abs(item[1])))
    return {name: value for name, value in main_first.items() if abs(value) >= 1.0}


def bootstrap_interval(ours: list[float], plain: list[float], rounds: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of median(ours) - median(plain): how far one run's figure can be trusted."""
    rng = random.Random(0)
    differences = sorted(
        statistics.median(rng.choices(ours, k=len(ours))) - statistics.median(rng.choices(plain, k=len(plain)))
        for _ in range(rounds)
    )
    return differences[int(rounds * 0.025)], differences[int(rounds * 0.975) - 1]


def print_hook_parts(parts: dict[str, float], calls: dict[str, float], cells: int) -> None:
    terms = [
        f"{part.replace('_', ' ')} {calls.get(part, 1.0):g} x {value:.1f}"
        for part, value in parts.items()
        if part != "hooks" and part not in AFTER_HOOKS
    ]
    print(
        f"where the hooks' time goes ({cells} more cells, their reads timed one by one: calls per cell x "
        f"median per call; the timers add ~1 us each):"
    )
    print(f"  hooks {parts['hooks']:.1f} us = " + " + ".join(terms) + f" + the rest {hooks_rest(parts, calls):.1f} us")
    for part in (part for part in AFTER_HOOKS if part in parts):
        print(
            f"  after the hooks, from the kernel's event loop: {part.replace('_', ' ')} "
            f"{parts[part]:.1f} us per call, {calls.get(part, 0.0):g} calls per cell"
        )
    print()


def us(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000, help="measured cells per kernel (default 1000)")
    parser.add_argument("--warmup", type=int, default=50, help="unmeasured cells first (default 50)")
    parser.add_argument("--code", default="pass", help="the trivial cell (default: pass)")
    parser.add_argument(
        "--burst", type=int, default=500, help='cells sent at once per "Run All" round (default 500; 0: no such rounds)'
    )
    parser.add_argument("--burst-rounds", type=int, default=3, help='"Run All" rounds per kernel (default 3)')
    parser.add_argument(
        "--baseline-bootstrap",
        type=Path,
        default=None,
        metavar="PATH",
        help="also measure a kernel running the helper bootstrap code in PATH (another version)",
    )
    parser.add_argument(
        "--lone-cells", type=int, default=20, help="lone cells whose record delay is measured (default 20)"
    )
    parser.add_argument(
        "--launcher-peak-mb",
        type=int,
        default=0,
        metavar="MB",
        help="touch this much memory before starting the kernels, which inherit the peak as a "
        "Jupyter server's kernels inherit the server's (getrusage's maximum; default 0)",
    )
    parser.add_argument(
        "--part-cells",
        type=int,
        default=300,
        help="last, cells with the hooks' reads timed one by one (default 300; 0: none)",
    )
    add_common_arguments(parser, standin=True)
    args = parser.parse_args()
    require_device(args.device)

    names = ["plain", "helper"]
    if args.baseline_bootstrap is not None:
        names.append("baseline")
    missing = ipyexperiments_missing()
    if not missing:
        names.append("ipyexperiments")
    else:
        print(f"ipyexperiments cannot be imported here ({missing}): measuring plain and helper only")

    if args.launcher_peak_mb > 0:
        peak = bytearray(args.launcher_peak_mb << 20)
        for page in range(0, len(peak), 4096):
            peak[page] = 1
        del peak
    subjects: dict[str, Subject] = {}
    try:
        for name in names:
            subjects[name] = Subject(name)
        if DEVICE_SETUP[args.device] is not None:
            for s in subjects.values():
                reply = s.kernel.execute(DEVICE_SETUP[args.device], timeout=300)
                assert reply["status"] == "ok", reply
        helper = subjects["helper"].kernel
        comm_id = attach_helper(helper, bootstrap_code())
        if "baseline" in subjects:
            attach_helper(subjects["baseline"].kernel, args.baseline_bootstrap.read_text(encoding="utf-8"))
        if "ipyexperiments" in subjects:
            reply = subjects["ipyexperiments"].kernel.execute(IPYEXPERIMENTS)
            assert reply["status"] == "ok", reply
        for s in subjects.values():
            reply = s.kernel.execute(TIMING_WRAPPERS, silent=True, store_history=False)
            assert reply["status"] == "ok", reply
            s.drain()

        order = list(subjects.values())
        for _ in range(args.warmup):
            for s in order:
                s.run_cell(args.code, record=False)
        thread_seconds = one_by_one(order, args.code, args.cells)
        thread_names = {s.name: s.thread_names() for s in order}
        rss_reading = subjects["helper"].kernel.eval(RSS_READING)
        lone_delays: list[float] = []
        baseline_lone_delays: list[float] = []
        # A lone cell's hooks find the sender's thread asleep, and handing it
        # the round wakes it: the case of a person running one cell at a time.
        # The helper's kernels take turns (the baseline's too, where there is one).
        lone_kernels = [s for s in order if s.name in ("helper", "baseline")]
        lone_first = {}
        for s in lone_kernels:
            s.timers(True)  # a microsecond per cell: nothing next to the record's 40 ms
            lone_first[s.name] = s.hook_count()
        for _ in range(args.lone_cells):
            for s in lone_kernels:
                time.sleep(0.2)
                delay = s.lone_cell_delay(args.code)
                if delay is not None:
                    (lone_delays if s.name == "helper" else baseline_lone_delays).append(delay)
        lone_hooks = {}
        for s in lone_kernels:
            lone_hooks[s.name] = s.hook_times(lone_first[s.name], s.hook_count() - lone_first[s.name])
            s.timers(False)
        bursts: dict[str, list[dict[str, float]]] = {s.name: [] for s in order}
        for round_ in range(args.burst_rounds if args.burst > 0 else 0):
            for s in order[round_ % len(order) :] + order[: round_ % len(order)]:
                bursts[s.name].append(s.run_burst(args.code, args.burst))

        parts, part_calls = hook_parts(subjects["helper"], subjects["plain"], args.code, args.part_cells)

        # sanity: the helper really recorded and sent every cell
        records = helper.request(comm_id, {"type": "history", "request_id": "bench"}, timeout=60)
        n_records = len(records["result"]["records"])

        hooks = {name: s.hook_times(0, args.cells) for name, s in subjects.items()}
        hooks_cpu = {name: s.hook_times(0, args.cells, cpu=True) for name, s in subjects.items()}
        load = __import__("os").getloadavg()
        medians = {
            name: {
                "round_trip": statistics.median(s.round_trip),
                "busy_idle": statistics.median(s.busy_idle),
                "hooks": statistics.median(hooks[name]) if hooks[name] else 0.0,
                "hooks_p90": statistics.quantiles(hooks[name], n=10)[-1] if len(hooks[name]) > 10 else 0.0,
                "hooks_cpu": statistics.median(hooks_cpu[name]) if hooks_cpu[name] else 0.0,
                "cpu": s.cpu_seconds / args.cells,
            }
            for name, s in subjects.items()
        }
    finally:
        for s in subjects.values():
            s.kernel.shutdown()

    print(
        f"cells: {args.cells} x {args.code!r} per kernel (after {args.warmup} warm-up), interleaved; device "
        f"{args.device}"
    )
    print(f"helper history holds {n_records} records (keeps the last 2000)")
    print(f"helper's RSS reading after the cells: {rss_reading}")
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({__import__('os').cpu_count()} CPUs)")
    print()
    print(
        f"{'median per cell':<16} {'round trip':>12} {'busy->idle':>12} {'hooks wall':>12} {'hooks p90':>12} "
        f"{'hooks CPU':>12} {'kernel CPU':>12}"
    )
    for name, m in medians.items():
        print(
            f"{name:<16} {us(m['round_trip']):>12} {us(m['busy_idle']):>12} {us(m['hooks']):>12}"
            f" {us(m['hooks_p90']):>12} {us(m['hooks_cpu']):>12} {us(m['cpu']):>12}"
        )
    plain = medians["plain"]
    print()
    print(
        f"{'added vs plain':<16} {'round trip':>12} {'busy->idle':>12} {'hooks wall':>12} {'':>12} {'hooks CPU':>12} "
        f"{'kernel CPU':>12}"
    )
    added = {}
    for name in names[1:]:
        m = medians[name]
        added[name] = {k: m[k] - plain[k] for k in ("round_trip", "busy_idle", "hooks", "hooks_cpu", "cpu")}
        a = added[name]
        print(
            f"{name:<16} {us(a['round_trip']):>12} {us(a['busy_idle']):>12} {us(a['hooks']):>12}"
            f" {'':>12} {us(a['hooks_cpu']):>12} {us(a['cpu']):>12}"
        )
    print()
    ours = added["helper"]
    low, high = bootstrap_interval(subjects["helper"].busy_idle, subjects["plain"].busy_idle)
    verdict = "met" if ours["busy_idle"] <= 100e-6 else "NOT met"
    hooks_target_us = HOOKS_TARGET_US[args.device]
    hooks_verdict = "met" if medians["helper"]["hooks"] <= hooks_target_us * 1e-6 else "NOT met"
    print(
        f"target: added kernel-side time per cell <= 100 us (busy->idle, with vs without the helper): "
        f"{ours['busy_idle'] * 1e6:.1f} us (95% interval {low * 1e6:.0f} to {high * 1e6:.0f} us), {verdict}"
    )
    print(
        f"        the hooks' own median wall time: {medians['helper']['hooks'] * 1e6:.1f} us "
        f"(target <= {hooks_target_us:.0f} us), {hooks_verdict}"
    )
    cpu_verdict = "met" if ours["cpu"] <= CPU_TARGET_US * 1e-6 else "NOT met"
    print(
        f"        kernel CPU added per cell, the record's send included: {ours['cpu'] * 1e6:.1f} us "
        f"(target <= {CPU_TARGET_US:.0f} us), {cpu_verdict}"
    )
    if args.device == "standin-cuda":
        print("        (a stand-in torch: the helper's own code on the CUDA path, not a GPU figure)")
    by_thread = added_cpu_by_thread(thread_seconds, thread_names, args.cells)
    if by_thread:
        print("kernel CPU added per cell, by thread (schedstat; helper minus plain, threads matched by name):")
        print("  " + ", ".join(f"{name} {value:+.1f} us" for name, value in by_thread.items()))
    if "baseline" in subjects:
        baseline_by_thread = added_cpu_by_thread(thread_seconds, thread_names, args.cells, kernel="baseline")
        if baseline_by_thread:
            print("the same for the baseline helper (baseline minus plain):")
            print("  " + ", ".join(f"{name} {value:+.1f} us" for name, value in baseline_by_thread.items()))
    lone_figures: dict[str, float] = {}
    if lone_delays:
        lone_figures = {
            "lone_cell_record_delay_ms_median": round(statistics.median(lone_delays) * 1e3, 1),
            "lone_cell_record_delay_ms_max": round(max(lone_delays) * 1e3, 1),
        }
        lone_verdict = "met" if max(lone_delays) <= LONE_DELAY_TARGET_S else "NOT met"
        print(
            f"lone cells ({len(lone_delays)}): the record goes out "
            f"{lone_figures['lone_cell_record_delay_ms_median']:.1f} ms "
            f"after the idle status (median; max {lone_figures['lone_cell_record_delay_ms_max']:.1f} ms; "
            f"target <= {LONE_DELAY_TARGET_S * 1e3:.0f} ms), {lone_verdict}"
        )
    if baseline_lone_delays:
        lone_figures["baseline_lone_cell_record_delay_ms_median"] = round(
            statistics.median(baseline_lone_delays) * 1e3, 1
        )
        print(
            f"  the baseline's: {lone_figures['baseline_lone_cell_record_delay_ms_median']:.1f} ms "
            f"(median; max {max(baseline_lone_delays) * 1e3:.1f} ms)"
        )
    for name, times in lone_hooks.items():
        if times:
            key = "lone_cell_hooks_wall_us_median" if name == "helper" else f"{name}_lone_cell_hooks_wall_us_median"
            lone_figures[key] = round(statistics.median(times) * 1e6, 1)
            print(
                f"lone cells' hooks ({name}), wall time: {lone_figures[key]:.1f} us median "
                f"(cells in a row mostly join a round already handed over)"
            )
    print()
    burst_figures: dict[str, float] = {}
    if any(bursts.values()):
        print(
            f'"Run All" rounds: {args.burst} cells sent at once, {args.burst_rounds} rounds per kernel, '
            f"kernels in turn; medians"
        )
        print(f"{'':<16} {'wall':>12} {'CPU per cell':>14} {'messages':>10} {'records':>10}")
        for name, rounds in bursts.items():
            wall = statistics.median(r["wall"] for r in rounds)
            cpu = statistics.median(r["cpu"] for r in rounds) / args.burst
            messages = statistics.median(r["messages"] for r in rounds)
            records = statistics.median(r["records"] for r in rounds)
            burst_figures[f"{name}_burst_wall_ms_median"] = round(wall * 1e3, 1)
            burst_figures[f"{name}_burst_cpu_us_per_cell"] = round(cpu * 1e6, 1)
            burst_figures[f"{name}_burst_cell_messages"] = messages
            burst_figures[f"{name}_burst_records_sent"] = records
            print(f"{name:<16} {wall * 1e3:9.1f} ms {cpu * 1e6:11.1f} us {messages:>10.0f} {records:>10.0f}")
        added_cpu = burst_figures["helper_burst_cpu_us_per_cell"] - burst_figures["plain_burst_cpu_us_per_cell"]
        ratio = burst_figures["helper_burst_wall_ms_median"] / burst_figures["plain_burst_wall_ms_median"]
        burst_figures["helper_burst_cpu_added_us_per_cell"] = round(added_cpu, 1)
        burst_figures["helper_burst_wall_ratio"] = round(ratio, 3)
        print(
            f"helper vs plain: {added_cpu:+.1f} us CPU per cell, wall x{ratio:.3f}; "
            f"{burst_figures['helper_burst_records_sent']:.0f} records in "
            f"{burst_figures['helper_burst_cell_messages']:.0f} messages"
        )
        print()
    if parts:
        print_hook_parts(parts, part_calls, args.part_cells)
    figures = {
        **{f"hook_part_{part}_us_median": value for part, value in parts.items()},
        **{f"hook_part_{part}_calls_per_cell": value for part, value in part_calls.items()},
        **({"hook_part_rest_us": hooks_rest(parts, part_calls)} if parts else {}),
        "hooks_wall_us_median": round(medians["helper"]["hooks"] * 1e6, 1),
        "hooks_wall_us_p90": round(medians["helper"]["hooks_p90"] * 1e6, 1),
        "hooks_cpu_us_median": round(medians["helper"]["hooks_cpu"] * 1e6, 1),
        "busy_idle_added_us": round(ours["busy_idle"] * 1e6, 1),
        "busy_idle_added_us_95_interval": [round(low * 1e6), round(high * 1e6)],
        "kernel_cpu_added_us_per_cell": round(ours["cpu"] * 1e6, 1),
        "records_in_history": n_records,
        **{f"kernel_cpu_added_us_per_cell_{name}": round(value, 1) for name, value in by_thread.items()},
        **lone_figures,
        **burst_figures,
    }
    # Every figure of the two tables: kernel_column, and kernel_added_column.
    for name, m in medians.items():
        for key, column in COLUMN_KEYS.items():
            figures[f"{name}_{column}"] = round(m[key] * 1e6, 1)
    for name, a in added.items():
        for key, value in a.items():
            figures[f"{name}_added_{COLUMN_KEYS[key]}"] = round(value * 1e6, 1)
    if "ipyexperiments" in added:
        for key, label, ratio_key in (
            ("round_trip", "round trip", "round_trip"),
            ("busy_idle", "busy->idle", "busy_idle"),
            ("hooks", "hooks wall", "hooks_wall"),
            ("hooks_cpu", "hooks CPU", "hooks_cpu"),
            ("cpu", "kernel CPU", "kernel_cpu"),
        ):
            helper_added, theirs = added["helper"][key], added["ipyexperiments"][key]
            ratio = f"{theirs / helper_added:.1f}x" if helper_added > 0 else "n/a (ours <= 0)"
            print(f"overhead ratio ipyexperiments / jupyterlab-vram, {label:<11}: {ratio}")
            figures[f"ratio_ipyexperiments_to_helper_added_{ratio_key}"] = (
                round(theirs / helper_added, 2) if helper_added > 0 else None
            )
    # The kit sets only the hooks' target with CUDA; these two are the CPU path's, shown for comparison.
    cpu_path_only = " (the CPU path's target)" if args.device == "cuda" else ""
    write_json(
        args.json,
        "cell_hooks_overhead",
        args.device,
        {"cells": args.cells, "warmup": args.warmup, "code": args.code, "kernels": names},
        figures,
        [
            target("hooks' own wall time per cell, median", medians["helper"]["hooks"] * 1e6, hooks_target_us, "us"),
            target("kernel CPU added per cell, send included" + cpu_path_only, ours["cpu"] * 1e6, CPU_TARGET_US, "us"),
            target("busy->idle added per cell, median" + cpu_path_only, ours["busy_idle"] * 1e6, 100, "us"),
        ],
    )


if __name__ == "__main__":
    main()
