"""A cell's GPU load from the driver's sample buffer and energy counter, read after it ends."""

from __future__ import annotations

import types
from typing import Any

from fake_nvml_load import NVML_ERROR_NOT_SUPPORTED, FakeMigInstance, LoadAnswers
from fakes import FakeGpu, FakePynvml
from test_protocol_schema import schema_errors

from jupyterlab_vram_helper.cells.after_cell import AfterCellReadings
from jupyterlab_vram_helper.cells.cell_accounting import CellMemoryRecorder
from jupyterlab_vram_helper.cells.cell_load import CellLoadTracker
from jupyterlab_vram_helper.cells.cell_readings import PendingCell
from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.sampling.devices import Device
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.readers.nvml_load import FAST_S, LoadReader

GB = 1 << 30
BASE = 1_700_000_000.0  # the cell starts here (Unix seconds)
WATTS = 300.0
ENERGY_AT_BASE_MJ = 5_000_000


class Clocks:
    """The monotonic and wall clocks, moved together."""

    def __init__(self, wall: float) -> None:
        self.wall = wall

    def monotonic(self) -> float:
        return self.wall - BASE + 1000.0

    def now(self) -> float:
        return self.wall


def energy_at(wall: float) -> int:
    """The counter of a board that draws WATTS all along, in millijoules."""
    return int(ENERGY_AT_BASE_MJ + WATTS * 1000 * (wall - BASE))


def utilization_buffer(start: float, end: float, inside: int, outside: int = 0) -> list[tuple[int, int]]:
    """Samples every 1/6 s from start - 2 s to end + 1 s: ``inside`` between start and end, ``outside`` elsewhere."""
    samples = []
    t = start - 2.0
    while t < end + 1.0:
        samples.append((int(t * 1e6), inside if start < t <= end else outside))
        t += 1 / 6
    return samples


def setup(answers: LoadAnswers, clocks: Clocks, mig: bool = False) -> tuple[LoadReader, CellLoadTracker, list[Device]]:
    gpu = FakeGpu("GPU-aaaa", "NVIDIA H100 80GB HBM3", 80 * GB, 10 * GB, load=answers)
    fake = FakePynvml([gpu])
    nvml = NvmlReader(load=lambda: fake, pid_exists=lambda pid: True)
    nvml.start()
    reader = LoadReader(nvml, clock=clocks.monotonic, wall_clock=clocks.now)
    if mig:
        own = LoadAnswers(refused={"utilization_samples": NVML_ERROR_NOT_SUPPORTED, "energy": NVML_ERROR_NOT_SUPPORTED})
        fake.mig_instances.append(FakeMigInstance("MIG-1", gpu, own))
        devices = [Device(0, "MIG", 10 * GB, "MIG-1", None)]
    else:
        devices = [Device(0, gpu.name, gpu.total, gpu.uuid, d) for d in nvml.devices()]
    return reader, CellLoadTracker(reader, wall_clock=clocks.now), devices


def read_at(reader: LoadReader, devices: list[Device], answers: LoadAnswers, clocks: Clocks, wall: float) -> None:
    """A sampler tick at ``wall`` that reads the fast figures."""
    clocks.wall = wall
    answers.energy_mj = energy_at(wall)
    reader.read_all(devices)


def pending(started: float) -> PendingCell:
    return PendingCell(1, "c1", 1, started)


def finish(tracker: CellLoadTracker, answers: LoadAnswers, clocks: Clocks, cell: PendingCell, end: float) -> Any:
    clocks.wall = end + 0.04  # the sender's round, a moment after the cell
    answers.energy_mj = energy_at(clocks.wall)
    (entry,) = tracker.entries([(cell, end)])[id(cell)]
    assert schema_errors(entry, "CellGpuLoad") == []
    return entry


def test_a_300_ms_burst_gets_the_driver_samples_inside_it_and_its_energy() -> None:
    clocks = Clocks(BASE - 0.6)
    answers = LoadAnswers(utilization_samples=utilization_buffer(BASE, BASE + 0.3, inside=96))
    reader, tracker, devices = setup(answers, clocks)
    read_at(reader, devices, answers, clocks, BASE - 0.6)  # the last tick before the cell
    entry = finish(tracker, answers, clocks, pending(BASE), BASE + 0.3)
    assert entry["sm_mean_percent"] == 96.0 and entry["sm_max_percent"] == 96.0
    assert entry["utilization_samples"] == 2  # the driver samples every 1/6 s
    assert entry["coverage"] == "full" and entry["covered_s"] == 0.3
    assert entry["energy_method"] == "energy_counter"
    assert abs(entry["energy_joules"] - WATTS * 0.3) < 0.01
    assert entry["throttle_reasons"] == ["sw_power_cap"]
    assert entry["unavailable"] == {} and entry["scope"] == "device" and entry["parent_figures"] == []


def test_a_sleeping_cell_reads_idle() -> None:
    clocks = Clocks(BASE - 0.5)
    answers = LoadAnswers(utilization_samples=utilization_buffer(BASE, BASE + 3, inside=0, outside=0), throttle=0x1)
    reader, tracker, devices = setup(answers, clocks)
    read_at(reader, devices, answers, clocks, BASE - 0.5)
    cell = pending(BASE)
    for tick in (0.5, 1.5, 2.5):
        read_at(reader, devices, answers, clocks, BASE + tick)
        tracker.observe([cell])
    entry = finish(tracker, answers, clocks, cell, BASE + 3)
    assert entry["sm_mean_percent"] == 0.0 and entry["throttle_reasons"] == ["gpu_idle"]


def test_a_long_cell_beyond_the_buffer_says_so_and_fills_the_rest_from_the_helpers_readings() -> None:
    clocks = Clocks(BASE - 0.5)
    end = BASE + 40.0
    # The driver kept the last 10 s only (at 90 %); the helper saw 30 % before that.
    buffer = [(t, v) for t, v in utilization_buffer(BASE, end, inside=90) if t / 1e6 > end - 10]
    answers = LoadAnswers(utilization_samples=buffer, sm=30)
    reader, tracker, devices = setup(answers, clocks)
    read_at(reader, devices, answers, clocks, BASE - 0.5)
    cell = pending(BASE)
    for second in range(0, 30):
        read_at(reader, devices, answers, clocks, BASE + second + 0.5)
        tracker.observe([cell])
    entry = finish(tracker, answers, clocks, cell, end)
    assert entry["coverage"] == "partial"
    assert 9.5 < entry["covered_s"] <= 10.0
    assert 44 < entry["sm_mean_percent"] < 46  # 90 % for 10 s and 30 % for 30 s
    assert entry["sm_max_percent"] == 90.0
    # The energy counter's anchor before the start came from the tracker, the ring having moved on.
    assert abs(entry["energy_joules"] - WATTS * 40) < 0.5


def test_without_an_energy_counter_the_power_samples_are_integrated() -> None:
    clocks = Clocks(BASE - 0.5)
    power = [(int((BASE - 1 + k * 0.1) * 1e6), 250_000) for k in range(30)]
    answers = LoadAnswers(
        utilization_samples=utilization_buffer(BASE, BASE + 1, inside=50),
        power_samples=power,
        refused={"energy": NVML_ERROR_NOT_SUPPORTED},
    )
    reader, tracker, devices = setup(answers, clocks)
    read_at(reader, devices, answers, clocks, BASE - 0.5)
    entry = finish(tracker, answers, clocks, pending(BASE), BASE + 1.0)
    assert entry["energy_method"] == "power_samples"
    assert abs(entry["energy_joules"] - 250.0) < 0.01


def test_figures_the_gpu_does_not_give_are_null_with_their_reasons() -> None:
    clocks = Clocks(BASE - 0.5)
    refused = {
        name: NVML_ERROR_NOT_SUPPORTED for name in ("utilization_samples", "energy", "power_samples", "throttle")
    }
    answers = LoadAnswers(refused=refused)
    reader, tracker, devices = setup(answers, clocks)
    read_at(reader, devices, answers, clocks, BASE - 0.5)
    entry = finish(tracker, answers, clocks, pending(BASE), BASE + 1.0)
    assert entry["sm_mean_percent"] is None and entry["energy_joules"] is None and entry["throttle_reasons"] is None
    assert entry["coverage"] == "none" and entry["utilization_samples"] == 0
    assert entry["unavailable"] == {
        "sm_mean_percent": "not_supported",
        "energy_joules": "not_supported",
        "throttle_reasons": "not_supported",
    }


def test_a_mig_instance_takes_its_parents_samples_and_names_them() -> None:
    clocks = Clocks(BASE - 0.5)
    answers = LoadAnswers(utilization_samples=utilization_buffer(BASE, BASE + 1, inside=70))
    reader, tracker, devices = setup(answers, clocks, mig=True)
    read_at(reader, devices, answers, clocks, BASE - 0.5)
    entry = finish(tracker, answers, clocks, pending(BASE), BASE + 1.0)
    assert entry["scope"] == "mig_instance"
    assert entry["sm_mean_percent"] == 70.0
    assert {"sm_mean_percent", "energy_joules"} <= set(entry["parent_figures"])


def test_the_hooks_make_no_nvml_call_and_the_record_carries_the_load() -> None:
    clocks = Clocks(BASE - 0.5)
    answers = LoadAnswers(utilization_samples=utilization_buffer(BASE, BASE + 0.3, inside=88))
    reader, tracker, devices = setup(answers, clocks)
    read_at(reader, devices, answers, clocks, BASE - 0.5)
    perf = [10.0]
    sent: list = []
    recorder = CellMemoryRecorder(
        config=SamplerConfig,
        send=sent.append,
        torch_module=lambda: None,
        wall_clock=lambda: BASE,
        clock=lambda: perf[0],
        after_cell=AfterCellReadings(cell_load=tracker),
        call_soon=lambda call: None,  # the sender's round is run below
    )
    info = types.SimpleNamespace(cell_id="c1", store_history=True, raw_cell="x")
    calls_before = len(answers.calls)
    recorder.pre_run_cell(info)
    perf[0] += 0.3
    recorder.post_run_cell(
        types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None, error_before_exec=None)
    )
    assert len(answers.calls) == calls_before  # neither hook asked NVML anything
    clocks.wall = BASE + 0.34
    answers.energy_mj = energy_at(clocks.wall)
    (record,) = recorder.history()
    (entry,) = record["gpu_load"]
    assert entry["sm_mean_percent"] == 88.0 and entry["energy_joules"] is not None
    assert schema_errors(record, "CellMemoryRecord") == []
    assert FAST_S == 2.0  # the pace the energy interpolation's bound in docs/protocol.md assumes
