"""Reads device totals and per-process usage from NVML (``pynvml``, from the nvidia-ml-py package).

NVML reads the driver's view without creating a CUDA context, so it works
before (and without) PyTorch. It ignores CUDA_VISIBLE_DEVICES: devices.py maps
its indices to CUDA ordinals.

``nvmlInit`` runs once (on first use, not at import) and handles are cached.
The per-process list takes a driver lock and costs milliseconds, so it is read
at most every ``process_refresh_s`` and cached in between, except when the
device's used memory moved by ``PROCESS_LIST_STALE_BYTES`` since the last list
(a process that creates a CUDA context moves it by hundreds of MiB: without
this, a kernel that has just initialised CUDA read "0 bytes" for 5 s) or a
caller asks for a fresh list (a snapshot the user asked for), or the cached
list gives this process nothing on a device where the caller knows it holds
memory (torch reserves some there, or it has a CUDA context there). Seen on an H100: a list read while the
kernel was creating its context lacked it. If a fresh list still does not
name the process, its figure is unknown (None), never a provably wrong 0, and
the list is read again after :data:`UNNAMED_RETRY_S`, twice as long each time
it still does not name it, up to ``process_refresh_s``: where NVML never names
the kernel (a list without it, or an empty one, for as long as it runs),
reading it at every tick would cost the sampler a driver call per tick.

Device used memory is NVML's v2 figure where the driver has it: like
``nvidia-smi``, it leaves out what the driver reserves for itself (about
480 MiB on an H100), which the v1 figure counts as used.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ...protocol_types import NvmlGpuFigures, NvmlInfo, NvmlProcess

    # (bytes NVML attributes to this pid, the device's process list); None where unknown
    ProcessFigures = tuple[int | None, list[NvmlProcess] | None]
    # (used, total, free) of a device; None where unknown
    MemoryFigures = tuple[int | None, int | None, int | None]


# NVML reports NVML_VALUE_NOT_AVAILABLE (-1 as unsigned long long) where it
# cannot attribute memory (e.g. Windows WDDM); older pynvml passes it through.
_NOT_AVAILABLE = 2**64 - 1
# Processes listed per device in a sample (a shared card can run hundreds).
MAX_PROCESSES = 32
# A move of the device's used memory this large makes the cached process list stale.
PROCESS_LIST_STALE_BYTES = 64 << 20
# A list that does not name this process while it holds memory on the device is
# read again after this long, then after twice as long each time it still does not.
UNNAMED_RETRY_S = 0.25


# Device memory figures younger than this are given again, not read, while the
# caller's own state on the device stands still (:meth:`NvmlReader.read`): at 10 Hz,
# every other tick reads them; at 5 Hz and slower, every tick.
MEMORY_REUSE_S = 0.15
# ``own_state`` when the caller does not pass one: the figures are read every time.
_NO_OWN_STATE = object()


# A NamedTuple, not a dataclass: see SamplerConfig (config.py).
class NvmlDevice(NamedTuple):
    """One GPU as NVML lists it, numbered by NVML rather than by CUDA."""

    nvml_index: int
    uuid: str | None
    name: str | None
    total_bytes: int | None
    handle: Any


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# Linux's largest pid (PID_MAX_LIMIT on 64-bit). NVML lists entries such as 0
# and 4294967295 where the driver and the bindings disagree on the struct:
# those are no process of this machine, and os.kill(0, ...) would signal our group.
MAX_PID = 4_194_304


def _pid_exists(pid: int) -> bool:
    if not 0 < pid <= MAX_PID:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OverflowError, ValueError):
        return False
    except OSError:
        return True
    return True


# NVML return codes that say the v2 memory query does not exist here (an older
# driver or bindings): NOT_SUPPORTED, FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH.
_V2_ABSENT_CODES = frozenset({3, 13, 25})


def _v2_absent(exc: Exception) -> bool:
    """Whether ``exc`` from the v2 memory query means v2 is not there, rather than a
    passing failure of one device (GPU_IS_LOST, UNKNOWN, a timeout)."""
    if isinstance(exc, (AttributeError, TypeError)):  # no nvmlMemory_v2, no version= argument
        return True
    return getattr(exc, "value", None) in _V2_ABSENT_CODES


class NvmlReader:
    """Reads device totals and per-process usage from NVML."""

    def __init__(
        self,
        pid: int | None = None,
        process_refresh_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        load: Callable[[], Any] | None = None,
        pid_exists: Callable[[int], bool] = _pid_exists,
    ):
        self._pid = os.getpid() if pid is None else pid
        self._process_refresh_s = process_refresh_s
        self._clock = clock
        self._load = load if load is not None else _import_pynvml
        self._pid_exists = pid_exists
        self._started = False
        self._nvml: Any = None
        self._error: str | None = None
        self._driver_version: str | None = None
        self._devices: list[NvmlDevice] = []
        # Maps nvml_index to a tuple of: the time the list was read; the device's used bytes then;
        # (the bytes used by this pid, the process list); the seconds until it is read again when it
        # did not name this process although the process held memory, else None; and the caller's own
        # state then. It is a tuple rather than an object because it is read at every tick.
        self._process_cache: dict[int, tuple[float, int | None, ProcessFigures, float | None, Any]] = {}
        # Maps nvml_index to the bytes by pid of the last list (every pid, not only the first
        # MAX_PROCESSES), or None where it could not be read or names another pid namespace's
        # processes. The process tree reads it, so that children cost no driver call of their own.
        self._by_pid: dict[int, dict[int, int | None] | None] = {}
        # Whether to call nvmlDeviceGetMemoryInfo's v2, whose "used" leaves out the driver's
        # reservation. It stays True until a driver or pynvml shows that it lacks v2.
        self._memory_v2 = True
        # Maps nvml_index to (the time read, the caller's own state then, (used, total, free)).
        self._memory_cache: dict[int, tuple[float, Any, MemoryFigures]] = {}

    # -- lifecycle --------------------------------------------------------

    def start(self) -> None:
        """nvmlInit and enumerate devices, once. Failures are recorded, not raised."""
        if self._started:
            return
        self._started = True
        try:
            nvml = self._load()
        except ImportError:
            self._error = "pynvml is not installed"
            return
        except Exception as exc:  # a broken install
            self._error = f"cannot import pynvml: {_describe_nvml_error(exc)}"
            return
        try:
            nvml.nvmlInit()
        except Exception as exc:  # no driver, no library, no permission
            self._error = f"nvmlInit failed: {_describe_nvml_error(exc)}"
            return
        self._nvml = nvml
        try:
            self._driver_version = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception:
            self._driver_version = None
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            self._error = f"cannot enumerate devices: {_describe_nvml_error(exc)}"
            self._devices = []
            return
        devices = []
        refused: list[str] = []
        for i in range(count):
            # One device at a time: NVML counts devices the process may not open
            # (Slurm's ConstrainDevices, cgroup device rules) and lost ones; the
            # others stay readable, under their own NVML index.
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(i)
            except Exception as exc:
                refused.append(f"device {i}: {_describe_nvml_error(exc)}")
                continue
            devices.append(_device(nvml, i, handle))
        self._devices = devices
        if refused:
            self._error = "cannot open " + "; ".join(refused[:4]) + (" …" if len(refused) > 4 else "")

    def shutdown(self) -> None:
        if self._nvml is not None:
            try:
                # NVML reference-counts init/shutdown: this only undoes our init.
                self._nvml.nvmlShutdown()
            except Exception:
                pass
        self._nvml = None
        self._devices = []
        self._process_cache.clear()
        self._by_pid.clear()
        self._memory_cache.clear()
        self._started = False

    # -- queries ----------------------------------------------------------

    @property
    def available(self) -> bool:
        return self._nvml is not None

    @property
    def module(self) -> Any:
        """The pynvml module once nvmlInit succeeded, else None: the load readers share its init and handles."""
        return self._nvml

    def own_pid_among(self, pids: list[int]) -> int | None:
        """Our pid if NVML's ``pids`` are of our pid namespace (a listed pid equal to it is us), or None."""
        return self._pid if _lists_our_namespace(dict.fromkeys(pids), self._pid, self._pid_exists) else None

    def info(self) -> NvmlInfo:
        return {"available": self.available, "driver_version": self._driver_version, "error": self._error}

    def devices(self) -> list[NvmlDevice]:
        return list(self._devices)

    def read(
        self,
        device: NvmlDevice,
        fresh_processes: bool = False,
        holds_memory: bool = False,
        own_state: Any = _NO_OWN_STATE,
    ) -> NvmlGpuFigures | None:
        """The device's figures.

        ``fresh_processes``: list its processes now, whatever the cache holds
        (and read the device's memory now).
        ``holds_memory``: this process is known to hold memory on the device.
        ``own_state``: what the caller knows of its own memory there (the
        sampler: its CUDA context, torch's reserved bytes, TensorFlow's). While
        it equals the last read's, memory figures younger than
        :data:`MEMORY_REUSE_S` are given again: the driver call costs ~120 us
        with the caches cold (an H100 machine), a quarter of a 10 Hz tick. A
        change of what ``own_state`` tracks is read in the tick it shows; any
        other change (another process, or the kernel's own memory outside
        torch and TensorFlow: CuPy, JAX, CUDA modules loaded lazily) within
        ``MEMORY_REUSE_S`` and a tick.
        """
        if self._nvml is None:
            return None
        if own_state is _NO_OWN_STATE:
            used, total, free = self._memory(device)
        else:
            used, total, free = self._paced_memory(device, own_state, fresh_processes)
        process_used, processes = self._processes(device, used, fresh_processes, holds_memory, own_state)
        return {
            "used_bytes": used,
            "total_bytes": total,
            "free_bytes": free,
            "process_used_bytes": process_used,
            "processes": processes,
        }

    def _paced_memory(self, device: NvmlDevice, own_state: Any, fresh: bool) -> MemoryFigures:
        now = self._clock()
        cached = self._memory_cache.get(device.nvml_index)
        if not fresh and cached is not None and now - cached[0] < MEMORY_REUSE_S and cached[1] == own_state:
            return cached[2]
        figures = self._memory(device)
        self._memory_cache[device.nvml_index] = (now, own_state, figures)
        return figures

    def _memory(self, device: NvmlDevice) -> MemoryFigures:
        """(used, total, free). NVML's own free, not total - used: v2's used leaves
        out the driver's reservation, which is not free either."""
        if self._memory_v2:
            try:
                mem = self._nvml.nvmlDeviceGetMemoryInfo(device.handle, version=self._nvml.nvmlMemory_v2)
                return int(mem.used), int(mem.total), _optional_int(getattr(mem, "free", None))
            except Exception as exc:
                if not _v2_absent(exc):
                    # This device failed this one time, so its figure is unknown now. Falling back
                    # to v1 for good would give every device v1's figure, which counts the driver's
                    # reservation as used.
                    return None, device.total_bytes, None
                # The driver or pynvml is too old for v2, so v1 is used for every later read.
                self._memory_v2 = False
        try:
            mem = self._nvml.nvmlDeviceGetMemoryInfo(device.handle)
            return int(mem.used), int(mem.total), _optional_int(getattr(mem, "free", None))
        except Exception:
            return None, device.total_bytes, None

    def _processes(
        self, device: NvmlDevice, used: int | None, fresh: bool, holds_memory: bool, own_state: Any = _NO_OWN_STATE
    ) -> ProcessFigures:
        now = self._clock()
        cached = self._process_cache.get(device.nvml_index)
        if not fresh and cached is not None:
            listed_at, listed_at_used, value, unnamed_retry_s, listed_own_state = cached
            # If the kernel's own memory moved since the list was read (for example, torch
            # reserved another segment), this process's figure in the list is old, and the
            # difference would be counted as other processes' memory. Any other move makes the
            # list stale only from PROCESS_LIST_STALE_BYTES on.
            moved = (
                used is not None
                and listed_at_used is not None
                and (
                    abs(used - listed_at_used) >= PROCESS_LIST_STALE_BYTES
                    or (own_state is not _NO_OWN_STATE and own_state != listed_own_state and used != listed_at_used)
                )
            )
            if not moved:
                age = now - listed_at
                if not (holds_memory and value[0] == 0):
                    if age < self._process_refresh_s:
                        return value
                elif unnamed_retry_s is not None and age < unnamed_retry_s:
                    # NVML did not name this process a moment ago, so its figure is still unknown.
                    return None, value[1]
                # Otherwise its retry is due, or the list predates the memory that this process
                # now holds on the device (its CUDA context just came up), so list again now.
        listed = self._list_processes(device)
        if listed is None:
            value = (None, None)
            self._by_pid[device.nvml_index] = None
        else:
            by_pid = _bytes_by_pid(listed)
            # A list in another pid namespace may name another process with our pid.
            ours = _lists_our_namespace(by_pid, self._pid, self._pid_exists)
            self._by_pid[device.nvml_index] = by_pid if ours else None
            value = (by_pid.get(self._pid, 0) if ours else None, process_list(listed, self._pid if ours else None))
        retry_s: float | None = None
        if holds_memory and value[0] == 0:
            # NVML does not name this process, perhaps not yet, so the list is read again soon
            # and then less and less often.
            previous = cached[3] if cached is not None else None
            retry_s = min(UNNAMED_RETRY_S if previous is None else previous * 2, self._process_refresh_s)
        self._process_cache[device.nvml_index] = (now, used, value, retry_s, own_state)
        if retry_s is not None:
            return None, value[1]  # The figure is unknown, which is not the same as 0.
        return value

    def bytes_by_pid(self, device: NvmlDevice) -> dict[int, int | None] | None:
        """The bytes NVML's last process list of ``device`` gave each pid (every pid; no driver call:
        the list the sampler read last), None where unknown (no list yet, NVML failed, another pid namespace).

        The process tree (processes/process_tree.py) reads its processes' GPU memory here.
        """
        return self._by_pid.get(device.nvml_index)

    def _list_processes(self, device: NvmlDevice) -> list[tuple[int, Any]] | None:
        try:
            processes = self._nvml.nvmlDeviceGetComputeRunningProcesses(device.handle)
            return [(int(p.pid), getattr(p, "usedGpuMemory", None)) for p in processes]
        except Exception:
            return None


def _optional_int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _bytes_by_pid(processes: list[tuple[int, Any]]) -> dict[int, int | None]:
    """NVML's entries summed per pid (a pid can hold several contexts); None where NVML could not tell."""
    by_pid: dict[int, int | None] = {}
    for proc_pid, used in processes:
        known = None if used is None or used == _NOT_AVAILABLE else int(used)
        if proc_pid in by_pid:
            previous = by_pid[proc_pid]
            by_pid[proc_pid] = None if previous is None or known is None else previous + known
        else:
            by_pid[proc_pid] = known
    return by_pid


def process_list(processes: list[tuple[int, Any]], pid: int | None) -> list[NvmlProcess]:
    """NVML's process list for the wire: one entry per pid, largest first, at most MAX_PROCESSES;
    ``pid`` None: none of them is known to be this process."""
    ordered = sorted(_bytes_by_pid(processes).items(), key=lambda item: (-(item[1] or 0), item[0]))
    return [{"pid": p, "used_bytes": used, "this_process": p == pid} for p, used in ordered[:MAX_PROCESSES]]


def attribute_to_pid(processes: list[tuple[int, Any]], pid: int, pid_exists: Callable[[int], bool]) -> int | None:
    """Bytes NVML attributes to ``pid``, ``0`` if provably none, ``None`` if unknown."""
    by_pid = _bytes_by_pid(processes)
    return by_pid.get(pid, 0) if _lists_our_namespace(by_pid, pid, pid_exists) else None


def _lists_our_namespace(by_pid: dict[int, int | None], pid: int, pid_exists: Callable[[int], bool]) -> bool:
    """Whether NVML's pids are those of our pid namespace: every other listed pid is a process here.

    Recent drivers give pids in the caller's namespace and leave out the rest;
    older ones give host pids in a container. There a pid absent from the list
    says nothing, and a listed pid equal to ours may be another process's (a
    kernel at pid 1234 in its container, another container's process at host
    pid 1234). A process that ended since the list only delays the figure.
    """
    return all(pid_exists(p) for p in by_pid if p != pid)


def _device(nvml: Any, index: int, handle: Any) -> NvmlDevice:
    """The device at NVML index ``index``; a fact NVML refuses is None."""
    return NvmlDevice(
        nvml_index=index,
        uuid=_safe(lambda: _text(nvml.nvmlDeviceGetUUID(handle))),
        name=_safe(lambda: _text(nvml.nvmlDeviceGetName(handle))),
        total_bytes=_safe(lambda: int(nvml.nvmlDeviceGetMemoryInfo(handle).total)),
        handle=handle,
    )


def _safe(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:
        return None


def _describe_nvml_error(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text[:200]


def _import_pynvml() -> Any:
    # The deprecated `pynvml` distribution (pulled in by many tools, e.g.
    # ipyexperiments) warns on import; a warning would print into the cell
    # that opened the comm. `nvidia-ml-py` provides the same module silently.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pynvml  # deferred: only when NVML is first needed

    return pynvml
