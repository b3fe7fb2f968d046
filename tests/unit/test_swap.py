"""Swap: the kernel's own swapped-out bytes, the machine's swap and the container's swap limit and usage.

Fake /proc and cgroup trees (v1 and v2), and this machine's real /proc.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path
from typing import Optional

import pytest

from jupyterlab_vram_helper.readers import host as host_module
from jupyterlab_vram_helper.readers.cgroup import CgroupMemory
from jupyterlab_vram_helper.readers.host import HostReader
from jupyterlab_vram_helper.sample import significant_change
from jupyterlab_vram_helper.sampler import THREAD_NAME as SAMPLER_THREAD_NAME
from jupyterlab_vram_helper.thread_warnings import HelperThreadWarnings

GIB = 1 << 30
MIB = 1 << 20
V1_UNLIMITED = "9223372036854771712\n"

# A real meminfo's head, swap lines included (Linux 6.x), in kB.
MEMINFO = (
    "MemTotal:       16000000 kB\nMemFree:          100000 kB\nMemAvailable:    8000000 kB\n"
    "Buffers:           10000 kB\nCached:           500000 kB\nSwapCached:        20000 kB\n"
    "Active:          4000000 kB\nInactive:        2000000 kB\nActive(anon):    3000000 kB\n"
    "Inactive(anon):  1000000 kB\nActive(file):    1000000 kB\nInactive(file):  1000000 kB\n"
    "Unevictable:           0 kB\nMlocked:               0 kB\nSwapTotal:       {total} kB\n"
    "SwapFree:        {free} kB\nZswap:                 0 kB\nZswapped:              0 kB\n"
    "Dirty:               100 kB\nWriteback:             0 kB\nAnonPages:       4000000 kB\n"
    + "".join(f"Counter{i}:       {i} kB\n" for i in range(30))
)


def _status(swap: Optional[str]) -> str:
    """A /proc/<pid>/status whose VmSwap line reads ``swap`` (None: no such line, as in a kernel thread's)."""
    lines = ["Name:\tpython3", "State:\tS (sleeping)", "Pid:\t7", "VmPeak:\t 2000000 kB", "VmSize:\t 1900000 kB",
             "VmHWM:\t 1500000 kB", "VmRSS:\t 1000000 kB", "RssAnon:\t  900000 kB", "VmData:\t 1200000 kB"]
    if swap is not None:
        lines.append(f"VmSwap:\t{swap}")
    lines += ["HugetlbPages:\t       0 kB", "Threads:\t12", "voluntary_ctxt_switches:\t100"]
    return "\n".join(lines) + "\n"


def _proc(tmp_path: Path, swap_total: str = "8000000", swap_free: str = "6000000",
          vm_swap: Optional[str] = "  524288 kB", cgroup: str = "0::/\n") -> Path:
    proc = tmp_path / "proc"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (proc / "7" / "status").write_text(_status(vm_swap))
    (proc / "7" / "cgroup").write_text(cgroup)
    (proc / "meminfo").write_text(MEMINFO.format(total=swap_total, free=swap_free))
    return proc


def _reader(proc: Path, now: list, cgroup_root: Optional[Path] = None) -> HostReader:
    cgroup = CgroupMemory(str(proc / "7"), str(cgroup_root if cgroup_root is not None else proc / "no-cgroup-fs"))
    return HostReader(pid=7, proc_root=str(proc), use_psutil=False, clock=lambda: now[0], cgroup=cgroup)


# --- the kernel's VmSwap and the machine's swap -------------------------------------------


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


@pytest.mark.parametrize("swap_total, swap_free, vm_swap", [
    ("lots", "-5", "abc kB"),
    ("", "kB", ""),
    ("-1", "1.5", "-3 kB"),
    ("\\xff", "0x10", "\\xff kB"),
])
def test_malformed_swap_figures_are_unknown_never_an_exception(tmp_path, swap_total, swap_free, vm_swap) -> None:
    proc = _proc(tmp_path, swap_total=swap_total, swap_free=swap_free, vm_swap=vm_swap)
    for path in (proc / "meminfo", proc / "7" / "status"):  # the kernel's files are bytes: undecodable ones too
        path.write_bytes(path.read_bytes().replace(b"\\xff", b"\xff"))
    figures = _reader(proc, [0.0]).read()
    assert (figures["swapped_bytes"], figures["swap_total_bytes"], figures["swap_free_bytes"]) == (None, None, None)
    assert figures["total_bytes"] == 16000000 * 1024  # the other figures are untouched
    assert figures["rss_bytes"] == 250 * os.sysconf("SC_PAGE_SIZE")


def test_this_machines_real_proc_swap_figures_parse_to_integers() -> None:
    """This process's VmSwap and the machine's SwapTotal/SwapFree, against the files read here (no swap: 0 is an answer)."""
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
        assert type(figures[key]) is int and figures[key] >= 0, (key, figures[key])  # type: ignore[literal-required]
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


# --- the container's swap: cgroup v2 --------------------------------------------------------


def _v2_dir(root: Path, path: str, limit: str, current: int, swap_max: Optional[str] = None,
            swap_current: Optional[str] = None) -> Path:
    d = root / path.strip("/") if path.strip("/") else root
    d.mkdir(parents=True, exist_ok=True)
    (d / "memory.max").write_text(limit + "\n")
    (d / "memory.current").write_text(f"{current}\n")
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
    (d / "memory.stat").write_text("anon 1\ninactive_file 0\n")
    if swap_max is not None:
        (d / "memory.swap.max").write_text(swap_max)
    if swap_current is not None:
        (d / "memory.swap.current").write_text(swap_current)
    return d


def _cgroup(tmp_path: Path, cgroup_text: str, root: Path) -> CgroupMemory:
    proc_self = tmp_path / "proc" / "self"
    proc_self.mkdir(parents=True, exist_ok=True)
    (proc_self / "cgroup").write_text(cgroup_text)
    return CgroupMemory(str(proc_self), str(root))


def _swap(c: CgroupMemory) -> tuple:
    figures = c.read()
    assert figures is not None
    return figures["swap_limit_bytes"], figures["swap_usage_bytes"]


def test_v2_swap_limit_and_usage_of_the_kernels_cgroup(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=f"{2 * GIB}\n", swap_current=f"{512 * MIB}\n")
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (2 * GIB, 512 * MIB)
    assert c.swap_path == str(root / "k")


def test_v2_swap_max_is_no_limit_and_zero_is_no_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max="max\n", swap_current="4096\n")
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (None, 4096)  # no limit, usage known
    (d / "memory.swap.max").write_text("0\n")
    assert _swap(c) == (0, 4096)  # read anew at each reading: a container that may not swap at all


def test_v2_without_swap_files_the_swap_is_unknown(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB)  # a kernel without swap accounting
    assert _swap(_cgroup(tmp_path, "0::/k\n", root)) == (None, None)


@pytest.mark.parametrize("swap_max, swap_current", [
    ("lots\n", "12 MB\n"), ("-1\n", "-4096\n"), ("", ""), ("\xff\n", "1.5\n"), ("max max\n", "nan\n"),
])
def test_v2_malformed_swap_files_are_unknown(tmp_path, swap_max, swap_current) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=swap_max, swap_current=swap_current)
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (None, None)
    assert c.read()["limit_bytes"] == 4 * GIB  # type: ignore[index]  # the memory figures still read


def test_v2_the_tightest_swap_limit_may_sit_above_the_tightest_memory_limit(tmp_path) -> None:
    """A slice's MemorySwapMax= above a scope's MemoryMax=: swapping ends at the slice's, so its figures are read."""
    root = tmp_path / "cg"
    _v2_dir(root, "/", "max", 50 * GIB)
    _v2_dir(root, "/jupyter.slice", "max", 10 * GIB, swap_max=f"{GIB}\n", swap_current=f"{900 * MIB}\n")
    _v2_dir(root, "/jupyter.slice/kernel.scope", str(4 * GIB), 3 * GIB, swap_max="max\n", swap_current=f"{100 * MIB}\n")
    c = _cgroup(tmp_path, "0::/jupyter.slice/kernel.scope\n", root)
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 4 * GIB and c.path == str(root / "jupyter.slice/kernel.scope")
    assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (GIB, 900 * MIB)
    assert c.swap_path == str(root / "jupyter.slice")


def test_v2_the_smallest_swap_limit_on_the_path_wins(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/a", "max", 0, swap_max=f"{8 * GIB}\n", swap_current="1\n")
    _v2_dir(root, "/a/b", "max", 0, swap_max="0\n", swap_current="0\n")
    _v2_dir(root, "/a/b/c", str(4 * GIB), 0, swap_max=f"{2 * GIB}\n", swap_current="2\n")
    c = _cgroup(tmp_path, "0::/a/b/c\n", root)
    assert c.path == str(root / "a/b/c")
    assert _swap(c) == (0, 0)  # b allows no swap: none of the kernel's pages can go there
    assert c.swap_path == str(root / "a/b")


def test_v2_without_any_swap_limit_the_usage_is_the_memory_limited_cgroups(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/a", "max", 0, swap_max="max\n", swap_current=f"{3 * GIB}\n")
    _v2_dir(root, "/a/b", str(4 * GIB), 0, swap_max="max\n", swap_current=f"{GIB}\n")
    c = _cgroup(tmp_path, "0::/a/b\n", root)
    assert _swap(c) == (None, GIB)
    assert c.swap_path == c.path == str(root / "a/b")


# --- the container's swap: cgroup v1 (memsw counts memory and swap together) ----------------


def _v1_dir(root: Path, path: str, limit: str, usage: int, memsw_limit: Optional[str] = None,
            memsw_usage: Optional[str] = None, swappiness: Optional[str] = None) -> Path:
    d = root / "memory" / path.strip("/")
    d.mkdir(parents=True, exist_ok=True)
    (d / "memory.limit_in_bytes").write_text(limit)
    (d / "memory.usage_in_bytes").write_text(f"{usage}\n")
    (d / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    (d / "memory.stat").write_text("total_inactive_file 0\n")
    if memsw_limit is not None:
        (d / "memory.memsw.limit_in_bytes").write_text(memsw_limit)
    if memsw_usage is not None:
        (d / "memory.memsw.usage_in_bytes").write_text(memsw_usage)
    if swappiness is not None:
        (d / "memory.swappiness").write_text(swappiness)
    return d


V1_CGROUP = "9:name=systemd:/\n4:memory:/docker/abc\n0::/\n"


def test_v1_swap_is_memsw_less_memory(tmp_path) -> None:
    # docker run --memory 3g --memory-swap 5g: 2 GiB may go to swap
    root = tmp_path / "cg"
    _v1_dir(root, "/", V1_UNLIMITED, 9 * GIB, V1_UNLIMITED, f"{10 * GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB + 300 * MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (2 * GIB, 300 * MIB)
    assert c.read()["cgroup_version"] == 1  # type: ignore[index]


def test_v1_memsw_equal_to_the_memory_limit_is_no_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{3 * GIB}\n", f"{GIB}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (0, 0)


def test_v1_unlimited_memsw_is_no_swap_limit_with_the_usage_known(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB + 4096}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (None, 4096)


def test_v1_without_memsw_files_the_swap_is_unknown(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB)  # booted with swapaccount=0
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (None, None)


@pytest.mark.parametrize("memsw_limit, memsw_usage", [("lots\n", "x\n"), ("-1\n", ""), ("", "1.5\n")])
def test_v1_malformed_memsw_is_unknown(tmp_path, memsw_limit, memsw_usage) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, memsw_limit, memsw_usage)
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (None, None)
    assert c.read()["limit_bytes"] == 3 * GIB  # type: ignore[index]


def test_v1_a_memsw_usage_below_the_memory_usage_is_no_negative_swap(tmp_path) -> None:
    # The two counters are read one after the other: memory may have grown in between.
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB + 8192, f"{4 * GIB}\n", f"{GIB}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (GIB, 0)


def test_v1_the_tightest_swap_limit_may_sit_on_another_ancestor(tmp_path) -> None:
    """memsw caps memory and swap of /docker's whole subtree; abc's 3 GiB memory limit pushes pages out.

    abc holds at most 3 GiB in memory, and /docker at most 8 GiB in memory and swap: 5 GiB may go to swap
    (not /docker's own memsw less its own memory limit, 0)."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{8 * GIB}\n", f"{2 * GIB + 64 * MIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB + MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 3 * GIB and c.path == str(root / "memory/docker/abc")
    # /docker's memsw limit less abc's memory limit; /docker's memsw usage less its memory usage
    assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (5 * GIB, 64 * MIB)
    assert c.swap_path == str(root / "memory/docker")


def test_v1_memsw_on_a_child_below_the_memory_limited_cgroup(tmp_path) -> None:
    """The memory limit on /docker, memsw on the kernel's own cgroup below it: 5 GiB memsw less 3 GiB memory."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{3 * GIB}\n", 2 * GIB, V1_UNLIMITED, f"{3 * GIB}\n")
    _v1_dir(root, "/docker/abc", V1_UNLIMITED, GIB, f"{5 * GIB}\n", f"{GIB + 300 * MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 3 * GIB and c.path == str(root / "memory/docker")
    # abc's memsw limit less /docker's memory limit; abc's memsw usage less its memory usage
    assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (2 * GIB, 300 * MIB)
    assert c.swap_path == str(root / "memory/docker/abc")


def test_v1_the_swap_cgroup_is_the_one_with_the_smallest_memsw_limit(tmp_path) -> None:
    """/docker: 8 GiB memory, 9 GiB memsw (1 GiB apart); abc: 3 GiB memory, 6 GiB memsw (3 GiB apart).
    abc's pages: at most 3 GiB in memory, at most 6 GiB in both: 3 GiB of swap, /docker's 9 GiB allows more."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{9 * GIB}\n", f"{2 * GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{6 * GIB}\n", f"{GIB + MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (3 * GIB, MIB)
    assert c.swap_path == c.path == str(root / "memory/docker/abc")


def test_v1_a_memsw_limit_on_a_parent_below_the_memory_limit_is_no_swap(tmp_path) -> None:
    """A 2 GiB memsw on /docker above abc's 3 GiB memory limit: memory fills that memsw first, nothing to swap."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", V1_UNLIMITED, GIB, f"{2 * GIB}\n", f"{GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (0, 0)


def test_v1_the_swap_limit_follows_a_changed_memory_limit(tmp_path) -> None:
    """The subtracted memory limit is the one read for limit_bytes, at the same reading."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{8 * GIB}\n", f"{2 * GIB}\n")
    abc = _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c)[0] == 5 * GIB
    (abc / "memory.limit_in_bytes").write_text(f"{6 * GIB}\n")  # docker update --memory 6g
    figures = c.read()
    assert figures is not None and (figures["limit_bytes"], figures["swap_limit_bytes"]) == (6 * GIB, 2 * GIB)


# --- swappiness 0: no swap at the limit ----------------------------------------------------


def test_v1_swappiness_0_of_the_kernels_cgroup_is_no_swap_and_is_read_at_each_reading(tmp_path) -> None:
    """docker run --memory 3g --memory-swap 5g --memory-swappiness 0: killed at 3 GiB with swap free."""
    root = tmp_path / "cg"
    abc = _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB + 300 * MIB}\n", swappiness="0\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (0, 300 * MIB)  # the usage is what is in swap (put there before, or by the machine's reclaim)
    (abc / "memory.swappiness").write_text("60\n")  # an admin changes it at run time
    assert _swap(c) == (2 * GIB, 300 * MIB)


def test_v1_the_swappiness_is_the_kernels_own_cgroups_not_the_memory_limited_parents(tmp_path) -> None:
    """Reclaim at /docker's limit scans abc's pages with abc's swappiness (mm/vmscan.c, lruvec_memcg)."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB}\n", swappiness="60\n")
    abc = _v1_dir(root, "/docker/abc", V1_UNLIMITED, GIB, V1_UNLIMITED, f"{GIB}\n", swappiness="0\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (0, 0)
    (abc / "memory.swappiness").write_text("60\n")
    assert _swap(c) == (2 * GIB, 0)


@pytest.mark.parametrize("swappiness", ["", "lots\n", "-1\n"])
def test_a_malformed_swappiness_leaves_the_swap_limit_alone(tmp_path, swappiness) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB}\n", swappiness=swappiness)
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (2 * GIB, 0)


def test_v1_swappiness_0_without_swap_accounting_is_still_no_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, swappiness="0\n")  # swapaccount=0: no memsw files
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (0, None)


def _vm_swappiness(tmp_path: Path, value: str) -> Path:
    """``value`` as the machine's /proc/sys/vm/swappiness of the fake proc root that _cgroup uses."""
    path = tmp_path / "proc" / "sys" / "vm" / "swappiness"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value)
    return path


@pytest.mark.parametrize("swap_max", [f"{2 * GIB}\n", "max\n"])
def test_v2_the_machines_swappiness_0_is_no_swap_and_is_read_at_each_reading(tmp_path, swap_max) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=swap_max, swap_current=f"{512 * MIB}\n")
    swappiness = _vm_swappiness(tmp_path, "0\n")
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (0, 512 * MIB)
    swappiness.write_text("60\n")  # sysctl vm.swappiness=60
    assert _swap(c) == (2 * GIB if swap_max != "max\n" else None, 512 * MIB)


def test_v2_a_cgroups_own_swappiness_file_is_not_read(tmp_path) -> None:
    """v2 has no per-cgroup swappiness: a memory.swappiness there (there is none in Linux) means nothing."""
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=f"{2 * GIB}\n", swap_current="0\n")
    (d / "memory.swappiness").write_text("0\n")
    _vm_swappiness(tmp_path, "60\n")
    assert _swap(_cgroup(tmp_path, "0::/k\n", root)) == (2 * GIB, 0)


def test_the_host_reader_reads_the_machines_swappiness_under_its_proc_root(tmp_path, monkeypatch) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), GIB, swap_max=f"{GIB}\n", swap_current=f"{MIB}\n")
    proc = _proc(tmp_path, cgroup="0::/k\n")
    (proc / "sys" / "vm").mkdir(parents=True)
    (proc / "sys" / "vm" / "swappiness").write_text("0\n")
    real_cgroup_memory = CgroupMemory  # the reader's own, with the fake cgroup mount
    monkeypatch.setattr(host_module, "CgroupMemory", lambda *args, **kwargs: real_cgroup_memory(
        args[0], str(root), **kwargs))
    r = HostReader(pid=7, proc_root=str(proc), use_psutil=False)
    container = r.read()["container"]
    assert container is not None and (container["swap_limit_bytes"], container["swap_usage_bytes"]) == (0, MIB)
    r.close()


# --- descriptors: opened only where they are read, never twice --------------------------------


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _reads_of_one_reading(c: CgroupMemory, monkeypatch) -> list:
    read_fds: list = []
    real_pread = os.pread

    def counting_pread(fd: int, size: int, offset: int) -> bytes:
        read_fds.append(fd)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting_pread)
    try:
        assert c.read() is not None
    finally:
        monkeypatch.setattr(os, "pread", real_pread)
    return read_fds


def test_v1_without_swap_accounting_opens_and_reads_no_swap_files(tmp_path, monkeypatch) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, swappiness="60\n")  # swapaccount=0: no memsw files
    before = _open_descriptors()
    c = _cgroup(tmp_path, V1_CGROUP, root)
    try:
        assert _open_descriptors() - before == 5  # limit, usage, oom_control, stat, swappiness
        reads = _reads_of_one_reading(c, monkeypatch)
        assert sorted(reads) == sorted([c._limit, c._usage, c._events, c._stat, c._swappiness])
    finally:
        c.close()
    assert _open_descriptors() == before


def test_v1_swap_of_the_memory_limited_cgroup_reuses_its_limit_and_usage(tmp_path, monkeypatch) -> None:
    """Docker's layout: memsw on the memory-limited cgroup. Its limit and usage files are open already: read once."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB + MIB}\n", swappiness="60\n")
    before = _open_descriptors()
    c = _cgroup(tmp_path, V1_CGROUP, root)
    try:
        assert c.swap_path == c.path
        assert _open_descriptors() - before == 7  # the five, memsw limit and memsw usage
        reads = _reads_of_one_reading(c, monkeypatch)
        expected = [c._limit, c._usage, c._events, c._stat, c._swap_limit, c._swap_usage, c._swappiness]
        assert sorted(reads) == sorted(expected)  # each once: the memory limit and usage serve both figures
        assert _swap(c) == (2 * GIB, MIB)
    finally:
        c.close()
    assert _open_descriptors() == before


def test_v1_swap_of_another_cgroup_opens_its_memory_usage_only(tmp_path, monkeypatch) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{8 * GIB}\n", f"{2 * GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB}\n", swappiness="60\n")
    before = _open_descriptors()
    c = _cgroup(tmp_path, V1_CGROUP, root)
    try:
        assert c.swap_path != c.path
        assert _open_descriptors() - before == 8  # and /docker's memory usage, not its memory limit
        reads = _reads_of_one_reading(c, monkeypatch)
        expected = [c._limit, c._usage, c._events, c._stat, c._swap_limit, c._swap_usage, c._swap_memory_usage,
                    c._swappiness]
        assert sorted(reads) == sorted(expected)
    finally:
        c.close()
    assert _open_descriptors() == before


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


# --- which swap figures cause a sample -----------------------------------------------------


def _figures(swapped: Optional[int] = 0, swap_free: Optional[int] = 4 * GIB, swap_usage: Optional[int] = 0,
             swap_limit: Optional[int] = 2 * GIB) -> dict:
    return {
        "host": {"rss_bytes": GIB, "total_bytes": 16 * GIB, "available_bytes": 8 * GIB,
                 "container": {"limit_bytes": 4 * GIB, "usage_bytes": GIB, "inactive_file_bytes": 0,
                               "oom_kill_count": 0, "cgroup_version": 2,
                               "swap_limit_bytes": swap_limit, "swap_usage_bytes": swap_usage},
                 "swapped_bytes": swapped, "swap_total_bytes": 8 * GIB, "swap_free_bytes": swap_free},
        "torch": {"imported": False, "cuda_initialized": False},
        "gpus": [],
    }


def test_the_kernels_swapped_bytes_and_the_swap_limit_cause_a_sample_the_machines_swap_does_not() -> None:
    base = _figures()
    assert significant_change(base, _figures(swapped=100 * MIB), MIB)  # the kernel's own pages
    assert not significant_change(base, _figures(swapped=MIB // 2), MIB)  # within the threshold
    assert significant_change(base, _figures(swapped=None), MIB)  # known -> unknown
    assert significant_change(base, _figures(swap_limit=3 * GIB), MIB)  # like the memory limit
    assert not significant_change(base, _figures(swap_free=GIB), MIB)  # other processes move it
    assert not significant_change(base, _figures(swap_usage=GIB), MIB)  # the whole cgroup's, like its usage
