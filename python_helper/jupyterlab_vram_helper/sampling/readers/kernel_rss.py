"""The kernel's RSS and its high-water mark (peak), as per-cell accounting
reads them in the cell hooks. :class:`ProcSelfRss` reads them exactly and
cheaply, because the hooks run at every cell."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, Protocol

from ...forking import call_in_forked_child
from .descriptors import close_descriptors, open_fd
from .host import HostReader, _page_size


class KernelRss(Protocol):
    """The kernel's RSS and its high-water mark, as per-cell accounting reads them.

    ``rss_and_peak()`` and ``reset_peak()`` run in the cell hooks, on the
    kernel's main thread, and ``rss_and_peak(hold_gil=False)`` runs on a
    background thread. A reading may take more than one system call, so the
    caller keeps a reset from falling between a reading's start and end; in
    cell_accounting.py the sender reads under the lock that the hooks take
    before they reset.
    """

    can_reset: bool

    def rss_and_peak(self, hold_gil: bool = True) -> tuple[int | None, int | None]: ...

    def reset_peak(self) -> bool: ...

    def close(self) -> None: ...


def kernel_rss() -> KernelRss:
    """A reader of Linux's /proc/self where there is one, or elsewhere of
    psutil's RSS, without a peak."""
    proc = ProcSelfRss()
    if proc.available:
        return proc
    return PsutilRss()


class PsutilRss:
    """Reads the RSS alone, on macOS and Windows, where there is no high-water
    mark to read or reset."""

    can_reset = False

    def __init__(self) -> None:
        self._reader = HostReader()

    def rss_and_peak(self, hold_gil: bool = True) -> tuple[int | None, int | None]:
        return self._reader.rss(), None

    def reset_peak(self) -> bool:
        return False

    def close(self) -> None:
        # This closes the files that the reader keeps open (status, vmstat and
        # the cgroup's).
        self._reader.close()


class ProcSelfRss:
    """This process's RSS and peak RSS from Linux /proc, for per-cell accounting.

    - ``rss_and_peak()`` returns the RSS and its high-water mark ``VmHWM``,
      exactly, read the cheap way when it can be (see below). The RSS is
      ``VmRSS``, which is what psutil reports as ``rss`` and what the samples
      read from ``statm``, so that cell records and samples agree.
    - ``reset_peak()`` writes ``5`` to ``/proc/self/clear_refs`` (on Linux 4.0
      and later), which sets VmHWM back to the current RSS. The reset is
      process-wide, so it also lowers what ``getrusage(...).ru_maxrss``
      reports to the user, down to the mark that Linux keeps apart (see
      below).

    The cheap way works as follows. ``/proc/self/status`` has VmHWM, but the kernel formats
    some fifty lines for any read of it: 34 us at a cell's start with the
    caches cold, where reading the RSS from ``statm`` and then the maximum
    RSS from ``getrusage`` takes 25. That maximum is the larger of VmHWM's
    counter and a mark that Linux keeps for the process apart from it: the
    high-water mark of every thread that exited, and of the program that the
    process ran before ``exec`` (a kernel starts with its launcher's, such as
    the Jupyter server's). VmHWM is never below the RSS, so a maximum no
    higher than the RSS read just before proves VmHWM equal to it. statm is
    read first, so that a rise and fall between the two reads still shows.
    That is the common case once the kernel is larger than its launcher was,
    because the hooks reset VmHWM wherever it is above the RSS at a cell's
    start.

    Where the proof fails, ``status`` is read. Its VmHWM says why: either it is
    above the RSS, because a cell freed memory, or it is not, and the maximum
    is still higher because of that apart mark, which never drops. Either way
    the next reading goes straight to ``status`` until one finds VmHWM at the
    RSS and the apart mark below it, so a failed proof costs the two cheap
    reads once, not at every cell. ``getrusage`` is asked for the calling
    thread (``RUSAGE_THREAD``), which gives the same maximum without the
    per-thread loop that ``RUSAGE_SELF`` makes over a kernel's dozens of
    OpenMP and CUDA threads. It is checked once at open to report a maximum
    of at least about VmHWM, because a layer that emulates Linux and reports 0
    would otherwise prove every peak equal to the RSS.

    The files stay open and are read with ``pread``, which takes a few
    microseconds, versus about 15 us to open, read and close. A process forked
    from the kernel reopens them. Every failure gives ``None`` or ``False``,
    never an exception, and a capability that failed once stays off.

    In the hooks the system calls go through libc with the GIL held
    (:class:`_GilHoldingIo`). ``os.pread`` and ``os.write`` release the GIL,
    and right around a cell's hooks IPython's history thread and ipykernel's
    IOPub thread want it, so getting it back cost about 100 us per call in a
    kernel, twenty times the read itself. A background thread passes
    ``hold_gil=False``. ``resource.getrusage`` keeps the GIL by itself.
    """

    def __init__(self, proc_self: str = "/proc/self", getrusage: Callable[[], Any] | None = None):
        self._io = _GilHoldingIo.create()
        self._proc_self = proc_self
        # A call that returns an object with ``ru_maxrss`` in KiB, with no call
        # layer of the helper's in between, since each layer costs time.
        self._getrusage = getrusage if getrusage is not None else _getrusage_thread()
        self._page_kib = _page_size() // 1024
        self._status: int | None = None
        self._statm: int | None = None
        self._clear_refs: int | None = None
        # One call per file, bound at open: each call layer costs the hooks a
        # microsecond or more when caches are cold.
        self._read_status: Callable[[], bytes] | None = None
        self._read_statm: Callable[[], bytes] | None = None
        self._reset: Callable[[], None] | None = None
        # This stays True until a write fails.
        self.can_reset = True
        # Whether the next reading tries the cheap reads, which it does when
        # the last one found VmHWM at the RSS.
        self._try_cheap = False
        # The apart mark in KiB, which is the maximum that getrusage showed
        # above VmHWM.
        self._apart_mark_kib = 0
        self._open()
        # A forked child must not read its parent's files.
        call_in_forked_child(self._open)

    def _open(self) -> None:
        self.close()
        self._apart_mark_kib = 0
        reader = self._io.reader if self._io is not None else _os_reader
        writer = self._io.writer if self._io is not None else _os_writer
        self._status = open_fd(f"{self._proc_self}/status", os.O_RDONLY)
        if self._status is not None:
            self._read_status = reader(self._status, 8192)
            if self._getrusage is not None and self._page_kib > 0:
                self._statm = open_fd(f"{self._proc_self}/statm", os.O_RDONLY)
                if self._statm is not None:
                    self._read_statm = reader(self._statm, 256)
                    self._try_cheap = self._getrusage_agrees()
        if self.can_reset:
            self._clear_refs = open_fd(f"{self._proc_self}/clear_refs", os.O_WRONLY)
            self.can_reset = self._clear_refs is not None
            if self._clear_refs is not None:
                self._reset = writer(self._clear_refs, b"5")

    def _getrusage_agrees(self) -> bool:
        """Whether getrusage's maximum is at least about VmHWM, as on Linux. If it is
        not, the cheap reads stay off.

        The test is approximate because recent kernels count the RSS exactly in
        /proc but not in getrusage, which can then be a little lower. Half of
        VmHWM is far below that difference and far above a layer that reports
        nothing.
        """
        try:
            maximum = self._getrusage().ru_maxrss  # type: ignore[misc]
            _, high_water = _rss_and_high_water(os.pread(self._status, 8192, 0))  # type: ignore[arg-type]
        except (OSError, ValueError, AttributeError, TypeError):
            return False
        return high_water is not None and isinstance(maximum, int) and maximum > 0 and maximum * 1024 * 2 >= high_water

    @property
    def available(self) -> bool:
        return self._status is not None

    def rss_and_peak(self, hold_gil: bool = True) -> tuple[int | None, int | None]:
        if self._read_status is None or self._status is None:
            return None, None
        maximum_kib = None
        # The cheap reads are only ever tried with statm open.
        if self._try_cheap:
            try:
                statm = self._read_statm() if hold_gil else os.pread(self._statm, 256, 0)  # type: ignore[misc,arg-type]
                # statm reads "size resident shared ...", in pages. It is read
                # before the maximum (see the class docstring).
                start = statm.index(b" ") + 1
                rss_kib = int(statm[start : statm.index(b" ", start)]) * self._page_kib
                maximum_kib = self._getrusage().ru_maxrss  # type: ignore[misc]
            except (OSError, ValueError):
                maximum_kib = None
            else:
                if maximum_kib <= rss_kib:
                    # Since rss <= VmHWM <= maximum <= rss, VmHWM equals the RSS.
                    return rss_kib * 1024, rss_kib * 1024
        try:
            data = self._read_status() if hold_gil else os.pread(self._status, 8192, 0)
        except OSError:
            return None, None
        rss, high_water = _rss_and_high_water(data)
        if rss is None or high_water is None:
            return rss, high_water
        if maximum_kib is not None and maximum_kib * 1024 > high_water:
            # The mark kept apart from VmHWM is this high.
            self._apart_mark_kib = maximum_kib
        # The cheap reads are tried again only where they could prove VmHWM at
        # the next reading.
        self._try_cheap = self._read_statm is not None and high_water <= rss and self._apart_mark_kib * 1024 <= rss
        return rss, high_water

    def reset_peak(self) -> bool:
        """Make VmHWM the current RSS, and return False if this kernel cannot."""
        if self._reset is None or not self.can_reset:
            return False
        try:
            self._reset()
            return True
        except OSError:
            self.can_reset = False
            return False

    def close(self) -> None:
        self._read_status = self._read_statm = self._reset = None
        self._try_cheap = False
        close_descriptors(self, ("_status", "_statm", "_clear_refs"))


def _getrusage_thread() -> Callable[[], Any] | None:
    """``getrusage`` of the calling thread as one call, or None where it fails.
    Its ``ru_maxrss`` is still the process's, in KiB on Linux."""
    try:
        import resource

        who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
        getrusage = functools.partial(resource.getrusage, who)
        # A sandbox that refuses the call refuses it here, once.
        getrusage()
    except Exception:
        # There is no resource module, or a sandbox refuses the call.
        return None
    return getrusage


class _GilHoldingIo:
    """libc ``pread``/``write`` called through ``ctypes.PyDLL``, which keeps the GIL.

    For a few microseconds of /proc I/O, holding the GIL is far cheaper than
    handing it to a busy thread and waiting to get it back. One buffer is
    reused, which is safe because calls cannot overlap, since each holds the
    GIL throughout.

    Each file gets its own call, with its arguments built once as ctypes
    objects, so that there is no ``argtypes`` conversion per call, which the
    hooks would pay for with cold caches.
    """

    def __init__(self, libc: Any, ctypes: Any):
        self._ctypes = ctypes
        self._buffer = ctypes.create_string_buffer(8192)
        self._pread = libc.pread
        self._pread.restype = ctypes.c_ssize_t
        self._write = libc.write
        self._write.restype = ctypes.c_ssize_t

    @classmethod
    def create(cls) -> _GilHoldingIo | None:
        try:
            import ctypes

            # The process's own symbols include libc's.
            return cls(ctypes.PyDLL(None), ctypes)
        except Exception:
            # There is no ctypes, no dlopen(NULL) or no pread symbol, so the
            # caller uses os.pread and os.write instead.
            return None

    def reader(self, fd: int, size: int) -> Callable[[], bytes]:
        """A call that reads up to ``size`` bytes of ``fd`` from offset 0."""
        ctypes, pread, buffer = self._ctypes, self._pread, self._buffer
        args = (ctypes.c_int(fd), buffer, ctypes.c_size_t(min(size, len(buffer))), ctypes.c_long(0))

        def read() -> bytes:
            count = pread(*args)
            if count < 0:
                raise OSError(ctypes.get_errno(), "pread failed")
            return buffer[:count]

        return read

    def writer(self, fd: int, data: bytes) -> Callable[[], None]:
        """A call that writes ``data`` to ``fd``."""
        ctypes, write = self._ctypes, self._write
        args = (ctypes.c_int(fd), ctypes.c_char_p(data), ctypes.c_size_t(len(data)))

        def write_data() -> None:
            if write(*args) != len(data):
                raise OSError(ctypes.get_errno(), "write failed")

        return write_data


def _os_reader(fd: int, size: int) -> Callable[[], bytes]:
    return lambda: os.pread(fd, size, 0)


def _os_writer(fd: int, data: bytes) -> Callable[[], None]:
    def write_data() -> None:
        if os.write(fd, data) != len(data):
            raise OSError("short write")

    return write_data


def _rss_and_high_water(status: bytes) -> tuple[int | None, int | None]:
    """VmRSS and VmHWM of a /proc/<pid>/status text, in bytes. Both are read in
    one call, since the hooks parse the text at every cell."""
    # The text looks like "...\nVmHWM:\t  123456 kB\nVmRSS:\t  123400 kB\n...",
    # and int() strips the blanks.
    rss = status.find(b"\nVmRSS:")
    high_water = status.find(b"\nVmHWM:")
    try:
        return (
            int(status[rss + 7 : status.index(b"kB", rss)]) * 1024 if rss >= 0 else None,
            int(status[high_water + 7 : status.index(b"kB", high_water)]) * 1024 if high_water >= 0 else None,
        )
    except ValueError:
        return None, None
