"""What the kernel helper costs: CPU, bytes on the wire, and latency.

Prints figures; it is not a test. Everything is measured side by side in one
run: three idle kernels at once (no helper, helper at 1 Hz, helper at 10 Hz),
so machine noise hits all three alike.

    .venv/bin/python benchmarks/sampler_overhead.py [--seconds 60] [--slices 6] [--tries 5]
        [--parts-seconds 10] [--device cpu|cuda|standin-cuda] [--baseline-bootstrap PATH] [--json PATH]

``--device standin-cuda`` gives every kernel a stand-in for torch with CUDA up
on two devices (_common.STANDIN_CUDA): the sampler's own code on the CUDA path,
without torch's cost or NVML; its verdicts are not GPU figures.

With ``--device cuda`` every kernel (the one without the helper too) has
imported torch, created its CUDA context and holds an allocation, so each tick
reads NVML and the allocator; the latency cell then allocates on the GPU and
waits for the sample whose allocator figure shows it. Targets: the helper's
share at most 0.1 % of a core at 1 Hz and 0.5 % at 10 Hz.

- CPU: each kernel's run time over the window, as % of one core, and the
  helper's share (minus the no-helper kernel). On Linux it is the sum of the
  kernel's threads' ``/proc/<pid>/task/*/schedstat`` times (nanoseconds), so
  the share is not rounded to clock ticks (psutil's user+system time counts
  10 ms ticks: one tick over a 60 s window is 0.017 %, as much as the share's
  distance from a target can be); the sampler thread's own time is also shown
  per tick, and the share per ``--slices`` part of the window says how much
  it moves. Elsewhere psutil's user+system time.
- ``--baseline-bootstrap PATH`` adds two kernels with the helper bootstrap
  code in PATH (``node scripts/bundle-helper.mjs --stdout`` run in another
  checkout), at 1 Hz and 10 Hz: a change and what it replaces, side by side.
- Bytes: the JSON size of real `sample` messages from the kernels (no device
  in them on cpu, the machine's GPUs in cuda mode); the per-device size is also
  measured on the helper's own `make_sample` with one fully populated fake GPU
  entry (torch + NVML figures of an 80 GB card), so it is known without a GPU.
- Latency: a cell allocates 200 MB (host memory on cpu, torch.empty on cuda:0
  in cuda mode) and records time.time() right after; the client notes when the
  first sample showing it (RSS, or torch's allocated bytes) arrives. Median
  over tries, compared with interval + 200 ms.
- Parts of a tick (``--parts-seconds``, after the window, in the 10 Hz helper kernel, and
  the 10 Hz baseline kernel beside it if there is one):
  thread-CPU timers around each part of its ticks (host, torch's stats call,
  NVML's memory query and process list, the comparison, the send), mean per
  tick and median per call, and what the loop's wait and wake-up take outside
  the tick (_sampler_parts.py). On a GPU this says what a tick's CPU is spent on.

``--json PATH`` also writes these figures and the targets' verdicts as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python_helper"))

from _common import (  # noqa: E402
    DEVICE_SETUP,
    THREAD_NAMES,
    add_common_arguments,
    cpu_between,
    cpu_reading,
    require_device,
    target,
    thread_cpu_seconds,
    write_json,
)
from _sampler_parts import (  # noqa: E402
    TICK_PART_TIMERS,
    TICK_PART_TIMES,
    TICK_PARTS_MISSING,
    TICKS_TIMED,
    json_figures,
    print_summaries,
    summarize,
)
from kernel_harness import Kernel, attach_helper, bootstrap_code  # noqa: E402

from jupyterlab_vram_helper.sampling.sampler import THREAD_NAME as SAMPLER_THREAD  # noqa: E402

MB = 1 << 20


def kernel_pid(k: Kernel) -> int:
    return k.eval("__import__('os').getpid()")


def json_size(data) -> int:
    # ipykernel serialises with json.dumps defaults (", " and ": " separators)
    return len(json.dumps(data).encode("utf-8"))


def made_up_figures() -> tuple:
    """(figures without a GPU, one GPU's entry): a sample's figures as the helper
    reads them, with an 80 GB card fully populated (tests/unit checks that every
    field the helper sends is here, so that the GPU kit never meets a stale one)."""

    host = {
        "rss_bytes": 3_512_000_000,
        "total_bytes": 270_000_000_000,
        "available_bytes": 210_000_000_000,
        "container": None,
        "swapped_bytes": 0,
        "swap_total_bytes": 0,
        "swap_free_bytes": 0,
        "oom_kill_count": 0,
    }
    base = {
        "host": host,
        "torch": {"imported": True, "cuda_initialized": True},
        "tensorflow": {"imported": False, "gpus_initialized": False},
        "gpus": [],
        "hidden_gpus": None,
        # A kernel without processes of its own, the common case.
        "processes": {"method": "task_children", "read_at": 1_732_200_000.0, "processes": [], "totals": None},
    }
    gpu = {
        "index": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "total_bytes": 85_031_714_816,
        "torch": {
            "allocated_bytes": 41_943_040_000,
            "reserved_bytes": 45_097_156_608,
            "peak_allocated_bytes": 43_000_000_000,
            "active_bytes": 41_943_040_000,
            "inactive_split_bytes": 123_456_789,
            "num_ooms": 0,
            "num_alloc_retries": 0,
        },
        "nvml": {
            "used_bytes": 46_000_000_000,
            "total_bytes": 85_031_714_816,
            "free_bytes": 38_500_000_000,
            "process_used_bytes": 45_600_000_000,
            "processes": [{"pid": 123456, "used_bytes": 45_600_000_000, "this_process": True}],
        },
        "tensorflow": None,
        "load": {
            "read_at": 1732200000.125,
            "scope": "device",
            "parent_figures": [],
            "sm_percent": 97.0,
            "memory_bandwidth_percent": 61.0,
            "power_watts": 612.345,
            "power_limit_watts": 700.0,
            "temperature_c": 71.0,
            "sm_clock_mhz": 1755,
            "memory_clock_mhz": 2619,
            "throttle_reasons": ["sw_power_cap"],
            "pcie_tx_kb_per_s": 123456,
            "pcie_rx_kb_per_s": 654321,
            "processes": [
                {
                    "pid": 123456,
                    "sm_percent": 96.0,
                    "memory_percent": 60.0,
                    "encoder_percent": 0.0,
                    "decoder_percent": 0.0,
                    "this_process": True,
                }
            ],
            "unavailable": {},
        },
    }
    return base, gpu


def per_device_bytes() -> tuple:
    from jupyterlab_vram_helper.sampling.sample import make_sample

    base, gpu = made_up_figures()
    empty = json_size(make_sample(base, 123456, 1732200000.25, "change"))
    one = json_size(make_sample(dict(base, gpus=[gpu]), 123456, 1732200000.25, "change"))
    two = json_size(make_sample(dict(base, gpus=[gpu, dict(gpu, index=1)]), 123456, 1732200000.25, "change"))
    return empty, one - empty, two - one


def pump_all(kernels, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for k in kernels:
            k.pump(0.05)


# The figure a 200 MB allocation moves, per device mode.
ALLOCATE = {
    "cpu": "__vram_x = b'\\x01' * 200_000_000",
    "cuda": "__vram_x = torch.empty(200_000_000, dtype=torch.uint8, device='cuda:0')",
}


def allocated(sample: dict, device: str) -> int:
    if device == "cpu":
        return sample["host"]["rss_bytes"]
    return (sample["gpus"][0]["torch"] or {}).get("allocated_bytes") or 0


def latency(k: Kernel, comm_id: str, tries: int, device: str) -> list:
    out = []
    for _ in range(tries):
        k.execute("import gc; gc.collect()", store_history=False)
        pump_all([k], 1.5)  # settle; let the baseline catch up
        base = allocated(k.comm_data(comm_id, "sample")[-1], device)
        start = len(k.comm_data(comm_id))
        reply = k.execute(
            ALLOCATE[device] + "; __vram_t = __import__('time').time()",
            store_history=False,
            user_expressions={"t": "__vram_t"},
        )
        t_alloc = float(reply["user_expressions"]["t"]["data"]["text/plain"])

        def shows_it(d: dict, base: int = base) -> bool:  # this try's baseline
            return d.get("type") == "sample" and allocated(d, device) > base + 150 * MB

        k.wait_for(comm_id, shows_it, timeout=30, start=start)
        msg = next(m for m in k.comm_messages(comm_id)[start:] if shows_it(m["content"]["data"]))
        out.append(k.arrival[msg["header"]["msg_id"]] - t_alloc)
        k.execute("del __vram_x, __vram_t", store_history=False)
    return out


# Per kernel and slice of the window: (its CPU seconds, its sampler thread's; None where not known).
SliceCpu = dict[str, list[tuple[float, float | None]]]


def measure_cpu(
    pids: dict[str, int], samplers: dict[str, int | None], seconds: float, slices: int, kernels: list[Kernel]
) -> tuple[list[float], SliceCpu]:
    """``seconds`` of idle kernels in ``slices`` equal parts: each part's wall time, and each kernel's CPU in it."""
    parts: SliceCpu = {name: [] for name in pids}
    part_walls: list[float] = []
    for _ in range(slices):
        before = {name: cpu_reading(pid) for name, pid in pids.items()}
        t0 = time.monotonic()
        pump_all(kernels, seconds / slices)
        part_walls.append(time.monotonic() - t0)
        for name, pid in pids.items():
            after = cpu_reading(pid)
            tid = samplers[name]
            sampler = None if tid not in before[name] or tid not in after else after[tid] - before[name][tid]
            parts[name].append((cpu_between(before[name], after), sampler))
    return part_walls, parts


def tick_parts(
    names: list[str], kernels: dict[str, Kernel], pids: dict[str, int], samplers: dict[str, int | None], seconds: float
) -> dict[str, float]:
    """Time each part of the ticks of the kernels ``names`` (_sampler_parts) over the same ``seconds``;
    prints them side by side, returns JSON figures (the baseline's prefixed ``baseline_``)."""
    timed = []
    for name in names:
        reply = kernels[name].execute(TICK_PART_TIMERS, silent=True, store_history=False)
        if reply["status"] != "ok":
            print(f"  {name}: the part timers cannot be installed ({reply.get('ename')}: {reply.get('evalue')})")
            continue
        timed.append(name)
        missing = kernels[name].eval(TICK_PARTS_MISSING)
        if missing:
            print(f"  {name}: this helper has no {', '.join(missing)} to time")
    # The thread's CPU per tick: schedstat and the count of timed ticks read together, at both ends.
    before = {name: (thread_cpu_seconds(pids[name]), kernels[name].eval(TICKS_TIMED)) for name in timed}
    pump_all(list(kernels.values()), seconds)
    after = {name: (thread_cpu_seconds(pids[name]), kernels[name].eval(TICKS_TIMED)) for name in timed}
    measured: dict[str, tuple[dict[str, dict[str, float]], float | None]] = {}
    for name in timed:
        summary = summarize(kernels[name].eval(TICK_PART_TIMES))
        (cpu0, ticks0), (cpu1, ticks1), tid = before[name], after[name], samplers[name]
        known = ticks1 > ticks0 and tid in cpu0 and tid in cpu1
        measured[name] = (summary, (cpu1[tid] - cpu0[tid]) / (ticks1 - ticks0) * 1e6 if known else None)
        if not summary:
            print(f"  {name}: no tick was timed")
    print(
        f"== the 10 Hz ticks part by part over {seconds:.0f} s (the sampler thread's CPU; mean per tick, "
        "median per call; timers on) =="
    )
    if any(summary for summary, _ in measured.values()):
        print_summaries(measured)
    figures: dict[str, float] = {}
    for name, (summary, thread_us) in measured.items():
        figures.update(json_figures(summary, thread_us, "baseline_" if name.startswith("baseline") else ""))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU measurement window (default 60)")
    parser.add_argument(
        "--slices", type=int, default=6, help="parts of the window whose shares show the spread (default 6)"
    )
    parser.add_argument("--tries", type=int, default=5, help="latency tries per interval (default 5)")
    parser.add_argument(
        "--parts-seconds",
        type=float,
        default=10.0,
        help="then time each part of the 10 Hz helper's ticks this long (0: not at all; default 10)",
    )
    parser.add_argument(
        "--baseline-bootstrap",
        type=Path,
        default=None,
        metavar="PATH",
        help="also run this helper bootstrap code at 1 and 10 Hz, side by side",
    )
    add_common_arguments(parser, standin=True)
    args = parser.parse_args()
    require_device(args.device)

    code = bootstrap_code()
    intervals = {"helper 1 Hz": 1.0, "helper 10 Hz": 0.1}
    bootstraps = {"helper 1 Hz": code, "helper 10 Hz": code}
    if args.baseline_bootstrap is not None:
        baseline = args.baseline_bootstrap.read_text(encoding="utf-8")
        intervals.update({"baseline 1 Hz": 1.0, "baseline 10 Hz": 0.1})
        bootstraps.update({"baseline 1 Hz": baseline, "baseline 10 Hz": baseline})
    names = ["no helper", *intervals]
    kernels = [Kernel() for _ in names]
    try:
        if DEVICE_SETUP[args.device] is not None:
            for k in kernels:
                reply = k.execute(DEVICE_SETUP[args.device], timeout=300)
                assert reply["status"] == "ok", reply
        comms = [None]
        for k, name in zip(kernels[1:], names[1:], strict=True):
            comms.append(attach_helper(k, bootstraps[name], {"interval_s": intervals[name]}))
        pids = {name: kernel_pid(k) for name, k in zip(names, kernels, strict=True)}
        pump_all(kernels, 2.0)  # let start-up work finish
        samplers: dict[str, int | None] = {}
        for name, k in zip(names, kernels, strict=True):
            by_name = {thread: tid for tid, thread in k.eval(THREAD_NAMES).items()}
            samplers[name] = by_name.get(SAMPLER_THREAD)
        counts = [len(k.comm_data(c, "sample")) if c else 0 for k, c in zip(kernels, comms, strict=True)]
        walls, measured = measure_cpu(pids, samplers, args.seconds, max(1, args.slices), kernels)
        wall = sum(walls)
        schedstat = bool(thread_cpu_seconds(pids["no helper"]))

        def percent(name: str, part: int | None = None) -> float:
            rows = measured[name] if part is None else [measured[name][part]]
            seconds = walls if part is None else [walls[part]]
            return sum(row[0] for row in rows) / sum(seconds) * 100

        method = (
            "each thread's run time from schedstat, in ns" if schedstat else "user+system time in clock ticks (psutil)"
        )
        print(f"== CPU over {wall:.1f} s of an idle kernel (% of one core; {method}) ==")
        base_pct = percent("no helper")
        shares, percents, sent_counts, spreads, per_tick = {}, {}, {}, {}, {}
        for name, k, c, n0 in zip(names, kernels, comms, counts, strict=True):
            pct = percent(name)
            percents[name] = pct
            if c is None:
                print(f"  {name:<15} {pct:7.3f} %")
                continue
            shares[name] = pct - base_pct
            slice_shares = [percent(name, i) - percent("no helper", i) for i in range(len(walls))]
            spreads[name] = (min(slice_shares), max(slice_shares))
            sent_counts[name] = len(k.comm_data(c, "sample")) - n0
            sampler = [row[1] for row in measured[name]]
            ticks = wall / intervals[name]
            line = (
                f"  {name:<15} {pct:7.3f} %   helper share {shares[name]:+.3f} %"
                f" (slices of {wall / len(walls):.0f} s: {spreads[name][0]:+.3f} to {spreads[name][1]:+.3f})"
            )
            known = [value for value in sampler if value is not None]
            if len(known) == len(sampler):
                per_tick[name] = sum(known) / ticks * 1e6
                line += f"   sampler thread {sum(known) / wall * 100:.3f} % = {per_tick[name]:.1f} us per tick"
            print(line + f"   samples sent {sent_counts[name]}")
        if not schedstat:
            # The kernel counts CPU time in clock ticks; a short window can only show whole ticks.
            print(
                "  (resolution: one clock tick of CPU over this window is "
                f"{100 / os.sysconf('SC_CLK_TCK') / wall:.3f} % of a core)"
            )
        for rate in ("1 Hz", "10 Hz"):
            ours, theirs = f"helper {rate}", f"baseline {rate}"
            if theirs in shares:
                ratio = (
                    (
                        f"; sampler thread per tick {per_tick[ours]:.1f} vs {per_tick[theirs]:.1f} us, "
                        f"ratio {per_tick[ours] / per_tick[theirs]:.3f}"
                    )
                    if ours in per_tick and theirs in per_tick
                    else ""
                )
                print(
                    f"  side by side at {rate}: share {shares[ours]:+.3f} % (this helper) vs {shares[theirs]:+.3f} % "
                    f"(baseline){ratio}"
                )

        # Before the latency tries, which leave an allocation's cache in one 10 Hz kernel only.
        ten_hz = [name for name in ("helper 10 Hz", "baseline 10 Hz") if name in intervals]
        parts_figures = (
            tick_parts(ten_hz, dict(zip(names, kernels, strict=True)), pids, samplers, args.parts_seconds)
            if args.parts_seconds > 0
            else {}
        )
        print("== bytes per sample (JSON of the comm data) ==")
        samples = [d for k, c in zip(kernels[1:3], comms[1:3], strict=True) for d in k.comm_data(c, "sample")]
        sizes = [json_size(d) for d in samples]
        gpus_in_samples = max(len(d.get("gpus") or []) for d in samples)
        print(
            f"  real samples from these kernels ({gpus_in_samples} GPUs): "
            f"median {statistics.median(sizes):.0f} B, max {max(sizes)} B"
        )
        empty, dev1, dev2 = per_device_bytes()
        print(
            f"  fake-GPU path (make_sample, torch+NVML figures): 0 GPUs {empty} B, +{dev1} B for the 1st device, "
            f"+{dev2} B per further device"
        )
        hello = [json_size(d) for d in kernels[1].comm_data(comms[1], "hello")]
        print(f"  hello: {hello[0]} B")

        print(
            f"== latency: allocation in a cell ({'cuda' if args.device == 'cuda' else 'host memory'}) -> first sample "
            f"showing it at the client ({args.tries} tries) =="
        )
        latency_ms = {}
        for name, k, c in zip(names[1:3], kernels[1:3], comms[1:3], strict=True):
            interval = intervals[name]
            values = latency(k, c, args.tries, "cuda" if args.device == "cuda" else "cpu")
            latency_ms[name] = [v * 1000 for v in values]
            med = statistics.median(values)
            bound = interval + 0.2
            verdict = "within" if med <= bound else "OVER"
            print(
                f"  {name:<13} median {med * 1000:7.1f} ms  (min {min(values) * 1000:.1f}, max "
                f"{max(values) * 1000:.1f})"
                f"  bound interval+200 ms = {bound * 1000:.0f} ms: {verdict}"
            )
        print(
            f"== targets: helper share <= 0.1 % of a core at 1 Hz: {shares['helper 1 Hz']:+.3f} %; "
            f"<= 0.5 % at 10 Hz: {shares['helper 10 Hz']:+.3f} % =="
        )
        if args.device == "standin-cuda":
            print("   (a stand-in torch: the helper's own code on the CUDA path, not a GPU figure)")
        figures = {
            "window_seconds": round(wall, 2),
            "cpu_method": "schedstat" if schedstat else "clock ticks",
            "cpu_percent_no_helper": round(base_pct, 4),
            "cpu_percent_1hz": round(percents["helper 1 Hz"], 4),
            "cpu_percent_10hz": round(percents["helper 10 Hz"], 4),
            "cpu_share_1hz_percent": round(shares["helper 1 Hz"], 4),
            "cpu_share_10hz_percent": round(shares["helper 10 Hz"], 4),
            "samples_sent_1hz_count": sent_counts["helper 1 Hz"],
            "samples_sent_10hz_count": sent_counts["helper 10 Hz"],
            "sample_gpus_count": gpus_in_samples,
            "sample_bytes_median": statistics.median(sizes),
            "sample_bytes_max": max(sizes),
            "fake_sample_no_gpu_bytes": empty,
            "fake_sample_first_device_bytes": dev1,
            "fake_sample_further_device_bytes": dev2,
            "hello_bytes": hello[0],
            **parts_figures,
        }
        for name, key in (
            ("helper 1 Hz", "1hz"),
            ("helper 10 Hz", "10hz"),
            ("baseline 1 Hz", "baseline_1hz"),
            ("baseline 10 Hz", "baseline_10hz"),
        ):
            if name not in shares:
                continue
            if key.startswith("baseline"):
                figures[f"cpu_share_{key}_percent"] = round(shares[name], 4)
            figures[f"cpu_share_{key}_slice_min_percent"] = round(spreads[name][0], 4)
            figures[f"cpu_share_{key}_slice_max_percent"] = round(spreads[name][1], 4)
            if name in per_tick:
                figures[f"sampler_thread_{key}_us_per_tick"] = round(per_tick[name], 1)
        for name, key in (("helper 1 Hz", "1hz"), ("helper 10 Hz", "10hz")):
            values = latency_ms[name]
            figures[f"latency_{key}_ms_median"] = round(statistics.median(values), 1)
            figures[f"latency_{key}_ms_min"] = round(min(values), 1)
            figures[f"latency_{key}_ms_max"] = round(max(values), 1)
        write_json(
            args.json,
            "sampler_overhead",
            args.device,
            {
                "seconds": args.seconds,
                "slices": args.slices,
                "tries": args.tries,
                "parts_seconds": args.parts_seconds,
                "baseline_bootstrap": str(args.baseline_bootstrap) if args.baseline_bootstrap else None,
            },
            figures,
            [
                target("helper CPU share at 1 Hz", shares["helper 1 Hz"], 0.1, "% of a core"),
                target("helper CPU share at 10 Hz", shares["helper 10 Hz"], 0.5, "% of a core"),
                target("latency at 1 Hz", statistics.median(latency_ms["helper 1 Hz"]), 1200, "ms"),
                target("latency at 10 Hz", statistics.median(latency_ms["helper 10 Hz"]), 300, "ms"),
            ],
        )
    finally:
        for k in kernels:
            k.shutdown()


if __name__ == "__main__":
    main()
