"""Builds samples, and decides whether a new one differs enough from the last to be sent.

:class:`SampleSource` reads every source once into *figures* (a sample without
``seq``/``time``/``reason``); :func:`significant_change` compares two figures.
None of this is thread-safe, so the sampler serialises the calls (see sampler.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from ..protocol import SampleReason
from .devices import Device, devices_wait_for_cuda, enumerate_devices
from .processes.process_tree import GpuList, ProcessTreeReader, TreeTotals, tree_differs
from .readers import tensorflow as tf_reader
from .readers import torch_cuda
from .readers.host import HostReader
from .readers.nvml import NvmlDevice, NvmlReader
from .readers.nvml_load import LoadReader, load_moved

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import (
        GpuFigures,
        HiddenGpus,
        HostFigures,
        ProcessTree,
        SampleMessage,
        TensorflowState,
        TorchState,
    )


class Figures(TypedDict):
    """The figures of one reading of every source: a sample without its sequence number, time and reason."""

    host: HostFigures
    torch: TorchState
    tensorflow: TensorflowState
    gpus: list[GpuFigures]
    hidden_gpus: HiddenGpus | None
    processes: ProcessTree | None


def make_sample(figures: Figures, seq: int, when: float, reason: SampleReason) -> SampleMessage:
    """Build a ``sample`` message from figures and its sequence number, time and reason."""
    return {
        "type": "sample",
        "seq": seq,
        "time": when,
        "reason": reason,
        "host": figures["host"],
        "torch": figures["torch"],
        "tensorflow": figures["tensorflow"],
        "gpus": figures["gpus"],
        "hidden_gpus": figures["hidden_gpus"],
        "processes": figures.get("processes"),
    }


# How often CUDA_VISIBLE_DEVICES is looked at while torch's CUDA state stays
# the same; it is looked at again at once when that state changes. Notebooks
# set it in a cell before torch initialises CUDA, so it must be looked at
# again, but not at every tick: a lookup that misses in os.environ raises and
# catches a KeyError inside the Mapping, which costs about 25 us of a sampler
# tick with cold caches, ten times a second at 10 Hz.
ENVIRONMENT_CHECK_S = 1.0


class SampleSource:
    """Reads every memory source (host, NVML, PyTorch, TensorFlow) into figures, and NVML's load figures."""

    def __init__(
        self,
        host: HostReader | None = None,
        nvml: NvmlReader | None = None,
        load: LoadReader | None = None,
        environ: Mapping[str, str] = os.environ,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
        processes: ProcessTreeReader | None = None,
    ):
        self.host = host if host is not None else HostReader()
        self.nvml = nvml if nvml is not None else NvmlReader()
        self.load = load if load is not None else LoadReader(self.nvml)
        self.processes = processes if processes is not None else ProcessTreeReader()
        self._environ = environ
        self._wall_clock = wall_clock
        self._clock = clock
        self._devices: list[Device] = []
        self._devices_key: tuple[Any, ...] | None = None
        self._visible_devices: str | None = None
        self._visible_devices_read_at = float("-inf")
        self._hidden: HiddenGpus | None = None

    def devices(self) -> list[Device]:
        """The visible devices, re-enumerated only when what decides them changed.

        What decides them is torch's CUDA state, since torch's numbering takes
        over once CUDA is initialised, and CUDA_VISIBLE_DEVICES, which notebooks
        often set in a cell before importing torch. A change to the variable is
        seen within :data:`ENVIRONMENT_CHECK_S`, and at once when torch
        initialises CUDA.
        """
        torch = torch_cuda.loaded_torch()
        return self._visible(torch, torch is not None and torch_cuda.cuda_initialized(torch))

    def devices_wait_for_cuda(self) -> bool:
        """Whether the devices can be known only once CUDA starts. That is so when
        CUDA_VISIBLE_DEVICES names MIG instances and CUDA is not up yet."""
        torch = torch_cuda.loaded_torch()
        if torch is not None and torch_cuda.cuda_initialized(torch):
            return False
        return devices_wait_for_cuda(self._environ.get("CUDA_VISIBLE_DEVICES"))

    def hidden_gpus(self) -> HiddenGpus | None:
        """What hides the GPUs that NVML lists when CUDA_VISIBLE_DEVICES leaves the
        kernel none of them, or None otherwise.

        Set to "" or "-1" to run on the CPU, or to a wrong index or UUID, the
        variable hides every GPU. The panel says so, because "no GPU" alone
        would send the user looking for a driver problem.
        """
        torch = torch_cuda.loaded_torch()
        return self._hidden_by_environment(
            self._visible(torch, torch is not None and torch_cuda.cuda_initialized(torch))
        )

    def _hidden_by_environment(self, devices: list[Device]) -> HiddenGpus | None:
        """:meth:`hidden_gpus`, given the devices just enumerated."""
        value = self._visible_devices
        if devices or value is None or not self.nvml.available or devices_wait_for_cuda(value):
            return None
        count = len(self.nvml.devices())
        if count == 0:
            return None
        hidden = self._hidden
        if hidden is None or hidden["count"] != count or hidden["cuda_visible_devices"] != value:
            # The same object is kept tick after tick, so that the change check
            # settles it by identity.
            hidden = self._hidden = {"count": count, "cuda_visible_devices": value}
        return hidden

    def _visible(self, torch: Any, initialized: bool) -> list[Device]:
        """:meth:`devices`, where the caller has just read whether CUDA is initialised."""
        now = self._clock()
        known = self._devices_key
        cuda_came_or_went = known is None or known[0] != initialized
        if cuda_came_or_went or now - self._visible_devices_read_at >= ENVIRONMENT_CHECK_S:
            self._visible_devices = self._environ.get("CUDA_VISIBLE_DEVICES")
            self._visible_devices_read_at = now
        key = (initialized, self._visible_devices, self.nvml.available)
        if key != known:
            self._devices = enumerate_devices(torch if initialized else None, self.nvml.devices(), self._environ)
            self._devices_key = key
        return self._devices

    def _nvml_figures(self, device: NvmlDevice, fresh: bool, holds_memory: bool, own_state: Any) -> Any:
        """One device's NVML figures, or None if reading them fails, so that the
        other devices and sources still count."""
        try:
            return self.nvml.read(device, fresh, holds_memory, own_state)
        except Exception:
            return None

    def read(self, fresh_processes: bool = False) -> Figures:
        """Read every source once. With ``fresh_processes``, NVML's processes are
        listed afresh instead of taken from the reader's cache."""
        torch = torch_cuda.loaded_torch()
        # CUDA's state is read once per tick, and the device list, the figures and the torch
        # state all follow from that one reading.
        initialized = torch is not None and torch_cuda.cuda_initialized(torch)
        tf = tf_reader.loaded_tensorflow()
        tf_state = tf_reader.tensorflow_state(tf)
        tf_gpus = tf_reader.read_gpus(tf) if tf_state["gpus_initialized"] else {}
        gpus: list[GpuFigures] = []
        devices = self._visible(torch, initialized)
        for device in devices:
            torch_figures, context = (
                torch_cuda.initialized_device_reading(torch, device.index) if initialized else (None, None)
            )
            # NVML must name this process when it holds memory on the device:
            # torch reserves some there, or the kernel has a context there (a
            # context is hundreds of MiB, and exists before torch's first
            # allocation and after empty_cache), or TensorFlow has initialised
            # the device (with a context and its memory pool).
            reserved = torch_figures["reserved_bytes"] if torch_figures else None
            tf_figures = tf_gpus.get(device.index)
            holds_memory = context is True or bool(reserved) or tf_figures is not None
            # The reader gets what moves the kernel's own NVML figure: the
            # context, torch's segments and TensorFlow's memory.
            nvml = (
                self._nvml_figures(device.nvml, fresh_processes, holds_memory, (context, reserved, tf_figures))
                if device.nvml is not None
                else None
            )
            gpus.append(
                {
                    "index": device.index,
                    "name": device.name,
                    "total_bytes": device.total_bytes,
                    "torch": torch_figures,
                    "nvml": nvml,
                    "tensorflow": tf_figures,
                    "load": None,
                }
            )
        if gpus:
            for gpu, load in zip(gpus, self._load_figures(devices), strict=True):
                gpu["load"] = load
        host = self.host.read()
        return {
            "host": host,
            "torch": torch_cuda.torch_state(torch, initialized),
            "tensorflow": tf_state,
            "gpus": gpus,
            # On the common tick, which has GPUs, no call is made here, to keep
            # that tick cheap.
            "hidden_gpus": self._hidden_by_environment(devices) if not devices else None,
            "processes": self.processes.read(host["rss_bytes"], self._gpu_lists(devices, gpus), fresh_processes),
        }

    def _load_figures(self, devices: list[Device]) -> list[Any]:
        """Each device's load figures, or None for every device where reading them
        fails, so that the memory figures still count."""
        try:
            return self.load.read_all(devices)
        except Exception:
            return [None] * len(devices)

    def _gpu_lists(self, devices: list[Device], gpus: list[GpuFigures] | None = None) -> list[GpuList]:
        """Each device's NVML process list as last read (no driver call), for the process tree."""
        lists = []
        for position, device in enumerate(devices):
            if device.nvml is None:
                lists.append(GpuList(device.index, None, None))
                continue
            nvml = gpus[position]["nvml"] if gpus is not None else None
            kernel_bytes = nvml["process_used_bytes"] if nvml is not None else None
            lists.append(GpuList(device.index, self.nvml.bytes_by_pid(device.nvml), kernel_bytes))
        return lists

    def processes_now(self) -> TreeTotals | None:
        """The kernel's processes' totals read now (the sender thread, after a cell); None with none."""
        return self.processes.read_totals(self._gpu_lists(self._devices))

    def now(self) -> float:
        return self._wall_clock()


def significant_change(previous: Mapping[str, Any] | None, current: Mapping[str, Any], threshold: int) -> bool:
    """Whether ``current`` differs from ``previous`` in a way worth a sample.

    A ``*_bytes`` figure counts when it moved by more than ``threshold``, or
    became known or unknown. Every other field, such as counters like
    ``num_ooms``, flags, a device's index and name, and the number of devices,
    counts on any change. The machine-wide figures are the exceptions: they
    never count on their own, except the machine's OOM kill count, which
    counts when it rose (see :data:`MACHINE_WIDE_HOST_FIGURES` and
    :data:`MACHINE_WIDE_HOST_COUNTS`).
    """
    if previous is None:
        return True
    if type(previous) is not dict or type(current) is not dict:
        return (
            _differs(_kernel_figures(previous), _kernel_figures(current), threshold, "")
            or _machine_counts_rose(previous, current)
            or tree_differs(previous.get("processes"), current.get("processes"), threshold)
        )
    # Every sampler tick comes here, so the comparison is kept cheap. Each
    # section is settled by one C-level comparison when it is equal, which is
    # the usual tick, where at most the host section moved, and the
    # machine-wide figures are skipped where they stand. That makes the same
    # decisions as comparing copies without them (_kernel_figures), at about
    # half the cost of a tick's comparison. The kernel's processes are
    # compared apart, with their own threshold rule (tree_differs).
    return _differs_except(previous, current, threshold, _MACHINE_WIDE) or tree_differs(
        previous.get("processes"), current.get("processes"), threshold
    )


# These host figures are the whole machine's, not this kernel's. Other
# processes move them all the time, so on their own they must not cost a
# sample; they travel with every sample anyway. GPU figures from NVML are
# still compared, because another process filling the card is exactly what the
# user needs to see. The container's usage counts every process in the cgroup,
# and its page cache, so it is left out in the same way, and so are the
# machine's swap figures and the container's swap usage. The container's
# limit, its OOM kill count and swap limit, and the kernel's own swapped-out
# bytes are still compared.
MACHINE_WIDE_HOST_FIGURES: frozenset[str] = frozenset(
    {"available_bytes", "total_bytes", "swap_total_bytes", "swap_free_bytes"}
)
MACHINE_WIDE_CONTAINER_FIGURES: frozenset[str] = frozenset({"usage_bytes", "swap_usage_bytes"})
# The machine's OOM kill count (from /proc/vmstat) is the machine's too, but a
# rise is worth a sample at once, because it says that the out-of-memory killer
# acted. The frontend tells that a kernel died by it from the count's change
# between the kernel's last sample and the restarted kernel's first, so a kill
# of another process while this kernel lives must be in this kernel's last
# sample. No other change to it, such as becoming known or unknown, costs a
# sample.
MACHINE_WIDE_HOST_COUNTS: frozenset[str] = frozenset({"oom_kill_count"})


# This says where the machine-wide figures stand in the figures. A key mapped
# to None is left out of the comparison, and one mapped to _ROSE counts only
# when it rose. One mapped to a dict is compared without what that dict names,
# where both sides are dicts.
_ROSE = object()
_MACHINE_WIDE: dict[str, Any] = {
    "host": {
        **dict.fromkeys(MACHINE_WIDE_HOST_FIGURES),
        **dict.fromkeys(MACHINE_WIDE_HOST_COUNTS, _ROSE),
        "container": dict.fromkeys(MACHINE_WIDE_CONTAINER_FIGURES),
    },
    # The process tree is compared on its own (process_tree.tree_differs): its times move at every reading.
    "processes": None,
}
# This marks a key that the comparison compares as it is.
_COMPARED = object()


def _differs_except(before: dict[str, Any], now: dict[str, Any], threshold: int, left_out: dict[str, Any]) -> bool:
    """Compare two dicts of figures as :func:`_differs` does, without what ``left_out`` names."""
    if before.keys() != now.keys() and _compared_keys(before, left_out) != _compared_keys(now, left_out):
        return True
    for key, value in now.items():
        inner = left_out.get(key, _COMPARED)
        if inner is None:
            continue
        if inner is _ROSE:
            if _rose(before.get(key), value):
                return True
            continue
        old = before[key]
        if value is old or value == old:
            continue
        if inner is not _COMPARED and type(value) is dict and type(old) is dict:
            if _differs_except(old, value, threshold, inner):
                return True
        elif _differs(old, value, threshold, key):
            return True
    return False


def _compared_keys(figures: dict[str, Any], left_out: dict[str, Any]) -> set:
    return {key for key in figures if left_out.get(key, _COMPARED) not in (None, _ROSE)}


def _rose(before: Any, now: Any) -> bool:
    """Whether a count (an int, not a bool) is higher than before. When either
    side is unknown, it did not rise."""
    return type(before) is int and type(now) is int and now > before


def _machine_counts_rose(before: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    """Whether one of :data:`MACHINE_WIDE_HOST_COUNTS` rose. Only host sections that
    are plain dicts are looked at."""
    old, new = before.get("host"), now.get("host")
    if type(old) is not dict or type(new) is not dict:
        return False
    return any(_rose(old.get(key), new.get(key)) for key in MACHINE_WIDE_HOST_COUNTS)


def _kernel_figures(figures: Mapping[str, Any]) -> Mapping[str, Any]:
    """A copy of ``figures`` without the machine-wide figures, for figures whose
    shapes are not plain dicts.

    The machine-wide counts are left out too, because
    :func:`_machine_counts_rose` decides on them.
    """
    if "processes" in figures:
        figures = {key: value for key, value in figures.items() if key != "processes"}
    host = figures.get("host")
    if type(host) is not dict:
        return figures
    kept = {k: v for k, v in host.items() if k not in MACHINE_WIDE_HOST_FIGURES and k not in MACHINE_WIDE_HOST_COUNTS}
    container = kept.get("container")
    if type(container) is dict:
        kept["container"] = {k: v for k, v in container.items() if k not in MACHINE_WIDE_CONTAINER_FIGURES}
    return {**figures, "host": kept}


# Figures are plain dicts and lists, shaped like JSON. They are told apart by
# exact type checks, not isinstance(x, Mapping), because that goes through
# typing's and abc's Python-level hooks, and was the largest single cost of an
# idle tick in a kernel.
def _differs(a: Any, b: Any, threshold: int, key: str) -> bool:
    kind = type(a)
    if kind is dict or kind is list:
        # Equal containers, as on the usual tick where nothing moved, are
        # settled by one C-level comparison, not a walk in Python over every
        # NVML process entry.
        if a == b:
            return False
        if key == "load":
            # The load has its own rule, which looks at utilisation and
            # throttling, not at every watt.
            return load_moved(a, b)
        if type(b) is not kind:
            return True
        if kind is dict:
            # The kind says that ``a`` is a dict, which mypy cannot see, and
            # isinstance would cost the tick.
            if a.keys() != b.keys():  # type: ignore[union-attr]
                return True
            return any(_differs(a[k], b[k], threshold, k) for k in a)
        if len(a) != len(b):
            return True
        return any(_differs(x, y, threshold, key) for x, y in zip(a, b, strict=True))
    if kind is int and type(b) is int and key.endswith("_bytes"):
        return abs(a - b) > threshold
    return a != b
