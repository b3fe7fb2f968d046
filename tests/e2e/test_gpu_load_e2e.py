"""GPU load end to end: a real kernel whose ``pynvml`` is the stand-in card of tests/fake_nvml.

The helper is bootstrapped as the frontend does it; the samples carry the
card's load and each cell's record its utilisation and energy, read after
the cell from the stand-in driver's buffers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import CellSession, Kernel, attach_helper

pytestmark = pytest.mark.kernel

FAKE_NVML = str(Path(__file__).resolve().parent.parent / "fake_nvml")
SM_PERCENT = 87  # the stand-in card's (tests/fake_nvml/pynvml.py)
WATTS = 300.0


@pytest.fixture(scope="module")
def session(bootstrap: str) -> Iterator[CellSession]:
    path = os.pathsep.join(p for p in (FAKE_NVML, os.environ.get("PYTHONPATH")) if p)
    kernel = Kernel(env={"PYTHONPATH": path, "VRAM_FAKE_NVML_SM_PERCENT": str(SM_PERCENT)})
    try:
        comm_id = attach_helper(kernel, bootstrap, {"interval_s": 0.2, "heartbeat_s": 1.0})
        yield CellSession(kernel, comm_id)
    finally:
        kernel.shutdown()


def test_samples_carry_the_cards_load(session: CellSession) -> None:
    sample = next(s for s in session.k.comm_data(session.comm_id, "sample") if s["gpus"])
    load = sample["gpus"][0]["load"]
    assert load["sm_percent"] == SM_PERCENT and load["power_watts"] == WATTS
    assert load["throttle_reasons"] == ["sw_power_cap"]
    (process,) = load["processes"]
    assert process["this_process"] is True and process["sm_percent"] == SM_PERCENT


def test_a_cell_record_carries_its_utilisation_and_energy(session: CellSession) -> None:
    record = session.run("import time; time.sleep(0.6)")["record"]
    (entry,) = record["gpu_load"]
    assert entry["index"] == 0 and entry["scope"] == "device"
    assert entry["sm_mean_percent"] == SM_PERCENT and entry["sm_max_percent"] == SM_PERCENT
    assert entry["coverage"] == "full" and entry["utilization_samples"] >= 2
    assert entry["energy_method"] == "energy_counter"
    assert abs(entry["energy_joules"] - WATTS * record["duration_s"]) < WATTS * 0.05
    assert entry["throttle_reasons"] == ["sw_power_cap"]
    assert entry["unavailable"] == {}


def test_a_300_ms_burst_gets_a_figure(session: CellSession) -> None:
    record = session.run("import time; time.sleep(0.3)")["record"]
    (entry,) = record["gpu_load"]
    assert entry["sm_mean_percent"] == SM_PERCENT and entry["utilization_samples"] >= 1
