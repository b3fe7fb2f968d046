"""NVML's load answers for the unit tests' fake pynvml, shaped as real pynvml returns them.

The answers are the real bindings' structs (``c_nvmlUtilization_t``,
``c_nvmlSample_t`` with its value union, ``c_nvmlProcessUtilizationSample_t``)
and errors (``NVMLError(NVML_ERROR_NOT_SUPPORTED)`` is an
``NVMLError_NotSupported``), where nvidia-ml-py is installed, so the helper meets
what it meets on a card; plain namespaces with the same fields elsewhere. The
figures are those an H100 gave (power in milliwatts, energy in millijoules,
timestamps in microseconds of the wall clock).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

try:
    import pynvml as real_pynvml
except ImportError:  # the fake still answers, with namespaces for structs
    real_pynvml = None

NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_NOT_FOUND = 6


def nvml_error(code: int) -> Exception:
    """The exception real pynvml raises for ``code`` (its per-code subclass)."""
    if real_pynvml is not None:
        return real_pynvml.NVMLError(code)
    from fakes import FakeNvmlError

    return FakeNvmlError(f"NVML error {code}", code)


def utilization(gpu: int, memory: int) -> Any:
    """A ``c_nvmlUtilization_t``."""
    if real_pynvml is not None:
        return real_pynvml.c_nvmlUtilization_t(gpu=gpu, memory=memory)
    return types.SimpleNamespace(gpu=gpu, memory=memory)


def sample(time_us: int, value: int) -> Any:
    """A ``c_nvmlSample_t`` holding an unsigned int (``uiVal``), as utilisation and power samples do."""
    if real_pynvml is not None:
        union = real_pynvml.c_nvmlValue_t()
        union.uiVal = value
        return real_pynvml.c_nvmlSample_t(timeStamp=time_us, sampleValue=union)
    return types.SimpleNamespace(timeStamp=time_us, sampleValue=types.SimpleNamespace(uiVal=value))


def process_sample(pid: int, time_us: int, sm: int, mem: int, enc: int = 0, dec: int = 0) -> Any:
    """A ``c_nvmlProcessUtilizationSample_t``."""
    if real_pynvml is not None:
        return real_pynvml.c_nvmlProcessUtilizationSample_t(
            pid=pid, timeStamp=time_us, smUtil=sm, memUtil=mem, encUtil=enc, decUtil=dec
        )
    return types.SimpleNamespace(pid=pid, timeStamp=time_us, smUtil=sm, memUtil=mem, encUtil=enc, decUtil=dec)


# nvmlValueType_t of the samples: NVML_VALUE_TYPE_UNSIGNED_INT.
UNSIGNED_INT = 1
NVML_TOTAL_POWER_SAMPLES = 0
NVML_GPU_UTILIZATION_SAMPLES = 1


@dataclass
class LoadAnswers:
    """What one device answers to the load queries; ``refused`` maps a query's name to the NVML code it fails with."""

    sm: int = 97
    memory: int = 61
    power_mw: int = 612_345
    limit_mw: int = 700_000
    temperature: int = 71
    sm_clock: int = 1755
    memory_clock: int = 2619
    throttle: int = 0x4  # SW power cap
    pcie_tx: int = 123_456
    pcie_rx: int = 654_321
    energy_mj: int = 1_000_000_000
    # (timestamp us, percent) and (timestamp us, milliwatts): the driver's buffers, oldest first
    utilization_samples: list[tuple[int, int]] = field(default_factory=list)
    power_samples: list[tuple[int, int]] = field(default_factory=list)
    # (pid, timestamp us, sm, mem) of the per-process buffer
    process_samples: list[tuple[int, int, int, int]] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    # calls made, by name
    calls: list[str] = field(default_factory=list)


class LoadQueries:
    """The load queries of pynvml, answered from each fake GPU's ``load`` (a :class:`LoadAnswers`)."""

    NVML_TOTAL_POWER_SAMPLES = NVML_TOTAL_POWER_SAMPLES
    NVML_GPU_UTILIZATION_SAMPLES = NVML_GPU_UTILIZATION_SAMPLES

    def _answers(self, handle: Any, name: str) -> LoadAnswers:
        answers = getattr(handle, "load", None)
        if answers is None:
            raise nvml_error(NVML_ERROR_NOT_SUPPORTED)
        answers.calls.append(name)
        code = answers.refused.get(name)
        if code is not None:
            raise nvml_error(code)
        return answers

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        a = self._answers(handle, "utilization")
        return utilization(a.sm, a.memory)

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        return self._answers(handle, "power").power_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any) -> int:
        return self._answers(handle, "power_limit").limit_mw

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> int:
        assert sensor == 0  # NVML_TEMPERATURE_GPU
        return self._answers(handle, "temperature").temperature

    def nvmlDeviceGetClockInfo(self, handle: Any, clock: int) -> int:
        a = self._answers(handle, "sm_clock" if clock == 1 else "memory_clock")
        return a.sm_clock if clock == 1 else a.memory_clock

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        return self._answers(handle, "throttle").throttle

    def nvmlDeviceGetPcieThroughput(self, handle: Any, counter: int) -> int:
        a = self._answers(handle, "pcie_tx" if counter == 0 else "pcie_rx")
        return a.pcie_tx if counter == 0 else a.pcie_rx

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        return self._answers(handle, "energy").energy_mj

    def nvmlDeviceGetSamples(self, handle: Any, sampling_type: int, since_us: int) -> tuple[int, list[Any]]:
        name = "utilization_samples" if sampling_type == NVML_GPU_UTILIZATION_SAMPLES else "power_samples"
        a = self._answers(handle, name)
        buffer = a.utilization_samples if sampling_type == NVML_GPU_UTILIZATION_SAMPLES else a.power_samples
        found = [sample(t, v) for t, v in buffer if t > since_us]
        if not found:
            raise nvml_error(NVML_ERROR_NOT_FOUND)  # as the driver: no sample since the time asked
        return UNSIGNED_INT, found

    def nvmlDeviceGetProcessUtilization(self, handle: Any, since_us: int) -> list[Any]:
        a = self._answers(handle, "process_utilization")
        found = [process_sample(pid, t, sm, mem) for pid, t, sm, mem in a.process_samples if t > since_us]
        if not found:
            raise nvml_error(NVML_ERROR_NOT_FOUND)
        return found


@dataclass
class FakeMigInstance:
    """A MIG instance as NVML's handle for it: its own load answers (None: it has none) and its parent GPU."""

    uuid: str
    parent: Any
    load: LoadAnswers | None = None
