"""Host memory: the kernel's resident set size and the machine's RAM."""

from __future__ import annotations

import os
from typing import Any, Optional

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
        try:
            self._page_size = os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            self._page_size = 4096

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
