"""A real memory cgroup with a limit, where this machine lets the tests make one.

When the tests run as root on a machine with a writable cgroup mount (cgroup
v2 at /sys/fs/cgroup, or v1's memory controller at /sys/fs/cgroup/memory), a
child cgroup is created, its limit is set, and processes are moved into it by
pid. Elsewhere (without root, on a read-only mount, or in a container without
delegation) the callers skip and say why.
"""

from __future__ import annotations

import os
import time

V2_ROOT = "/sys/fs/cgroup"
V1_ROOT = "/sys/fs/cgroup/memory"


def real_memory_cgroup(limit: int, name: str = "vram-test") -> tuple[str | None, int, str]:
    """Create a child cgroup limited to ``limit`` bytes.

    Return (path, cgroup version, "") for it, or (None, 0, why) where this
    machine does not let the tests make one.
    """
    if os.path.exists(os.path.join(V2_ROOT, "cgroup.controllers")):
        base, version, limit_file = V2_ROOT, 2, "memory.max"
        with open(os.path.join(V2_ROOT, "cgroup.controllers")) as f:
            if "memory" not in f.read().split():
                return None, 0, "cgroup v2 without the memory controller"
    elif os.path.exists(os.path.join(V1_ROOT, "memory.limit_in_bytes")):
        base, version, limit_file = V1_ROOT, 1, "memory.limit_in_bytes"
    else:
        return None, 0, "no cgroup memory controller mounted at /sys/fs/cgroup"
    path = os.path.join(base, f"{name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.mkdir(path)
    except OSError as e:
        return None, 0, f"cannot create a cgroup under {base} ({e.strerror}): not root, or a read-only mount"
    try:
        with open(os.path.join(path, limit_file), "w") as f:
            f.write(str(limit))
        if version == 1:
            # Leave the processes no swap to escape into, so that the limit kills,
            # as a container's does.
            try:
                with open(os.path.join(path, "memory.memsw.limit_in_bytes"), "w") as f:
                    f.write(str(limit))
            except OSError:
                pass
        else:
            try:
                with open(os.path.join(path, "memory.swap.max"), "w") as f:
                    f.write("0")
            except OSError:
                pass
    except OSError as e:
        os.rmdir(path)
        return None, 0, f"cannot set a memory limit ({e.strerror})"
    return path, version, ""


def move_into(path: str, pid: int) -> None:
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(str(pid))


def oom_kill_count(path: str, version: int) -> int | None:
    """The cgroup's oom_kill count, read at the time of the call; None where its file has none."""
    return _oom_kill_line(os.path.join(path, "memory.oom_control" if version == 1 else "memory.events"))


def machine_oom_kill_count() -> int | None:
    """The machine's oom_kill count in /proc/vmstat, read at the time of the call; None before Linux 4.13."""
    return _oom_kill_line("/proc/vmstat")


def _oom_kill_line(file: str) -> int | None:
    try:
        with open(file) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    except OSError:
        return None
    return None


def remove_cgroup(path: str, timeout: float = 10) -> None:
    """Remove the cgroup once its processes are gone (best effort)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.1)
