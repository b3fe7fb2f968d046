"""Host memory as samples show it: the kernel's resident set size, what of it
is in swap, and the machine's RAM, swap and OOM kills (:class:`HostReader`).

Per-cell accounting reads the RSS and its peak its own way, in the cell
hooks, through kernel_rss.py.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .cgroup import CgroupMemory, _non_negative
from .descriptors import close_descriptors, open_fd

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ...protocol_types import ContainerFigures, HostFigures


class HostReader:
    """Reads the RSS and the host's total and available RAM, once per sample.

    On Linux it reads ``/proc/<pid>/statm`` and ``/proc/meminfo``, both kept
    open and read with ``pread``. That takes a few microseconds, whereas
    psutil's ``virtual_memory()`` parses all of meminfo, which took about
    100 us per tick on a 16-core GPU machine, most of the sampler's cost at
    10 Hz. Elsewhere it uses psutil, when the kernel's environment has it.
    Figures that cannot be read are ``None``.

    The machine's total and available RAM and its swap (``SwapTotal``,
    ``SwapFree``) are read at most every ``machine_refresh_s``. The kernel
    builds all of /proc/meminfo for any read of it, which makes it the
    costlier of the two reads in a tick, and those figures never cause a
    sample on their own (sample.py); they only ride along. The container's
    limit, OOM kill count and swap (:class:`CgroupMemory`) are read at the
    same pace. Its usage is read every tick, with one small pread, so that it
    never lags the kernel's RSS, because a kernel can fill its limit within a
    second. The kernel's own swapped-out bytes (``VmSwap`` of
    ``/proc/<pid>/status``, a file of which the kernel formats some fifty
    lines for any read) are read at the slow pace too, because pages go to
    swap over seconds and a tick must stay cheap. A cgroup limit above the
    machine's RAM is no limit (:func:`_binding`), so the container's figures
    are then ``None``, and no usage is read per tick.

    The machine's OOM kill count (``oom_kill`` of ``/proc/vmstat``, on Linux
    4.13 and later) counts every process that the out-of-memory killer ever
    took on the machine. It is read at the slow pace too, from a file kept
    open like meminfo. A dead kernel's last sample and its restarted
    successor's first one tell whether the killer acted in between, which the
    frontend uses to explain a kernel's death. A rise is worth a sample
    (sample.py), so that a kill of another process while the kernel lives is
    in the kernel's last sample. The count is ``None`` where it cannot be
    read: where there is no such file or line (older Linux, or another
    system), or with psutil's backend.
    """

    # MemTotal, MemFree and MemAvailable are meminfo's first three lines (on
    # Linux 3.14 and later), and SwapTotal and SwapFree follow some dozen lines
    # later, about 450 bytes in. The kernel formats the whole file for any
    # read, so reading all of it (some 1.5 KB) costs no more.
    MEMINFO_READ_BYTES = 8192
    STATUS_READ_BYTES = 8192
    # vmstat is some 150 to 200 lines (about 4 KB on Linux 6.x, with oom_kill
    # some 2.5 KB in), and it grows a few lines with each kernel. It is
    # formatted whole for any read (about 12 us), once a second. The buffer
    # leaves room for four times that, because a line past it would read as
    # unknown.
    VMSTAT_READ_BYTES = 16384

    def __init__(
        self,
        pid: int | None = None,
        proc_root: str = "/proc",
        use_psutil: bool = True,
        machine_refresh_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        cgroup: CgroupMemory | None = None,
    ):
        self._pid = os.getpid() if pid is None else pid
        self._machine_refresh_s = machine_refresh_s
        self._clock = clock
        # When the machine-paced figures were read, and what they were.
        self._machine: tuple[float, _MachineFigures] = (-math.inf, _NO_MACHINE_FIGURES)
        self._psutil_swap_read: tuple[float, tuple[int | None, int | None]] = (-math.inf, (None, None))
        self._cgroup = cgroup if cgroup is not None else CgroupMemory(f"{proc_root}/{self._pid}", proc_root=proc_root)
        self._container: ContainerFigures | None = None
        self._page_size = _page_size()
        self._statm = open_fd(f"{proc_root}/{self._pid}/statm", os.O_RDONLY)
        self._meminfo = open_fd(f"{proc_root}/meminfo", os.O_RDONLY)
        self._status = open_fd(f"{proc_root}/{self._pid}/status", os.O_RDONLY)
        self._vmstat = open_fd(f"{proc_root}/vmstat", os.O_RDONLY)
        self._psutil: Any = None
        self._process: Any = None
        if use_psutil and (self._statm is None or self._meminfo is None):
            try:
                # psutil is an optional dependency, and cheap to import.
                import psutil

                self._process = psutil.Process(self._pid)
                self._psutil = psutil
            except Exception:
                # This is an ImportError, or NoSuchProcess in odd sandboxes.
                self._psutil = None

    @property
    def backend(self) -> str:
        return "psutil" if self._psutil is not None else "proc"

    def read(self) -> HostFigures:
        if self._psutil is not None:
            try:
                vm = self._psutil.virtual_memory()
                swap_total, swap_free = self._psutil_swap()
                return {
                    "rss_bytes": int(self._process.memory_info().rss),
                    "total_bytes": int(vm.total),
                    "available_bytes": int(vm.available),
                    "container": _binding(self._cgroup.read(), int(vm.total)),
                    # psutil has the process's swap only from smaps, which is
                    # Linux-only and costly, so it is not read.
                    "swapped_bytes": None,
                    "swap_total_bytes": swap_total,
                    "swap_free_bytes": swap_free,
                    # psutil has no OOM kill count, so it is unknown.
                    "oom_kill_count": None,
                }
            except Exception:
                # The reading falls through to /proc.
                pass
        now = self._clock()
        read_at, machine = self._machine
        container = self._container
        if now - read_at >= self._machine_refresh_s:
            machine = self._read_meminfo() + (self._read_swapped(), self._read_oom_kills())
            self._machine = (now, machine)
            # The container's usage was read just now, so it is not read again.
            self._container = _binding(self._cgroup.read(), machine[0])
            container = self._container.copy() if self._container is not None else None
        elif container is not None:
            container = {**container, "usage_bytes": self._cgroup.usage()}
        total, available, swap_total, swap_free, swapped, oom_kills = machine
        return {
            "rss_bytes": self.rss(),
            "total_bytes": total,
            "available_bytes": available,
            "container": container,
            "swapped_bytes": swapped,
            "swap_total_bytes": swap_total,
            "swap_free_bytes": swap_free,
            "oom_kill_count": oom_kills,
        }

    def rss(self) -> int | None:
        """The kernel's RSS alone, without the machine-wide figures."""
        if self._statm is not None:
            try:
                return int(os.pread(self._statm, 256, 0).split()[1]) * self._page_size
            except (OSError, IndexError, ValueError):
                return None
        if self._psutil is not None:
            try:
                return int(self._process.memory_info().rss)
            except Exception:
                return None
        return None

    def _read_meminfo(self) -> tuple[int | None, int | None, int | None, int | None]:
        """MemTotal, MemAvailable, SwapTotal and SwapFree in bytes, each None where
        it cannot be read."""
        if self._meminfo is None:
            return None, None, None, None
        try:
            text = b"\n" + os.pread(self._meminfo, self.MEMINFO_READ_BYTES, 0)
        except OSError:
            return None, None, None, None
        return (
            _status_kib(text, b"\nMemTotal:"),
            _status_kib(text, b"\nMemAvailable:"),
            _kib_figure(text, b"\nSwapTotal:"),
            _kib_figure(text, b"\nSwapFree:"),
        )

    def _read_swapped(self) -> int | None:
        """The kernel's own pages in swap (``VmSwap``), or None if unknown. The line
        is absent for kernel threads and before Linux 2.6.34."""
        if self._status is None:
            return None
        try:
            return _kib_figure(os.pread(self._status, self.STATUS_READ_BYTES, 0), b"\nVmSwap:")
        except OSError:
            return None

    def _read_oom_kills(self) -> int | None:
        """The machine's OOM kill count (``oom_kill`` of /proc/vmstat, on Linux 4.13
        and later), or None if unknown."""
        if self._vmstat is None:
            return None
        try:
            data = os.pread(self._vmstat, self.VMSTAT_READ_BYTES, 0)
        except OSError:
            return None
        # A read shorter than asked ended with the file, so its last line is
        # whole, with or without a newline, and one is added.
        return _vmstat_count(b"\n" + data + (b"\n" if len(data) < self.VMSTAT_READ_BYTES else b""), b"\noom_kill ")

    def _psutil_swap(self) -> tuple[int | None, int | None]:
        """The machine's swap total and free from psutil, read at the machine pace,
        or (None, None) where reading them fails."""
        now = self._clock()
        read_at, figures = self._psutil_swap_read
        if now - read_at < self._machine_refresh_s:
            return figures
        try:
            # On a Linux whose /proc/vmstat lacks pswpin and pswpout, psutil
            # warns here with a RuntimeWarning. On the sampler's thread,
            # thread_warnings.py drops it, so that it stays out of the user's
            # output (see test_host_swap.py).
            swap = self._psutil.swap_memory()
            figures = (int(swap.total), int(swap.free))
        except Exception:
            figures = (None, None)
        self._psutil_swap_read = (now, figures)
        return figures

    def close(self) -> None:
        close_descriptors(self, ("_statm", "_meminfo", "_status", "_vmstat"))
        self._cgroup.close()
        self._machine = (-math.inf, _NO_MACHINE_FIGURES)
        self._psutil_swap_read = (-math.inf, (None, None))
        self._container = None


# MemTotal, MemAvailable, SwapTotal, SwapFree, the kernel's VmSwap and the
# machine's OOM kill count, which are all read at the machine pace.
_MachineFigures = tuple[int | None, int | None, int | None, int | None, int | None, int | None]
_NO_MACHINE_FIGURES: _MachineFigures = (None, None, None, None, None, None)


def _binding(container: ContainerFigures | None, total: int | None) -> ContainerFigures | None:
    """The container's figures, or None where its limit is above the machine's RAM (``MemTotal``).

    The cgroup's usage counts resident pages (and the kernel's own memory), so
    it never reaches such a limit, and the kernel dies when the machine runs
    out, as it would without a limit. Examples are ``docker run -m 512g`` or a
    Kubernetes limit on a 64 GiB node, or a WSL2 VM smaller than the limit. A
    limit equal to MemTotal stays a limit, because under LXC's lxcfs MemTotal
    is the container's limit itself.
    """
    if container is not None and total is not None and container["limit_bytes"] > total:
        return None
    return container


def _page_size() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 4096


def _status_kib(data: bytes, key: bytes) -> int | None:
    # The data looks like "...\nVmHWM:\t  123456 kB\n...".
    start = data.find(key)
    if start < 0:
        return None
    end = data.find(b"\n", start + 1)
    try:
        return int(data[start + len(key) : end if end >= 0 else None].split()[0]) * 1024
    except (IndexError, ValueError):
        return None


def _kib_figure(data: bytes, key: bytes) -> int | None:
    """:func:`_status_kib`, where a negative figure, from a malformed file, is
    unknown too, because the frontend rejects one."""
    return _non_negative(_status_kib(data, key))


def _vmstat_count(data: bytes, key: bytes) -> int | None:
    """A counter from a /proc/vmstat text, whose lines look like ``oom_kill 42``
    and each end in a newline, or None where it is absent or malformed."""
    start = data.find(key)
    if start < 0:
        return None
    start += len(key)
    end = data.find(b"\n", start)
    if end < 0:
        # The read stopped inside the line, so its figure may be cut short.
        return None
    figure = data[start:end].strip()
    # Only digits are accepted, because int() would take a sign, blanks inside
    # or underscores, none of which Linux writes.
    return int(figure) if figure.isdigit() else None
