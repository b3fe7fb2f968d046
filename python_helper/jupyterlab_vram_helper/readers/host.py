"""Host memory: the kernel's resident set size and the machine's RAM.

:class:`HostReader` feeds samples; :class:`ProcSelfRss` gives per-cell
accounting the kernel's RSS and its high-water mark (peak), cheaply.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, Optional, Tuple

from ..protocol import HostFigures


class HostReader:
    """Reads RSS and host total/available RAM.

    Uses psutil when the kernel's environment has it, else Linux /proc. On a
    platform with neither, figures are ``None``.
    """

    def __init__(self, pid: Optional[int] = None, proc_root: str = "/proc", use_psutil: bool = True):
        self._pid = os.getpid() if pid is None else pid
        self._proc_root = proc_root
        self._psutil: Any = None
        self._process: Any = None
        if use_psutil:
            try:
                import psutil  # an optional dependency, cheap to import

                self._process = psutil.Process(self._pid)
                self._psutil = psutil
            except Exception:  # ImportError, or NoSuchProcess in odd sandboxes
                self._psutil = None
        self._page_size = _page_size()

    @property
    def backend(self) -> str:
        return "psutil" if self._psutil is not None else "proc"

    def read(self) -> HostFigures:
        if self._psutil is not None:
            try:
                rss = int(self._process.memory_info().rss)
                vm = self._psutil.virtual_memory()
                return {
                    "rss_bytes": rss,
                    "total_bytes": int(vm.total),
                    "available_bytes": int(vm.available),
                }
            except Exception:
                pass  # fall through to /proc
        total, available = self._read_meminfo()
        return {"rss_bytes": self._read_statm_rss(), "total_bytes": total, "available_bytes": available}

    def rss(self) -> Optional[int]:
        """The kernel's RSS alone (no machine-wide figures)."""
        if self._psutil is not None:
            try:
                return int(self._process.memory_info().rss)
            except Exception:
                pass
        return self._read_statm_rss()

    def _read_statm_rss(self) -> Optional[int]:
        try:
            with open(f"{self._proc_root}/{self._pid}/statm", "rb") as f:
                fields = f.read().split()
            return int(fields[1]) * self._page_size
        except (OSError, IndexError, ValueError):
            return None

    def _read_meminfo(self) -> "tuple[Optional[int], Optional[int]]":
        total: Optional[int] = None
        available: Optional[int] = None
        try:
            with open(f"{self._proc_root}/meminfo", "rb") as f:
                for line in f:
                    if line.startswith(b"MemTotal:"):
                        total = _kib_line(line)
                    elif line.startswith(b"MemAvailable:"):
                        available = _kib_line(line)
                    if total is not None and available is not None:
                        break
        except OSError:
            pass
        return total, available


def _kib_line(line: bytes) -> Optional[int]:
    # "MemTotal:       16318820 kB"
    try:
        return int(line.split()[1]) * 1024
    except (IndexError, ValueError):
        return None


class ProcSelfRss:
    """This process's RSS and peak RSS from Linux /proc, for per-cell accounting.

    - ``rss()``: resident pages from ``/proc/self/statm`` (what psutil reports
      as ``rss``, so cell records and samples agree).
    - ``rss_and_peak()``: ``VmRSS`` and ``VmHWM`` (the high-water mark of the
      RSS) from ``/proc/self/status``; ``peak()``: ``VmHWM`` alone, for a
      background thread.
    - ``reset_peak()``: writes ``5`` to ``/proc/self/clear_refs`` (Linux >= 4.0),
      which sets VmHWM back to the current RSS. Process-wide: it also resets
      what ``getrusage(...).ru_maxrss`` reports to the user.

    The files stay open and are read with ``pread`` (a few microseconds, versus
    ~15 us for open/read/close): this runs twice per cell. A process forked
    from the kernel reopens them. Every failure gives ``None``/``False``, never
    an exception; a capability that failed once stays off.

    The syscalls go through libc with the GIL held (:class:`_GilHoldingIo`).
    ``os.pread``/``os.write`` release the GIL, and right around a cell's hooks
    IPython's history thread and ipykernel's IOPub thread want it: getting it
    back cost ~100 us per call in a kernel, twenty times the read itself.
    """

    def __init__(self, proc_self: str = "/proc/self", page_size: Optional[int] = None, hold_gil: bool = True):
        self._io = _GilHoldingIo.create() if hold_gil else None
        self._proc_self = proc_self
        self._page_size = page_size if page_size is not None else _page_size()
        self._statm: Optional[int] = None
        self._status: Optional[int] = None
        self._clear_refs: Optional[int] = None
        self.can_reset = True  # until a write fails
        self._open()
        # A forked child (multiprocessing) must not read its parent's files.
        # Checked at fork rather than with a getpid() per call: the hooks pay
        # for every syscall.
        if hasattr(os, "register_at_fork"):
            reopen = weakref.WeakMethod(self._open)
            os.register_at_fork(after_in_child=lambda: _call_if_alive(reopen))

    def _open(self) -> None:
        self.close()
        self._statm = _open_fd(f"{self._proc_self}/statm", os.O_RDONLY)
        self._status = _open_fd(f"{self._proc_self}/status", os.O_RDONLY)
        if self.can_reset:
            self._clear_refs = _open_fd(f"{self._proc_self}/clear_refs", os.O_WRONLY)
            self.can_reset = self._clear_refs is not None

    @property
    def available(self) -> bool:
        return self._status is not None or self._statm is not None

    def rss(self) -> Optional[int]:
        if self._statm is None:
            return self.rss_and_peak()[0]
        try:
            return int(self._pread(self._statm, 256).split()[1]) * self._page_size
        except (OSError, IndexError, ValueError):
            return None

    def rss_and_peak(self) -> Tuple[Optional[int], Optional[int]]:
        if self._status is None:
            return None, None
        try:
            data = self._pread(self._status, 8192)
        except OSError:
            return None, None
        return _status_kib(data, b"\nVmRSS:"), _status_kib(data, b"\nVmHWM:")

    def peak(self) -> Optional[int]:
        """VmHWM alone, read with ``os.pread`` (which lets other threads run): for a background thread."""
        if self._status is None:
            return None
        try:
            return _status_kib(os.pread(self._status, 8192, 0), b"\nVmHWM:")
        except OSError:
            return None

    def reset_peak(self) -> bool:
        """Make VmHWM the current RSS; False if this kernel cannot."""
        if not self.can_reset:
            return False
        try:
            if self._io is not None:
                self._io.write(self._clear_refs, b"5")  # type: ignore[arg-type]
            else:
                os.write(self._clear_refs, b"5")  # type: ignore[arg-type]
            return True
        except (OSError, TypeError):
            self.can_reset = False
            return False

    def _pread(self, fd: int, size: int) -> bytes:
        if self._io is not None:
            return self._io.pread(fd, size)
        return os.pread(fd, size, 0)

    def close(self) -> None:
        for name in ("_statm", "_status", "_clear_refs"):
            fd = getattr(self, name, None)
            setattr(self, name, None)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


class _GilHoldingIo:
    """libc ``pread``/``write`` called through ``ctypes.PyDLL``, which keeps the GIL.

    For a few microseconds of /proc I/O, holding the GIL is far cheaper than
    handing it to a busy thread and waiting to get it back. One buffer is
    reused: calls cannot overlap, since each holds the GIL throughout.
    """

    def __init__(self, libc: Any, ctypes: Any):
        self._ctypes = ctypes
        self._buffer = ctypes.create_string_buffer(8192)
        self._pread = libc.pread
        self._pread.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long)
        self._pread.restype = ctypes.c_ssize_t
        self._write = libc.write
        self._write.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
        self._write.restype = ctypes.c_ssize_t

    @classmethod
    def create(cls) -> "Optional[_GilHoldingIo]":
        try:
            import ctypes

            return cls(ctypes.PyDLL(None), ctypes)  # the process's own symbols: libc
        except Exception:  # no ctypes, no dlopen(NULL), no pread symbol: use os.*
            return None

    def pread(self, fd: int, size: int) -> bytes:
        size = min(size, len(self._buffer))
        count = self._pread(fd, self._buffer, size, 0)
        if count < 0:
            raise OSError(self._ctypes.get_errno(), "pread failed")
        return self._buffer[:count]

    def write(self, fd: int, data: bytes) -> None:
        if self._write(fd, data, len(data)) != len(data):
            raise OSError(self._ctypes.get_errno(), "write failed")


def _call_if_alive(method: "weakref.WeakMethod[Any]") -> None:
    bound = method()
    if bound is not None:
        bound()


def _open_fd(path: str, flags: int) -> Optional[int]:
    try:
        return os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


def _page_size() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 4096


def _status_kib(data: bytes, key: bytes) -> Optional[int]:
    # "...\nVmHWM:\t  123456 kB\n..."
    start = data.find(key)
    if start < 0:
        return None
    end = data.find(b"\n", start + 1)
    try:
        return int(data[start + len(key) : end if end >= 0 else None].split()[0]) * 1024
    except (IndexError, ValueError):
        return None
