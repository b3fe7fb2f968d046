"""GPU load on a real card: each cell's utilisation from the driver's own sample buffer,
the card's power, temperature and clocks against ``nvidia-smi`` read at once, and the
kernel named among the processes the driver saw at work.

The cells run a matrix multiply loop (the card busy), sleep (the card idle, as the
kit runs these checks alone) or run a 300 ms burst, the shortest cell the panel
promises a figure for. Every figure compared goes into the kit's report.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gpu_helpers import open_helper
from kernel_harness import CellSession, Kernel, snapshot_sample

pytestmark = [pytest.mark.cuda, pytest.mark.kernel, pytest.mark.gpu_exclusive]

# A loop of 8192 x 8192 float32 products keeps every SM of a large card busy;
# synchronising ends the cell when the card's work ends.
BUSY_CELL = (
    "import time, torch\n"
    "a = torch.randn(8192, 8192, device='cuda')\n"
    "t0 = time.time()\n"
    "while time.time() - t0 < {seconds}:\n"
    "    for _ in range(8):\n"
    "        b = a @ a\n"
    "    torch.cuda.synchronize()\n"
    "del a, b\n"
)


@pytest.fixture(scope="module")
def session(module_needs_cuda: None, bootstrap: str) -> Iterator[CellSession]:
    kernel = Kernel()
    try:
        comm_id = open_helper(kernel, bootstrap, interval_s=0.2)
        cells = CellSession(kernel, comm_id)
        # CUDA and cuBLAS start up outside the measured cells.
        warm_up = cells.run(BUSY_CELL.format(seconds=1), record_timeout=120)
        assert warm_up["reply"]["status"] == "ok", warm_up["reply"]
        yield cells
    finally:
        kernel.shutdown()


def cell_load(session: CellSession, code: str) -> dict[str, Any]:
    """Run ``code`` as a cell and return its record's load figures of device 0."""
    result = session.run(code, record_timeout=60, timeout=300)
    assert result["reply"]["status"] == "ok", result["reply"]
    loads = result["record"].get("gpu_load")
    assert loads, f"the record has no GPU load: {result['record']}"
    return next(entry for entry in loads if entry["index"] == 0)


def test_a_busy_cell_reads_at_least_90_percent(session: CellSession, figures: Callable[..., None]) -> None:
    load = cell_load(session, BUSY_CELL.format(seconds=4))
    figures(sm_mean_percent=load["sm_mean_percent"], sm_max_percent=load["sm_max_percent"], coverage=load["coverage"])
    figures(utilization_samples=load["utilization_samples"], energy_joules=load["energy_joules"])
    assert load["coverage"] == "full"
    assert load["sm_mean_percent"] >= 90
    assert load["energy_joules"] is not None and load["energy_joules"] > 0


def test_a_sleeping_cell_reads_at_most_5_percent(session: CellSession, figures: Callable[..., None]) -> None:
    load = cell_load(session, "import time; time.sleep(3)")
    figures(sm_mean_percent=load["sm_mean_percent"], sm_max_percent=load["sm_max_percent"], coverage=load["coverage"])
    assert load["sm_mean_percent"] is not None and load["sm_mean_percent"] <= 5


def test_a_300_ms_burst_gets_a_figure(session: CellSession, figures: Callable[..., None]) -> None:
    load = cell_load(session, BUSY_CELL.format(seconds=0.3))
    figures(sm_mean_percent=load["sm_mean_percent"], utilization_samples=load["utilization_samples"])
    figures(coverage=load["coverage"], energy_joules=load["energy_joules"], energy_method=load["energy_method"])
    assert load["utilization_samples"] >= 1
    assert load["sm_mean_percent"] is not None and load["sm_mean_percent"] > 0


def nvidia_smi_load() -> dict[str, float] | None:
    """Power (W), temperature (C) and the SM and memory clocks (MHz) of device 0, as nvidia-smi prints them."""
    if shutil.which("nvidia-smi") is None:
        return None
    out = subprocess.run(
        [
            "nvidia-smi",
            "--id=0",
            "--query-gpu=power.draw,temperature.gpu,clocks.sm,clocks.mem",
            "--format=csv,noheader,nounits",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    power, temperature, sm_clock, memory_clock = (float(v) for v in out.stdout.strip().split(","))
    return {"power": power, "temperature": temperature, "sm_clock": sm_clock, "memory_clock": memory_clock}


def fresh_load(session: CellSession, within_s: float) -> dict[str, Any]:
    """A sample whose power reading is at most ``within_s`` old, from successive snapshots.

    Power is read every 2 s, temperature and clocks every 5 s: a comparison with
    nvidia-smi must wait for a fresh reading rather than judge a stale one.
    """
    deadline = time.monotonic() + 30
    n = 0
    while True:
        n += 1
        sample = snapshot_sample(session.k, session.comm_id, f"load-{n}", timeout=60)
        load = sample["gpus"][0]["load"]
        if time.time() - load["read_at"] <= within_s or time.monotonic() > deadline:
            return load
        time.sleep(0.1)


def test_power_temperature_and_clocks_agree_with_nvidia_smi(session: CellSession, figures: Callable[..., None]) -> None:
    session.settle(6)  # idle, so that the figures stand still between the two readings
    load = fresh_load(session, within_s=0.5)
    smi = nvidia_smi_load()
    if smi is None:
        pytest.skip("nvidia-smi is not installed")
    figures(ours=load, nvidia_smi=smi, age_s=time.time() - load["read_at"])
    assert load["power_watts"] is not None and load["temperature_c"] is not None
    # nvidia-smi prints watts to two decimals from the same NVML counter: an
    # idle card's draw moves by a few watts between two readings.
    assert abs(load["power_watts"] - smi["power"]) <= max(5.0, 0.05 * smi["power"])
    # Temperature and clocks are read every 5 s: an idle card's hold still.
    assert abs(load["temperature_c"] - smi["temperature"]) <= 2
    assert abs(load["sm_clock_mhz"] - smi["sm_clock"]) <= 0.1 * smi["sm_clock"]
    assert abs(load["memory_clock_mhz"] - smi["memory_clock"]) <= 0.1 * smi["memory_clock"]
    assert load["power_limit_watts"] is not None and load["power_limit_watts"] >= load["power_watts"]


def test_the_kernel_is_named_among_the_busy_processes(session: CellSession, figures: Callable[..., None]) -> None:
    pid = session.k.eval("__import__('os').getpid()")
    # The per-process utilisation is read every 10 s, over what the driver saw
    # since the last reading: a 12 s busy cell spans at least one reading.
    cell_load(session, BUSY_CELL.format(seconds=12))
    deadline = time.monotonic() + 15
    n = 0
    processes: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        n += 1
        sample = snapshot_sample(session.k, session.comm_id, f"processes-{n}", timeout=60)
        processes = sample["gpus"][0]["load"]["processes"]
        if any(p["this_process"] for p in processes):
            break
        time.sleep(0.5)
    figures(kernel_pid=pid, processes=processes)
    ours = [p for p in processes if p["this_process"]]
    assert ours, f"the kernel (pid {pid}) is not among the processes the driver saw busy: {processes}"
    assert ours[0]["pid"] == pid and (ours[0]["sm_percent"] or 0) > 0
