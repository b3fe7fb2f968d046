"""The container figures in setups whose kernel semantics the simpler fake trees leave out: where
cgroup v1 counts an OOM kill (the victim's own memory cgroup alone), and a cgroup limit above the
machine's RAM, which the kernel never reaches."""

from __future__ import annotations

from pathlib import Path

from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory
from jupyterlab_vram_helper.sampling.readers.host import HostReader

GIB = 1 << 30
V1_UNLIMITED = "9223372036854771712\n"


def _proc_self(tmp_path: Path, cgroup_text: str) -> str:
    proc_self = tmp_path / "proc" / "self"
    proc_self.mkdir(parents=True, exist_ok=True)
    (proc_self / "cgroup").write_text(cgroup_text)
    return str(proc_self)


def _v1(root: Path, path: str, limit: str, usage: int, oom_kill: int) -> Path:
    d = root / "memory" / path.strip("/")
    d.mkdir(parents=True, exist_ok=True)
    (d / "memory.limit_in_bytes").write_text(limit)
    (d / "memory.usage_in_bytes").write_text(f"{usage}\n")
    (d / "memory.oom_control").write_text(f"oom_kill_disable 0\nunder_oom 0\noom_kill {oom_kill}\n")
    (d / "memory.stat").write_text(f"cache 0\ntotal_inactive_file {usage // 4}\n")
    return d


def _v2(root: Path, path: str, limit: str, current: int, oom_kill: int, memory_files: bool = True) -> Path:
    d = root / path.strip("/") if path.strip("/") else root
    d.mkdir(parents=True, exist_ok=True)
    if memory_files:  # absent where the parent does not enable the memory controller for it
        (d / "memory.max").write_text(limit + "\n")
        (d / "memory.current").write_text(f"{current}\n")
        (d / "memory.events").write_text(f"low 0\nhigh 0\nmax 0\noom {oom_kill}\noom_kill {oom_kill}\n")
        (d / "memory.stat").write_text(f"anon {current}\ninactive_file 0\n")
    return d


# --- where an OOM kill is counted ---------------------------------------------------------------


def test_v1_slurm_task_kill_is_counted_in_the_tasks_own_cgroup_not_the_limited_step(tmp_path) -> None:
    """cgroup v1 counts oom_kill in the victim's own memory cgroup alone (no propagation to parents):
    a Slurm job's kernel in task_0, limited on its job and step, is killed at the step's limit and only
    task_0's memory.oom_control says so."""
    root = tmp_path / "cg"
    _v1(root, "/", V1_UNLIMITED, 60 * GIB, 0)
    _v1(root, "/slurm/uid_1000/job_7", f"{8 * GIB}\n", 8 * GIB, 0)
    step = _v1(root, "/slurm/uid_1000/job_7/step_0", f"{8 * GIB}\n", 8 * GIB, 0)
    task = _v1(root, "/slurm/uid_1000/job_7/step_0/task_0", V1_UNLIMITED, 8 * GIB, 0)
    c = CgroupMemory(_proc_self(tmp_path, "11:memory:/slurm/uid_1000/job_7/step_0/task_0\n0::/\n"), str(root))
    figures = c.read()
    assert figures is not None and figures["limit_bytes"] == 8 * GIB and c.path == str(step)
    assert figures["oom_kill_count"] == 0
    (task / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")  # the kernel was killed
    assert c.read()["oom_kill_count"] == 1  # type: ignore[index]
    c.close()


# --- a limit above the machine's RAM ------------------------------------------------------------


def _host(tmp_path: Path, limit: str, mem_total_kib: int, now: list) -> tuple[HostReader, Path]:
    proc = tmp_path / "proc"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (proc / "7" / "cgroup").write_text("0::/k\n")
    (proc / "meminfo").write_text(
        f"MemTotal: {mem_total_kib} kB\nMemFree: 1000 kB\nMemAvailable: {mem_total_kib // 2} kB\n"
    )
    d = _v2(tmp_path / "cg", "/k", limit, 2 * GIB, 0)
    cgroup = CgroupMemory(str(proc / "7"), str(tmp_path / "cg"))
    return HostReader(pid=7, proc_root=str(proc), use_psutil=False, clock=lambda: now[0], cgroup=cgroup), d


def test_a_limit_above_the_machines_ram_is_no_limit(tmp_path) -> None:
    """docker run -m 512g (or a Kubernetes limit) on a 64 GiB machine: memory.current counts resident
    pages only, so it never reaches the limit; the kernel dies when the machine runs out."""
    now = [0.0]
    reader, d = _host(tmp_path, str(512 * GIB), 64 * (1 << 20), now)
    figures = reader.read()
    assert figures["total_bytes"] == 64 * GIB
    assert figures["container"] is None
    now[0] += 0.5
    assert reader.read()["container"] is None  # the ticks between stay so
    (d / "memory.max").write_text(f"{16 * GIB}\n")  # lowered under the machine's RAM: a limit again
    now[0] += 0.5
    assert reader.read()["container"]["limit_bytes"] == 16 * GIB  # type: ignore[index]
    reader.close()


def test_a_limit_equal_to_memtotal_stays_a_limit(tmp_path) -> None:
    """LXC/LXD with lxcfs: /proc/meminfo's MemTotal is the container's limit itself."""
    reader, _ = _host(tmp_path, str(8 * GIB), 8 * (1 << 20), [0.0])
    assert reader.read()["container"]["limit_bytes"] == 8 * GIB  # type: ignore[index]
    reader.close()
