"""The GPU load reader against NVML's recorded answers: figures, pacing, refusals, MIG instances, processes."""

from __future__ import annotations

import os

from fake_nvml_load import NVML_ERROR_NO_PERMISSION, NVML_ERROR_NOT_SUPPORTED, FakeMigInstance, LoadAnswers
from fakes import FakeGpu, FakePynvml

from jupyterlab_vram_helper.sampling.devices import Device
from jupyterlab_vram_helper.sampling.readers import nvml_load
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.readers.nvml_codes import throttle_names
from jupyterlab_vram_helper.sampling.readers.nvml_load import LoadReader, load_moved
from jupyterlab_vram_helper.sampling.sample import SampleSource

GB = 1 << 30


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(gpus: list, wall: float = 1_700_000_000.0) -> tuple[LoadReader, FakePynvml, Clock]:
    fake = FakePynvml(gpus)
    nvml = NvmlReader(load=lambda: fake, pid_exists=lambda pid: True)
    nvml.start()
    clock = Clock()
    reader = LoadReader(nvml, clock=clock, wall_clock=lambda: wall + clock.now)
    return reader, fake, clock


def devices_of(reader: LoadReader) -> list[Device]:
    nvml = reader._nvml
    return [Device(i, d.name, d.total_bytes, d.uuid, d) for i, d in enumerate(nvml.devices())]


def h100(load: LoadAnswers | None = None) -> FakeGpu:
    return FakeGpu("GPU-aaaa", "NVIDIA H100 80GB HBM3", 80 * GB, 10 * GB, load=load)


def test_every_figure_read_and_named() -> None:
    answers = LoadAnswers(
        process_samples=[(os.getpid(), 1_700_001_000_000_000, 95, 60), (4242, 1_700_001_000_000_000, 3, 1)]
    )
    reader, _, _ = make([h100(answers)])
    (load,) = reader.read_all(devices_of(reader))
    assert load is not None
    assert load["scope"] == "device" and load["parent_figures"] == []
    assert load["sm_percent"] == 97.0 and load["memory_bandwidth_percent"] == 61.0
    assert load["power_watts"] == 612.345 and load["power_limit_watts"] == 700.0
    assert load["temperature_c"] == 71.0
    assert load["sm_clock_mhz"] == 1755 and load["memory_clock_mhz"] == 2619
    assert load["throttle_reasons"] == ["sw_power_cap"]
    # PCIe blocks the sampler for 20 ms a counter: not in the first reading.
    assert load["pcie_tx_kb_per_s"] is None and load["unavailable"] == {
        "pcie_tx_kb_per_s": "not_read_yet",
        "pcie_rx_kb_per_s": "not_read_yet",
    }
    processes = load["processes"]
    assert processes is not None
    assert [(p["pid"], p["sm_percent"], p["this_process"]) for p in processes] == [
        (os.getpid(), 95.0, True),
        (4242, 3.0, False),
    ]


def test_each_group_is_read_at_its_own_pace_and_the_same_dict_comes_back_between() -> None:
    answers = LoadAnswers()
    reader, _, clock = make([h100(answers)])
    devices = devices_of(reader)
    first = reader.read_all(devices)[0]
    answers.calls.clear()
    clock.now += 0.1
    assert reader.read_all(devices)[0] is first  # nothing due: no call, same object
    assert answers.calls == []
    clock.now += nvml_load.FAST_S
    second = reader.read_all(devices)[0]
    assert sorted(answers.calls) == ["energy", "power", "throttle", "utilization"]
    assert second is not first
    answers.calls.clear()
    clock.now += nvml_load.PCIE_S
    third = reader.read_all(devices)[0]
    assert {"pcie_tx", "pcie_rx", "temperature", "sm_clock", "memory_clock", "process_utilization"} <= set(
        answers.calls
    )
    assert third is not None and third["pcie_tx_kb_per_s"] == 123_456 and third["unavailable"] == {}


def test_a_figure_the_gpu_does_not_give_is_null_with_its_reason_and_not_asked_again() -> None:
    answers = LoadAnswers(
        refused={
            "pcie_tx": NVML_ERROR_NOT_SUPPORTED,
            "pcie_rx": NVML_ERROR_NOT_SUPPORTED,
            "power_limit": NVML_ERROR_NO_PERMISSION,
        }
    )
    reader, _, clock = make([h100(answers)])
    devices = devices_of(reader)
    reader.read_all(devices)
    clock.now += nvml_load.LIMIT_S + 1
    load = reader.read_all(devices)[0]
    assert load is not None
    assert load["pcie_tx_kb_per_s"] is None and load["power_limit_watts"] is None
    assert load["unavailable"] == {
        "pcie_tx_kb_per_s": "not_supported",
        "pcie_rx_kb_per_s": "not_supported",
        "power_limit_watts": "no_permission",
    }
    assert load["power_watts"] == 612.345  # the rest still read
    answers.calls.clear()
    clock.now += nvml_load.LIMIT_S + 1
    reader.read_all(devices)
    assert "pcie_tx" not in answers.calls and "power_limit" not in answers.calls


def test_a_gpu_without_any_load_query_reads_all_null_with_reasons() -> None:
    reader, _, _ = make([h100(None)])
    load = reader.read_all(devices_of(reader))[0]
    assert load is not None and load["sm_percent"] is None and load["processes"] is None
    assert load["unavailable"]["sm_percent"] == "not_supported"
    assert load["unavailable"]["processes"] == "not_supported"


def test_no_nvml_gives_no_load() -> None:
    nvml = NvmlReader(load=lambda: None)
    reader = LoadReader(nvml)
    assert reader.read_all([Device(0, "x", None, None, None)]) == [None]


def test_a_mig_instance_reads_its_own_figures_and_its_parents_where_it_has_none() -> None:
    parent_answers = LoadAnswers(sm=80)
    parent = h100(parent_answers)
    reader, fake, _ = make([parent])
    # The instance answers utilisation (its own slice), not power or temperature.
    instance_answers = LoadAnswers(
        sm=42,
        refused={
            name: NVML_ERROR_NOT_SUPPORTED
            for name in (
                "power",
                "power_limit",
                "temperature",
                "sm_clock",
                "memory_clock",
                "throttle",
                "energy",
                "process_utilization",
            )
        },
    )
    fake.mig_instances.append(FakeMigInstance("MIG-1234", parent, instance_answers))
    load = reader.read_all([Device(0, "MIG 1g.10gb", 10 * GB, "MIG-1234", None)])[0]
    assert load is not None and load["scope"] == "mig_instance"
    assert load["sm_percent"] == 42.0  # the instance's own
    assert load["power_watts"] == 612.345 and load["temperature_c"] == 71.0  # the parent's
    assert "sm_percent" not in load["parent_figures"]
    assert {"power_watts", "temperature_c", "throttle_reasons", "processes"} <= set(load["parent_figures"])


def test_a_mig_uuid_nvml_cannot_resolve_has_no_load() -> None:
    reader, _, _ = make([h100(LoadAnswers())])
    assert reader.read_all([Device(0, "MIG", None, "MIG-gone", None)]) == [None]


def test_throttle_bits_are_named_and_unknown_bits_kept() -> None:
    assert throttle_names(0) == []
    assert throttle_names(0x4 | 0x40) == ["sw_power_cap", "hw_thermal_slowdown"]
    assert throttle_names(0x1 | 0x1000) == ["gpu_idle", "bit_12"]


def test_load_alone_sends_a_sample_on_utilisation_or_throttling_not_on_watts() -> None:
    base = {"sm_percent": 50.0, "memory_bandwidth_percent": 20.0, "power_watts": 300.0, "throttle_reasons": []}
    assert not load_moved(base, dict(base, power_watts=420.0, sm_percent=55.0))
    assert load_moved(base, dict(base, sm_percent=61.0))
    assert load_moved(base, dict(base, throttle_reasons=["sw_power_cap"]))
    assert load_moved(base, dict(base, sm_percent=None))
    assert load_moved(None, base)


def test_samples_carry_the_load_of_each_gpu() -> None:
    fake = FakePynvml([h100(LoadAnswers())])
    source = SampleSource(nvml=NvmlReader(load=lambda: fake, pid_exists=lambda pid: True), environ={})
    source.nvml.start()
    (gpu,) = source.read()["gpus"]
    assert gpu["load"] is not None and gpu["load"]["sm_percent"] == 97.0
