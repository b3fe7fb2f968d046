"""Reads how busy each GPU is from NVML: utilisation, power, temperature, clocks, throttling, PCIe, processes.

Memory says what a kernel holds; load says whether it uses it. This reader
shares :class:`~.nvml.NvmlReader`'s ``nvmlInit`` and handles, and reads each
figure at its own pace, because each NVML call costs the sampler thread about
100 us (an H200's memory query, docs/gpu-runs) and the load figures must cost
at most 0.05 % of a core at 1 Hz and 0.3 % at 10 Hz (benchmarks/gpu_load_cost.py):

- every :data:`FAST_S`: utilisation, power draw, throttle reasons and the energy
  counter (what a cell's figures and the panel's live view need; at every
  second, four calls alone would cost 0.04 % of a core);
- every :data:`SLOW_S`: temperature and the two clocks (they move slowly);
- every :data:`LIMIT_S`: the enforced power limit (an administrator's setting,
  which rarely changes);
- every :data:`PCIE_S`: PCIe throughput, whose call blocks for its 20 ms window;
- every :data:`~.nvml_process_load.PROCESS_LOAD_S`: each process's utilisation.

Between two readings the same figures dict is given again, so the sampler's
change check settles it by identity. A figure NVML refuses is None with a
reason; a refusal that lasts (not supported, no permission) is not asked
again. On a MIG instance each figure is asked of the instance first and, where
the driver has no instance figure, of its parent GPU, and named so.

The last :data:`RING_LENGTH` fast readings of each device are kept for the
per-cell figures (cells/cell_load.py), which read them from the sender thread.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from .nvml_codes import LASTING_REASONS, throttle_names, unavailable_reason
from .nvml_process_load import PROCESS_LOAD_S, ProcessLoadReader

if TYPE_CHECKING:
    from ...protocol_types import GpuLoad
    from ..devices import Device
    from .nvml import NvmlReader

FAST_S = 2.0
SLOW_S = 5.0
LIMIT_S = 30.0
PCIE_S = 10.0
# This many fast readings are kept per device: about a minute at FAST_S, and more
# than the gap between two sampler ticks at any rate.
RING_LENGTH = 32

# NVML's constants from nvml.h are copied here, so that a pynvml that lacks one
# still reads the other figures.
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1

# This maps each NVML call to the wire figures its answer fills. The energy
# counter fills none, because it is kept for the cells' figures and not sent.
CALL_FIGURES: dict[str, tuple[str, ...]] = {
    "utilization": ("sm_percent", "memory_bandwidth_percent"),
    "power": ("power_watts",),
    "throttle": ("throttle_reasons",),
    "energy": (),
    "temperature": ("temperature_c",),
    "sm_clock": ("sm_clock_mhz",),
    "memory_clock": ("memory_clock_mhz",),
    "power_limit": ("power_limit_watts",),
    "pcie_tx": ("pcie_tx_kb_per_s",),
    "pcie_rx": ("pcie_rx_kb_per_s",),
    "processes": ("processes",),
}
_WIRE_FIGURES = tuple(name for names in CALL_FIGURES.values() for name in names)


class LoadReading(NamedTuple):
    """One fast reading of a device, kept for the per-cell figures."""

    read_at: float  # In Unix seconds.
    sm_percent: float | None
    throttle_mask: int | None
    energy_mj: int | None


def throttle_mask(nvml: Any, handle: Any) -> int:
    """The clocks event reasons bitmask, read by its current name or, in an older pynvml, by its former one."""
    read = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    if read is None:
        read = nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(read(handle))


class DeviceLoad:
    """What is known of one device's load: its handles, figures, reasons and recent readings."""

    __slots__ = (
        "handle",
        "parent",
        "scope",
        "values",
        "reasons",
        "on_parent",
        "lasting",
        "due",
        "ring",
        "wire",
        "processes",
    )

    def __init__(self, handle: Any, parent: Any, scope: str, now: float):
        self.handle = handle
        # On a MIG instance this is the parent GPU's handle; otherwise it is None.
        self.parent = parent
        self.scope = scope
        self.values: dict[str, Any] = dict.fromkeys(_WIRE_FIGURES)
        # This maps each call that gave nothing to the reason why.
        self.reasons: dict[str, str] = {}
        # These calls are answered by the parent GPU, because the instance has no
        # figure of its own.
        self.on_parent: set[str] = set()
        # This maps each call that is not made again to the lasting reason why.
        self.lasting: dict[str, str] = {}
        # This maps each group of calls to the monotonic time when it is next due.
        # PCIe waits one period first, so that the first sample, which a comm
        # sends as soon as it opens, is not held up by PCIe's 40 ms of reading.
        self.due: dict[str, float] = {"pcie": now + PCIE_S}
        self.reasons["pcie_tx"] = self.reasons["pcie_rx"] = "not_read_yet"
        self.ring: collections.deque[LoadReading] = collections.deque(maxlen=RING_LENGTH)
        self.wire: GpuLoad | None = None
        self.processes = ProcessLoadReader()


def call_device(nvml: Any, load: DeviceLoad, call: str, read: Callable[[Any], Any]) -> tuple[Any, str | None]:
    """Call ``read(handle)`` on the device without changing ``load``.

    The call goes to the parent GPU where ``load.on_parent`` says so. The result
    is (value, None), or (None, why) when NVML gave nothing. This is for the
    sender thread, which must not touch what the sampler thread owns.
    """
    reason = load.lasting.get(call)
    if reason is not None:
        return None, reason
    handle = load.parent if call in load.on_parent else load.handle
    try:
        return read(handle), None
    except Exception as exc:
        return None, unavailable_reason(exc)


class LoadReader:
    """Reads the load figures of every visible GPU (see the module docstring)."""

    def __init__(
        self,
        nvml: NvmlReader,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ):
        self._nvml = nvml
        self._clock = clock
        self._wall_clock = wall_clock
        self._loads: dict[Any, DeviceLoad] = {}
        # This maps each MIG UUID that got no handle to the reason why.
        self._unresolved: dict[str, str] = {}
        # This maps each CUDA ordinal to its DeviceLoad as of the last reading. It
        # is replaced whole, never changed in place, because the sender thread
        # reads it.
        self.by_index: dict[int, DeviceLoad] = {}

    @property
    def module(self) -> Any:
        """The pynvml module, or None without NVML."""
        return self._nvml.module

    def read_all(self, devices: list[Device]) -> list[GpuLoad | None]:
        """Read what is due, and return each device's load figures, or None for a device NVML does not know."""
        nvml = self._nvml.module
        if nvml is None:
            if self.by_index:
                self.by_index = {}
            return [None] * len(devices)
        by_index: dict[int, DeviceLoad] = {}
        figures: list[GpuLoad | None] = []
        for device in devices:
            load = self._device_load(nvml, device)
            if load is None:
                figures.append(None)
                continue
            by_index[device.index] = load
            figures.append(self._read(nvml, load))
        if by_index != self.by_index:
            self.by_index = by_index
        return figures

    def forget(self) -> None:
        """Drop every device's state, because NVML is shutting down and its handles will be stale."""
        self._loads.clear()
        self._unresolved.clear()
        self.by_index = {}

    # -- devices ------------------------------------------------------------------

    def _device_load(self, nvml: Any, device: Device) -> DeviceLoad | None:
        if device.nvml is not None:
            key: Any = device.nvml.nvml_index
            load = self._loads.get(key)
            if load is None:
                load = self._loads[key] = DeviceLoad(device.nvml.handle, None, "device", self._clock())
            return load
        uuid = device.uuid
        if uuid is None or not uuid.startswith("MIG-") or uuid in self._unresolved:
            return None
        load = self._loads.get(uuid)
        if load is None:
            load = self._mig_load(nvml, uuid)
        return load

    def _mig_load(self, nvml: Any, uuid: str) -> DeviceLoad | None:
        """A MIG instance's state: its own handle, and its parent GPU's for the figures it lacks."""
        try:
            handle = nvml.nvmlDeviceGetHandleByUUID(uuid)
        except Exception as exc:
            self._unresolved[uuid] = unavailable_reason(exc)
            return None
        try:
            parent = nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
        except Exception:
            parent = None
        load = self._loads[uuid] = DeviceLoad(handle, parent, "mig_instance", self._clock())
        return load

    # -- reading ------------------------------------------------------------------

    def _read(self, nvml: Any, load: DeviceLoad) -> GpuLoad:
        now = self._clock()
        due = load.due
        read = False
        if now >= due.get("fast", 0.0):
            self._read_fast(nvml, load)
            due["fast"] = now + FAST_S
            read = True
        if now >= due.get("slow", 0.0):
            self._read_slow(nvml, load)
            due["slow"] = now + SLOW_S
            read = True
        if now >= due.get("limit", 0.0):
            limit = self._call(load, "power_limit", nvml.nvmlDeviceGetEnforcedPowerLimit)
            load.values["power_limit_watts"] = _watts(limit)
            due["limit"] = now + LIMIT_S
            read = True
        if now >= due["pcie"]:
            self._read_pcie(nvml, load)
            due["pcie"] = now + PCIE_S
            read = True
        if now >= due.get("processes", 0.0):
            wall = self._wall_clock()
            own = self._nvml.own_pid_among
            load.values["processes"] = self._call(load, "processes", lambda h: load.processes.read(nvml, h, wall, own))
            due["processes"] = now + PROCESS_LOAD_S
            read = True
        if read or load.wire is None:
            load.wire = self._wire(load)
        return load.wire

    def _read_fast(self, nvml: Any, load: DeviceLoad) -> None:
        read_at = self._wall_clock()
        values = load.values
        rates = self._call(load, "utilization", nvml.nvmlDeviceGetUtilizationRates)
        values["sm_percent"] = _number(getattr(rates, "gpu", None)) if rates is not None else None
        values["memory_bandwidth_percent"] = _number(getattr(rates, "memory", None)) if rates is not None else None
        values["power_watts"] = _watts(self._call(load, "power", nvml.nvmlDeviceGetPowerUsage))
        mask = self._call(load, "throttle", lambda h: throttle_mask(nvml, h))
        values["throttle_reasons"] = throttle_names(mask) if mask is not None else None
        energy = self._call(load, "energy", nvml.nvmlDeviceGetTotalEnergyConsumption)
        values["read_at"] = read_at
        load.ring.append(LoadReading(read_at, values["sm_percent"], mask, int(energy) if energy is not None else None))

    def _read_slow(self, nvml: Any, load: DeviceLoad) -> None:
        values = load.values
        temperature = self._call(load, "temperature", lambda h: nvml.nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU))
        values["temperature_c"] = _number(temperature)
        sm_clock = self._call(load, "sm_clock", lambda h: nvml.nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM))
        values["sm_clock_mhz"] = _integer(sm_clock)
        memory_clock = self._call(load, "memory_clock", lambda h: nvml.nvmlDeviceGetClockInfo(h, NVML_CLOCK_MEM))
        values["memory_clock_mhz"] = _integer(memory_clock)

    def _read_pcie(self, nvml: Any, load: DeviceLoad) -> None:
        tx = self._call(load, "pcie_tx", lambda h: nvml.nvmlDeviceGetPcieThroughput(h, NVML_PCIE_UTIL_TX_BYTES))
        load.values["pcie_tx_kb_per_s"] = _integer(tx)
        rx = self._call(load, "pcie_rx", lambda h: nvml.nvmlDeviceGetPcieThroughput(h, NVML_PCIE_UTIL_RX_BYTES))
        load.values["pcie_rx_kb_per_s"] = _integer(rx)

    def _call(self, load: DeviceLoad, call: str, read: Callable[[Any], Any]) -> Any:
        """Return ``read(handle)``, or None with its reason kept.

        When a MIG instance answers "not supported", the call moves to its parent
        GPU from then on, which answers for the whole card.
        """
        reason = load.lasting.get(call)
        if reason is not None:
            return None
        handle = load.parent if call in load.on_parent else load.handle
        try:
            value = read(handle)
        except Exception as exc:
            reason = unavailable_reason(exc)
            if reason == "not_supported" and load.parent is not None and call not in load.on_parent:
                load.on_parent.add(call)
                return self._call(load, call, read)
            if reason in LASTING_REASONS:
                load.lasting[call] = reason
            load.reasons[call] = reason
            return None
        load.reasons.pop(call, None)
        return value

    def _wire(self, load: DeviceLoad) -> GpuLoad:
        values = load.values
        unavailable: dict[str, str] = {}
        for call, reason in load.reasons.items():
            for name in CALL_FIGURES[call]:
                if values.get(name) is None:
                    unavailable[name] = reason
        return {
            "read_at": values.get("read_at") or 0.0,
            "scope": load.scope,
            "parent_figures": [name for call in sorted(load.on_parent) for name in CALL_FIGURES[call]],  # type: ignore[misc]  # These are wire names, but mypy sees only str.
            "sm_percent": values["sm_percent"],
            "memory_bandwidth_percent": values["memory_bandwidth_percent"],
            "power_watts": values["power_watts"],
            "power_limit_watts": values["power_limit_watts"],
            "temperature_c": values["temperature_c"],
            "sm_clock_mhz": values["sm_clock_mhz"],
            "memory_clock_mhz": values["memory_clock_mhz"],
            "throttle_reasons": values["throttle_reasons"],
            "pcie_tx_kb_per_s": values["pcie_tx_kb_per_s"],
            "pcie_rx_kb_per_s": values["pcie_rx_kb_per_s"],
            "processes": values["processes"],
            "unavailable": unavailable,  # type: ignore[typeddict-item]  # The keys are CALL_FIGURES' wire names.
        }


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _integer(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _watts(milliwatts: Any) -> float | None:
    """NVML's milliwatts as watts."""
    number = _number(milliwatts)
    return round(number / 1000.0, 3) if number is not None else None


# When only the load figures change, a sample is sent if the utilisation moved by
# this many percentage points or the throttle reasons changed. Power, temperature,
# clocks and PCIe wander all the time, so they travel only with the samples that a
# change of memory or a heartbeat sends.
LOAD_CHANGE_PERCENT = 10.0


def load_moved(before: Any, now: Any) -> bool:
    """Whether a GPU's load figures moved enough to be worth a sample on their own."""
    if type(before) is not dict or type(now) is not dict:
        return before != now
    if before.get("throttle_reasons") != now.get("throttle_reasons"):
        return True
    for name in ("sm_percent", "memory_bandwidth_percent"):
        old, new = before.get(name), now.get(name)
        if (old is None) != (new is None):
            return True
        if old is not None and abs(new - old) >= LOAD_CHANGE_PERCENT:
            return True
    return False
