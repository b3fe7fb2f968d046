"""The container memory limit read from fake cgroup trees (v1 and v2) and, where allowed, a real one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cgroup_harness import real_memory_cgroup, remove_cgroup

from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory
from jupyterlab_vram_helper.sampling.readers.host import HostReader

GIB = 1 << 30
V1_UNLIMITED = "9223372036854771712\n"


def _proc(tmp_path: Path, cgroup_text: str) -> str:
    proc_self = tmp_path / "proc" / "self"
    proc_self.mkdir(parents=True)
    (proc_self / "cgroup").write_text(cgroup_text)
    return str(proc_self)


def _v2_dir(root: Path, path: str, limit: str, current: int, oom_kill: int = 0) -> Path:
    d = root / path.strip("/") if path.strip("/") else root
    d.mkdir(parents=True, exist_ok=True)
    (d / "memory.max").write_text(limit + "\n")
    (d / "memory.current").write_text(f"{current}\n")
    (d / "memory.events").write_text(f"low 0\nhigh 0\nmax 3\noom 2\noom_kill {oom_kill}\noom_group_kill 0\n")
    # v2's memory.stat: the page cache it can reclaim is inactive_file (an eighth of the usage here)
    (d / "memory.stat").write_text(
        f"anon {current // 2}\nfile {current // 2}\nactive_file {current // 8 * 3}\ninactive_file {current // 8}\n"
        + "".join(f"counter_{i} {i}\n" for i in range(40))
    )
    return d


def test_v2_limit_of_the_kernels_own_cgroup(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/kubepods/pod1/c1", str(4 * GIB), 3 * GIB, oom_kill=1)
    c = CgroupMemory(_proc(tmp_path, "0::/kubepods/pod1/c1\n"), str(root))
    assert c.read() == {
        "limit_bytes": 4 * GIB,
        "usage_bytes": 3 * GIB,
        "inactive_file_bytes": 3 * GIB // 8,
        "oom_kill_count": 1,
        "cgroup_version": 2,
        "swap_limit_bytes": None,
        "swap_usage_bytes": None,  # no swap files: no swap accounting
    }
    assert c.path == str(root / "kubepods/pod1/c1")


def test_v2_walks_up_to_the_nearest_limit(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/", "max", 50 * GIB)
    _v2_dir(root, "/user.slice", str(8 * GIB), 2 * GIB, oom_kill=4)
    _v2_dir(root, "/user.slice/session", "max", 1 * GIB)
    _v2_dir(root, "/user.slice/session/kernel", "max", 1 * GIB)
    c = CgroupMemory(_proc(tmp_path, "0::/user.slice/session/kernel\n"), str(root))
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 8 * GIB
    assert figures["usage_bytes"] == 2 * GIB  # the usage the limit applies to
    assert figures["oom_kill_count"] == 4


def test_v2_the_tightest_limit_on_the_path_wins_not_the_nearest(tmp_path) -> None:
    """A parent slice tighter than the kernel's own cgroup: the kernel is killed at the parent's."""
    root = tmp_path / "cg"
    _v2_dir(root, "/", "max", 50 * GIB)
    _v2_dir(root, "/jupyter.slice", str(4 * GIB), 3 * GIB, oom_kill=2)
    _v2_dir(root, "/jupyter.slice/kernel.scope", str(16 * GIB), 1 * GIB)
    c = CgroupMemory(_proc(tmp_path, "0::/jupyter.slice/kernel.scope\n"), str(root))
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 4 * GIB
    assert figures["usage_bytes"] == 3 * GIB and figures["oom_kill_count"] == 2  # the limiting cgroup's
    assert c.path == str(root / "jupyter.slice")
    c.close()


def test_v2_no_limit_anywhere_is_none(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/", "max", 1)
    _v2_dir(root, "/a", "max", 1)
    c = CgroupMemory(_proc(tmp_path, "0::/a\n"), str(root))
    assert not c.has_limit
    assert c.read() is None


def test_v2_cgroup_namespace_reads_the_mount_root(tmp_path) -> None:
    # Inside a container the path may be the host's while the mount is the container's own cgroup.
    root = tmp_path / "cg"
    _v2_dir(root, "/", str(2 * GIB), GIB)
    c = CgroupMemory(_proc(tmp_path, "0::/kubepods/burstable/pod9/abc\n"), str(root))
    assert c.read()["limit_bytes"] == 2 * GIB  # type: ignore[index]


def test_v2_limit_changes_are_seen_and_a_lifted_limit_is_none(tmp_path) -> None:
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), GIB)
    c = CgroupMemory(_proc(tmp_path, "0::/k\n"), str(root))
    (d / "memory.max").write_text(f"{6 * GIB}\n")
    assert c.read()["limit_bytes"] == 6 * GIB  # type: ignore[index]
    (d / "memory.max").write_text("max\n")
    assert c.read() is None


def _v1_dir(root: Path, path: str, limit: str, usage: int, oom_kill: int | None = 0) -> Path:
    d = root / "memory" / path.strip("/")
    d.mkdir(parents=True, exist_ok=True)
    (d / "memory.limit_in_bytes").write_text(limit)
    (d / "memory.usage_in_bytes").write_text(f"{usage}\n")
    tail = f"oom_kill {oom_kill}\n" if oom_kill is not None else ""
    (d / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\n" + tail)
    # v1's memory.stat names the hierarchy's figures total_*; inactive_file alone is this group's
    (d / "memory.stat").write_text(
        f"cache {usage // 2}\ninactive_file 1\ntotal_cache {usage // 2}\ntotal_inactive_file {usage // 4}\n"
    )
    return d


V1_CGROUP = "9:name=systemd:/\n4:memory:/docker/abc\n2:cpu,cpuacct:/\n0::/\n"


def test_v1_limit_wins_over_the_empty_v2_line_of_a_hybrid_layout(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/", V1_UNLIMITED, 9 * GIB)
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, oom_kill=2)
    c = CgroupMemory(_proc(tmp_path, V1_CGROUP), str(root))
    assert c.read() == {
        "limit_bytes": 3 * GIB,
        "usage_bytes": GIB,
        "inactive_file_bytes": GIB // 4,
        "oom_kill_count": 2,
        "cgroup_version": 1,
        "swap_limit_bytes": None,
        "swap_usage_bytes": None,
    }


def test_v1_huge_limit_means_none_and_the_walk_goes_up(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/", V1_UNLIMITED, 9 * GIB)
    _v1_dir(root, "/docker", f"{5 * GIB}\n", 2 * GIB, oom_kill=None)  # Linux < 4.13: no oom_kill line
    _v1_dir(root, "/docker/abc", V1_UNLIMITED, GIB, oom_kill=None)  # the kernel's own count (test_cgroup_setups.py)
    c = CgroupMemory(_proc(tmp_path, V1_CGROUP), str(root))
    assert c.read() == {
        "limit_bytes": 5 * GIB,
        "usage_bytes": 2 * GIB,
        "inactive_file_bytes": 2 * GIB // 4,
        "oom_kill_count": None,
        "cgroup_version": 1,
        "swap_limit_bytes": None,
        "swap_usage_bytes": None,
    }


def test_v1_memory_among_joined_controllers(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/x", f"{GIB}\n", 1)
    c = CgroupMemory(_proc(tmp_path, "3:cpuset,memory:/x\n"), str(root))
    assert c.read()["limit_bytes"] == GIB  # type: ignore[index]


def test_unreadable_or_odd_proc_is_none(tmp_path) -> None:
    assert CgroupMemory(str(tmp_path / "nowhere"), str(tmp_path)).read() is None
    assert CgroupMemory(_proc(tmp_path, "garbage\n\x00::::\n"), str(tmp_path)).read() is None


def test_host_reader_reads_the_limit_at_the_machine_pace_and_the_usage_every_tick(tmp_path) -> None:
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), GIB)
    (tmp_path / "proc" / "7").mkdir(parents=True)
    (tmp_path / "proc" / "7" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (tmp_path / "proc" / "7" / "cgroup").write_text("0::/k\n")
    # A 16 GB machine: a limit above its RAM would be no limit (test_cgroup_setups.py)
    (tmp_path / "proc" / "meminfo").write_text("MemTotal: 16000000 kB\nMemFree: 1 kB\nMemAvailable: 8000000 kB\n")
    now = [0.0]
    cgroup = CgroupMemory(str(tmp_path / "proc" / "7"), str(root))
    r = HostReader(pid=7, proc_root=str(tmp_path / "proc"), use_psutil=False, clock=lambda: now[0], cgroup=cgroup)
    assert r.read()["container"]["usage_bytes"] == GIB  # type: ignore[index]
    (d / "memory.current").write_text(f"{2 * GIB}\n")
    (d / "memory.max").write_text(f"{5 * GIB}\n")
    now[0] += 0.5
    figures = r.read()["container"]
    assert figures["usage_bytes"] == 2 * GIB  # type: ignore[index]  # every tick
    assert figures["limit_bytes"] == 4 * GIB  # type: ignore[index]  # within the second: as read before
    now[0] += 0.5
    assert r.read()["container"]["limit_bytes"] == 5 * GIB  # type: ignore[index]
    r.close()
    assert r.read()["container"] is None


def test_real_cgroup_limit_is_seen_by_a_process_inside_it() -> None:
    path, version, why = real_memory_cgroup(512 << 20)
    if path is None:
        pytest.skip(why)
    code = (
        "import sys, json, os\n"
        f"open({os.path.join(path, 'cgroup.procs')!r}, 'w').write(str(os.getpid()))\n"
        "from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory\n"
        "print(json.dumps(CgroupMemory().read()))\n"
    )
    try:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[4] / "python_helper")}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env
        )
        import json

        figures = json.loads(out.stdout)
        assert figures["limit_bytes"] == 512 << 20
        assert figures["cgroup_version"] == version
        assert 0 < figures["usage_bytes"] <= 512 << 20
        assert figures["oom_kill_count"] == 0
        # The harness lets nothing go to swap where this kernel accounts swap per cgroup (memsw = the limit,
        # swap.max 0).
        swap_file = os.path.join(path, "memory.memsw.limit_in_bytes" if version == 1 else "memory.swap.max")
        if _reads_int(swap_file) == (512 << 20 if version == 1 else 0):
            assert figures["swap_limit_bytes"] == 0
            assert type(figures["swap_usage_bytes"]) is int and figures["swap_usage_bytes"] >= 0
        else:  # no swap accounting: nothing to read, unless swappiness 0 allows no swap at the limit
            assert figures["swap_limit_bytes"] == (0 if _swappiness(path, version) == 0 else None)
    finally:
        remove_cgroup(path)


def _swappiness(path: str, version: int) -> int | None:
    return _reads_int(os.path.join(path, "memory.swappiness") if version == 1 else "/proc/sys/vm/swappiness")


def test_real_v1_memsw_on_a_parent_less_the_childs_memory_limit_and_swappiness_0(tmp_path) -> None:
    """The kernel's own files: memsw 768 MiB on a parent, memory 256 MiB on the child the process would be in:
    512 MiB may go to swap; none once the child's swappiness is 0. Nothing is moved into the cgroups."""
    path, version, why = real_memory_cgroup(512 << 20)
    if path is None:
        pytest.skip(why)
    child = os.path.join(path, "kernel")
    try:
        if version != 1:
            pytest.skip("cgroup v2: memory.swap.max limits swap alone (the fake trees test it)")
        try:
            with open(os.path.join(path, "memory.memsw.limit_in_bytes"), "w") as f:
                f.write(str(768 << 20))
            os.mkdir(child)
            with open(os.path.join(child, "memory.limit_in_bytes"), "w") as f:
                f.write(str(256 << 20))
            with open(os.path.join(child, "memory.swappiness"), "w") as f:
                f.write("60")
        except OSError as e:
            pytest.skip(f"no swap accounting, or the kernel refuses the layout ({e.strerror})")
        relative = os.path.relpath(child, "/sys/fs/cgroup/memory")
        c = CgroupMemory(_proc(tmp_path, f"4:memory:/{relative}\n"), "/sys/fs/cgroup")
        try:
            figures = c.read()
            assert figures is not None and figures["limit_bytes"] == 256 << 20 and figures["cgroup_version"] == 1
            assert c.path == child and c.swap_path == path
            assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (512 << 20, 0)
            with open(os.path.join(child, "memory.swappiness"), "w") as f:
                f.write("0")
            assert c.read()["swap_limit_bytes"] == 0  # type: ignore[index]
        finally:
            c.close()
    finally:
        remove_cgroup(child)
        remove_cgroup(path)


def _reads_int(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None
