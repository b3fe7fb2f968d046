"""Swap as the host reader reads it: the kernel's own swapped-out bytes (VmSwap) and the machine's
swap, at the machine pace; unknown where absent or malformed; psutil's backend and its warning;
and the container's swap the reader carries.

Fake /proc trees, and this machine's real /proc.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path

import pytest
from _swap_helpers import GIB, MEMINFO, MIB, _proc, _status, _v2_dir

from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory
from jupyterlab_vram_helper.sampling.readers.host import HostReader
from jupyterlab_vram_helper.sampling.sampler import THREAD_NAME as SAMPLER_THREAD_NAME
from jupyterlab_vram_helper.thread_warnings import HelperThreadWarnings


def _reader(proc: Path, now: list, cgroup_root: Path | None = None) -> HostReader:
    cgroup = CgroupMemory(str(proc / "7"), str(cgroup_root if cgroup_root is not None else proc / "no-cgroup-fs"))
    return HostReader(pid=7, proc_root=str(proc), use_psutil=False, clock=lambda: now[0], cgroup=cgroup)


def test_the_kernels_swapped_bytes_and_the_machines_swap_are_read(tmp_path) -> None:
    r = _reader(_proc(tmp_path), [0.0])
    figures = r.read()
    assert figures["swapped_bytes"] == 524288 * 1024
    assert figures["swap_total_bytes"] == 8000000 * 1024
    assert figures["swap_free_bytes"] == 6000000 * 1024
    assert figures["total_bytes"] == 16000000 * 1024 and figures["available_bytes"] == 8000000 * 1024
    r.close()
    assert r.read()["swapped_bytes"] is None  # closed: unknown, never an exception


def test_swap_is_read_at_the_machine_pace_and_the_rss_every_tick(tmp_path) -> None:
    proc = _proc(tmp_path)
    now = [100.0]
    r = _reader(proc, now)
    assert r.read()["swapped_bytes"] == 512 * MIB
    (proc / "7" / "status").write_text(_status("  1048576 kB"))
    (proc / "meminfo").write_text(MEMINFO.format(total="8000000", free="1000"))
    (proc / "7" / "statm").write_text("1000 260 30 1 0 100 0\n")
    now[0] += 0.9
    figures = r.read()
    assert figures["swapped_bytes"] == 512 * MIB  # within the second: as read before, status not read again
    assert figures["swap_free_bytes"] == 6000000 * 1024
    assert figures["rss_bytes"] == 260 * os.sysconf("SC_PAGE_SIZE")  # the kernel's RSS: every tick
    now[0] += 0.1
    figures = r.read()
    assert figures["swapped_bytes"] == GIB
    assert figures["swap_free_bytes"] == 1000 * 1024


def test_a_tick_within_the_second_reads_neither_status_nor_meminfo(tmp_path, monkeypatch) -> None:
    proc = _proc(tmp_path)
    now = [0.0]
    r = _reader(proc, now)
    r.read()
    read_fds = []
    real_pread = os.pread

    def counting_pread(fd: int, size: int, offset: int) -> bytes:
        read_fds.append(fd)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting_pread)
    now[0] += 0.5
    r.read()
    assert read_fds == [r._statm]  # one pread per tick, as before swap was read
    now[0] += 0.5
    read_fds.clear()
    r.read()
    assert r._status in read_fds and r._meminfo in read_fds


def test_no_swap_configured_is_zero_not_unknown(tmp_path) -> None:
    figures = _reader(_proc(tmp_path, swap_total="0", swap_free="0", vm_swap="       0 kB"), [0.0]).read()
    assert (figures["swapped_bytes"], figures["swap_total_bytes"], figures["swap_free_bytes"]) == (0, 0, 0)


def test_absent_swap_lines_and_status_are_unknown(tmp_path) -> None:
    proc = _proc(tmp_path, vm_swap=None)  # a status without VmSwap (a kernel thread's, Linux < 2.6.34)
    (proc / "meminfo").write_text("MemTotal: 16000 kB\nMemFree: 1 kB\nMemAvailable: 8000 kB\n")  # no swap lines
    figures = _reader(proc, [0.0]).read()
    assert (figures["swapped_bytes"], figures["swap_total_bytes"], figures["swap_free_bytes"]) == (None, None, None)
    assert figures["total_bytes"] == 16000 * 1024  # the rest still reads
    (proc / "7" / "status").unlink()
    assert _reader(proc, [0.0]).read()["swapped_bytes"] is None  # no status file at all


@pytest.mark.parametrize(
    "swap_total, swap_free, vm_swap",
    [
        ("lots", "-5", "abc kB"),
        ("", "kB", ""),
        ("-1", "1.5", "-3 kB"),
        ("\\xff", "0x10", "\\xff kB"),
    ],
)
def test_malformed_swap_figures_are_unknown_never_an_exception(tmp_path, swap_total, swap_free, vm_swap) -> None:
    proc = _proc(tmp_path, swap_total=swap_total, swap_free=swap_free, vm_swap=vm_swap)
    for path in (proc / "meminfo", proc / "7" / "status"):  # the kernel's files are bytes: undecodable ones too
        path.write_bytes(path.read_bytes().replace(b"\\xff", b"\xff"))
    figures = _reader(proc, [0.0]).read()
    assert (figures["swapped_bytes"], figures["swap_total_bytes"], figures["swap_free_bytes"]) == (None, None, None)
    assert figures["total_bytes"] == 16000000 * 1024  # the other figures are untouched
    assert figures["rss_bytes"] == 250 * os.sysconf("SC_PAGE_SIZE")


def test_this_machines_real_proc_swap_figures_parse_to_integers() -> None:
    """This process's VmSwap and the machine's SwapTotal/SwapFree, against the files read here (no swap: 0 is an
    answer)."""
    if not os.path.exists("/proc/self/status") or not os.path.exists("/proc/meminfo"):
        pytest.skip("no Linux /proc")

    def kib(path: str, key: str) -> int:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise AssertionError(f"{key} not in {path}")

    reader = HostReader(use_psutil=False)
    try:
        figures = reader.read()
    finally:
        reader.close()
    for key in ("swapped_bytes", "swap_total_bytes", "swap_free_bytes"):
        value = figures[key]  # type: ignore[literal-required]
        assert type(value) is int and value >= 0, (key, value)
    total = kib("/proc/meminfo", "SwapTotal")
    assert figures["swap_total_bytes"] == total  # only swapon/swapoff change it
    assert figures["swap_free_bytes"] <= total  # type: ignore[operator]
    if total == 0:  # a machine without swap: nothing can be in it
        assert figures["swap_free_bytes"] == 0
        assert figures["swapped_bytes"] == 0
    else:
        assert abs(figures["swap_free_bytes"] - kib("/proc/meminfo", "SwapFree")) <= 256 * MIB  # type: ignore[operator]
        assert abs(figures["swapped_bytes"] - kib("/proc/self/status", "VmSwap")) <= 256 * MIB  # type: ignore[operator]


def test_psutil_backend_gives_the_machines_swap_and_not_the_kernels(tmp_path) -> None:
    psutil = pytest.importorskip("psutil")
    r = HostReader(proc_root=str(tmp_path / "no-proc-here"))
    assert r.backend == "psutil"
    figures = r.read()
    assert figures["swapped_bytes"] is None  # psutil has it only from smaps: too costly for a sampler
    assert figures["swap_total_bytes"] == psutil.swap_memory().total
    assert 0 <= figures["swap_free_bytes"] <= figures["swap_total_bytes"]  # type: ignore[operator]


def test_psutils_swap_warning_on_the_sampler_thread_stays_out_of_the_users_output(tmp_path, monkeypatch) -> None:
    """psutil.swap_memory() warns (RuntimeWarning) on a Linux without pswpin in /proc/vmstat; the helper's
    threads' warnings are dropped (thread_warnings.py), so the sampler's reading shows nothing."""
    psutil = pytest.importorskip("psutil")
    real_swap_memory = psutil.swap_memory
    text = "'sin' and 'sout' swap memory stats couldn't be determined and were set to 0"

    def warning_swap_memory():  # what psutil does there (psutil/_pslinux.py)
        warnings.warn(text, RuntimeWarning, stacklevel=2)
        return real_swap_memory()

    monkeypatch.setattr(psutil, "swap_memory", warning_swap_memory)
    now = [0.0]
    r = HostReader(proc_root=str(tmp_path / "no-proc-here"), clock=lambda: now[0])
    assert r.backend == "psutil"
    results: list = []

    def read_on(name: str) -> None:
        thread = threading.Thread(target=lambda: results.append(r.read()), name=name)
        thread.start()
        thread.join()

    shown: list = []
    guard = HelperThreadWarnings()
    with warnings.catch_warnings():  # puts back the filters and showwarning after
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *rest: shown.append(str(message))
        guard.install()
        try:
            read_on(SAMPLER_THREAD_NAME)
            assert shown == []
            assert results[0]["swap_total_bytes"] == real_swap_memory().total  # the psutil figures, read
            now[0] += 1.0  # the machine pace: swap_memory() is called again
            read_on("a-users-thread")  # elsewhere the same warning shows: it was raised, and dropped above
            assert shown == [text]
        finally:
            guard.uninstall()


def test_the_host_reader_carries_the_containers_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), GIB, swap_max=f"{GIB}\n", swap_current=f"{MIB}\n")
    proc = _proc(tmp_path, cgroup="0::/k\n")
    now = [0.0]
    r = _reader(proc, now, root)
    container = r.read()["container"]
    assert container is not None
    assert (container["swap_limit_bytes"], container["swap_usage_bytes"]) == (GIB, MIB)
    (d / "memory.swap.current").write_text(f"{2 * MIB}\n")
    now[0] += 0.5
    assert r.read()["container"]["swap_usage_bytes"] == MIB  # type: ignore[index]  # at the machine pace
    now[0] += 0.5
    assert r.read()["container"]["swap_usage_bytes"] == 2 * MIB  # type: ignore[index]
    r.close()
