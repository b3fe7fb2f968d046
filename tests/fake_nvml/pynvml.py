"""A stand-in ``pynvml`` for real kernels on machines without a GPU: one busy card.

Put this folder first on a kernel's ``PYTHONPATH`` (the end-to-end tests do;
the browser tests do with ``VRAM_UI_FAKE_NVML=1``, see
ui-tests/jupyter_server_test_config.py) and the helper, which imports
``pynvml`` lazily, reads this card as it reads a real one: memory, and the
load figures the panel shows beside it. The card is always busy at
:data:`SM_PERCENT` (or ``VRAM_FAKE_NVML_SM_PERCENT``), draws :data:`POWER_MW`,
and its driver's sample buffers hold a sample every 1/6 s of the last
:data:`BUFFER_S` seconds, made up from the wall clock when asked, so a cell's
record gets figures that a test can predict: the mean utilisation, and an
energy of the power times the cell's duration. The kernel itself is the
card's one process.
"""

from __future__ import annotations

import os
import time
import types
from typing import Any

SM_PERCENT = int(os.environ.get("VRAM_FAKE_NVML_SM_PERCENT", "87"))
MEMORY_PERCENT = 41
POWER_MW = 300_000
LIMIT_MW = 700_000
TOTAL_BYTES = 80 << 30
USED_BYTES = 6 << 30
PERIOD_S = 1 / 6
BUFFER_S = 20.0
_LOADED_AT = time.time()

NVML_ERROR_NOT_FOUND = 6
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TOTAL_POWER_SAMPLES = 0
NVML_GPU_UTILIZATION_SAMPLES = 1
NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
nvmlMemory_v2 = 0x02000028


class NVMLError(Exception):
    """As pynvml's: the NVML return code in ``value``."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


_HANDLE = types.SimpleNamespace(uuid="GPU-fake-0000", name="Fake NVIDIA H100 80GB HBM3")


def nvmlInit() -> None:
    """Nothing to start."""


def nvmlShutdown() -> None:
    """Nothing to stop."""


def nvmlSystemGetDriverVersion() -> str:
    return "550.54.15"


def nvmlDeviceGetCount() -> int:
    return 1


def nvmlDeviceGetHandleByIndex(index: int) -> Any:
    return _HANDLE


def nvmlDeviceGetUUID(handle: Any) -> str:
    return handle.uuid


def nvmlDeviceGetName(handle: Any) -> str:
    return handle.name


def nvmlDeviceGetMemoryInfo(handle: Any, version: int | None = None) -> Any:
    return types.SimpleNamespace(total=TOTAL_BYTES, used=USED_BYTES, free=TOTAL_BYTES - USED_BYTES)


def nvmlDeviceGetComputeRunningProcesses(handle: Any) -> list[Any]:
    return [types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=USED_BYTES)]


def nvmlDeviceGetUtilizationRates(handle: Any) -> Any:
    return types.SimpleNamespace(gpu=SM_PERCENT, memory=MEMORY_PERCENT)


def nvmlDeviceGetPowerUsage(handle: Any) -> int:
    return POWER_MW


def nvmlDeviceGetEnforcedPowerLimit(handle: Any) -> int:
    return LIMIT_MW


def nvmlDeviceGetTemperature(handle: Any, sensor: int) -> int:
    return 64


def nvmlDeviceGetClockInfo(handle: Any, clock: int) -> int:
    return 1980 if clock == NVML_CLOCK_SM else 2619


def nvmlDeviceGetCurrentClocksEventReasons(handle: Any) -> int:
    return 0x4  # the power cap


def nvmlDeviceGetPcieThroughput(handle: Any, counter: int) -> int:
    return 1000 if counter == NVML_PCIE_UTIL_TX_BYTES else 2000


def nvmlDeviceGetTotalEnergyConsumption(handle: Any) -> int:
    """Millijoules since this module loaded, at a steady POWER_MW."""
    return int(POWER_MW * (time.time() - _LOADED_AT))


def _timestamps(since_us: int) -> list[int]:
    now = time.time()
    first = max(since_us / 1e6, now - BUFFER_S)
    count = int((now - first) / PERIOD_S)
    return [int((now - k * PERIOD_S) * 1e6) for k in range(count, -1, -1) if (now - k * PERIOD_S) * 1e6 > since_us]


def nvmlDeviceGetSamples(handle: Any, sampling_type: int, since_us: int) -> tuple[int, list[Any]]:
    value = SM_PERCENT if sampling_type == NVML_GPU_UTILIZATION_SAMPLES else POWER_MW
    stamps = _timestamps(since_us)
    if not stamps:
        raise NVMLError(NVML_ERROR_NOT_FOUND)
    return 1, [types.SimpleNamespace(timeStamp=t, sampleValue=types.SimpleNamespace(uiVal=value)) for t in stamps]


def nvmlDeviceGetProcessUtilization(handle: Any, since_us: int) -> list[Any]:
    stamps = _timestamps(since_us)
    if not stamps:
        raise NVMLError(NVML_ERROR_NOT_FOUND)
    return [
        types.SimpleNamespace(
            pid=os.getpid(), timeStamp=stamps[-1], smUtil=SM_PERCENT, memUtil=MEMORY_PERCENT, encUtil=0, decUtil=0
        )
    ]
