"""Shared by the swap tests (test_host_swap.py, test_cgroup_swap.py, test_swappiness.py,
test_cgroup_swap_descriptors.py, test_swap_samples.py): fake /proc trees and cgroup v1 and v2
directories, and the container's swap figures of one reading."""

from __future__ import annotations

from pathlib import Path

from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory

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


def _status(swap: str | None) -> str:
    """A /proc/<pid>/status whose VmSwap line reads ``swap`` (None: no such line, as in a kernel thread's)."""
    lines = [
        "Name:\tpython3",
        "State:\tS (sleeping)",
        "Pid:\t7",
        "VmPeak:\t 2000000 kB",
        "VmSize:\t 1900000 kB",
        "VmHWM:\t 1500000 kB",
        "VmRSS:\t 1000000 kB",
        "RssAnon:\t  900000 kB",
        "VmData:\t 1200000 kB",
    ]
    if swap is not None:
        lines.append(f"VmSwap:\t{swap}")
    lines += ["HugetlbPages:\t       0 kB", "Threads:\t12", "voluntary_ctxt_switches:\t100"]
    return "\n".join(lines) + "\n"


def _proc(
    tmp_path: Path,
    swap_total: str = "8000000",
    swap_free: str = "6000000",
    vm_swap: str | None = "  524288 kB",
    cgroup: str = "0::/\n",
) -> Path:
    proc = tmp_path / "proc"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (proc / "7" / "status").write_text(_status(vm_swap))
    (proc / "7" / "cgroup").write_text(cgroup)
    (proc / "meminfo").write_text(MEMINFO.format(total=swap_total, free=swap_free))
    return proc


def _v2_dir(
    root: Path, path: str, limit: str, current: int, swap_max: str | None = None, swap_current: str | None = None
) -> Path:
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


def _v1_dir(
    root: Path,
    path: str,
    limit: str,
    usage: int,
    memsw_limit: str | None = None,
    memsw_usage: str | None = None,
    swappiness: str | None = None,
) -> Path:
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
