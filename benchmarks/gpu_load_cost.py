"""What reading GPU load costs the sampler thread, at 1 Hz and 10 Hz, beside what memory costs it.

Prints figures; it is not a test. Runs without a GPU: the helper's own
readers (NvmlReader for memory, LoadReader for load, CellLoadTracker for a
cell's figures) read a fake NVML whose every call costs the thread what a
real call costs it, on a simulated clock (a minute of ticks runs in seconds).

    .venv/bin/python benchmarks/gpu_load_cost.py [--seconds 60] [--json PATH]

The cost model, per call (busy CPU, as the driver's ioctl is):

- 105 us for every device query: the median of NVML's memory query per call
  in the sampler's tick on an H200 (docs/gpu-runs/2026-11-28-h200-f.md,
  ``tick_part_nvml_memory_us_per_call_median``: 105.2), the one NVML query
  timed on a GPU so far; the load queries are the same kind of driver call.
- 252 us for the per-process utilisation: the same run's process list
  (``tick_part_nvml_process_list_us_per_call_median``: 251.7), which walks
  every process under the driver's lock as the per-process samples do.
- PCIe throughput waits out a 20 ms window (NVML's documentation) without
  using the CPU: a sleep, counted as wall time, not CPU.

Targets: load at most +0.05 % of a core at 1 Hz and +0.3 % at 10 Hz.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(ROOT / "python_helper"))

from fake_nvml_load import LoadAnswers  # noqa: E402
from fakes import FakeGpu, FakePynvml  # noqa: E402

from jupyterlab_vram_helper.cells.cell_load import CellLoadTracker  # noqa: E402
from jupyterlab_vram_helper.cells.cell_readings import PendingCell  # noqa: E402
from jupyterlab_vram_helper.sampling.devices import Device  # noqa: E402
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader  # noqa: E402
from jupyterlab_vram_helper.sampling.readers.nvml_load import LoadReader  # noqa: E402

CALL_US = 105.0
PROCESS_CALL_US = 252.0
PCIE_WINDOW_S = 0.020
TARGETS = {1.0: 0.05, 10.0: 0.3}


def spin(microseconds: float) -> None:
    """Use the CPU for ``microseconds``, as a driver call does."""
    end = time.thread_time() + microseconds / 1e6
    while time.thread_time() < end:
        pass


class CostlyNvml(FakePynvml):
    """The unit tests' fake pynvml, each call costing what the cost model says (see the module docstring)."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if not name.startswith("nvmlDevice") or not callable(value):
            return value

        def costly(*args: Any, **kwargs: Any) -> Any:
            if name == "nvmlDeviceGetPcieThroughput":
                time.sleep(PCIE_WINDOW_S)
            else:
                spin(
                    PROCESS_CALL_US
                    if name in ("nvmlDeviceGetProcessUtilization", "nvmlDeviceGetComputeRunningProcesses")
                    else CALL_US
                )
            return value(*args, **kwargs)

        return costly


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000.0 + self.now


def setup() -> tuple[NvmlReader, LoadReader, list[Device], SimulatedClock, LoadAnswers]:
    answers = LoadAnswers()
    gpu = FakeGpu("GPU-aaaa", "NVIDIA H100 80GB HBM3", 80 << 30, 10 << 30, load=answers)
    fake = CostlyNvml([gpu])
    clock = SimulatedClock()
    nvml = NvmlReader(load=lambda: fake, pid_exists=lambda pid: True, clock=clock.monotonic)
    nvml.start()
    load = LoadReader(nvml, clock=clock.monotonic, wall_clock=clock.wall)
    devices = [Device(0, d.name, d.total_bytes, d.uuid, d) for d in nvml.devices()]
    return nvml, load, devices, clock, answers


def share(hz: float, seconds: float) -> dict[str, float]:
    """CPU per simulated second of the memory reading and of the load reading, as % of a core."""
    nvml, load, devices, clock, _ = setup()
    load.read_all(devices)  # the first reading reads everything: not the steady state
    ticks = int(seconds * hz)
    memory_cpu = load_cpu = 0.0
    for _ in range(ticks):
        clock.now += 1.0 / hz
        t0 = time.thread_time()
        nvml.read(devices[0].nvml, own_state=(True, 1, None))  # type: ignore[arg-type]
        t1 = time.thread_time()
        load.read_all(devices)
        t2 = time.thread_time()
        memory_cpu += t1 - t0
        load_cpu += t2 - t1
    return {"memory_percent": 100 * memory_cpu / seconds, "load_percent": 100 * load_cpu / seconds}


def cell_cost(cells: int = 50) -> float:
    """Microseconds of the sender thread per round of one ended cell (one device)."""
    _, load, devices, clock, answers = setup()
    tracker = CellLoadTracker(load, wall_clock=clock.wall)
    load.read_all(devices)
    answers.utilization_samples = [(int((clock.wall() - 2 + k / 6) * 1e6), 90) for k in range(12)]
    spent = 0.0
    for _ in range(cells):
        cell = PendingCell(1, "c", 1, clock.wall() - 0.5)
        t0 = time.thread_time()
        tracker.entries([(cell, clock.wall())])
        spent += time.thread_time() - t0
    return 1e6 * spent / cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="simulated seconds per rate")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    figures: dict[str, Any] = {"cost_model_us": {"call": CALL_US, "process_utilization": PROCESS_CALL_US}}
    print(f"cost model: {CALL_US:.0f} us a call, {PROCESS_CALL_US:.0f} us the per-process utilisation, PCIe 20 ms wall")
    print(f"{'rate':>6} {'memory (% core)':>16} {'load (% core)':>14} {'target':>8}  verdict")
    for hz, limit in TARGETS.items():
        result = share(hz, args.seconds)
        verdict = "met" if result["load_percent"] <= limit else "MISSED"
        print(
            f"{hz:>4.0f}Hz {result['memory_percent']:>16.4f} {result['load_percent']:>14.4f} {limit:>8.2f}  {verdict}"
        )
        figures[f"{hz:.0f}hz"] = {**result, "target_percent": limit, "met": verdict == "met"}
    per_cell = cell_cost()
    print(f"a cell's GPU load, on the sender thread after it: {per_cell:.0f} us per round (one device)")
    figures["cell_round_us"] = per_cell
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
