"""The kernel's container memory limit: its cgroup's limit, usage and OOM kills.

In a container (Docker, Kubernetes, a JupyterHub spawner) the kernel is killed
at its cgroup's memory limit, long before the node's RAM runs out; the node's
total in /proc/meminfo says nothing about it. :class:`CgroupMemory` finds the
cgroup of this process and, among it and its ancestors, the one with the
smallest limit: the kernel is killed at the tightest limit on its path (a
parent slice, Docker's ``--cgroup-parent``), not at the nearest one:

- cgroup v2: ``/proc/self/cgroup`` has ``0::/path``; ``memory.max`` (``max``:
  no limit), ``memory.current``, ``memory.events`` (``oom_kill``, ``oom``),
  ``memory.stat`` (``inactive_file``).
- cgroup v1: a ``N:memory:/path`` line (or ``memory`` among a
  comma-separated list); ``memory.limit_in_bytes`` (a huge value: no
  limit), ``memory.usage_in_bytes``, ``memory.oom_control`` (``oom_kill``,
  Linux >= 4.13), ``memory.stat`` (``total_inactive_file``). A v1 memory line
  wins over ``0::``: in a hybrid layout the memory controller lives on v1.

The usage counts the page cache of every file the container read or wrote:
reading a dataset fills it up to the limit without any risk of an OOM kill,
since the kernel reclaims inactive file pages first. ``inactive_file`` is
that reclaimable part; usage less it is the working set that docker stats,
cAdvisor and Kubernetes' eviction go by.

Inside a container with its own cgroup namespace the path reads ``/`` and
the container's cgroup is mounted at the root; when ``<root>/<path>`` does not
exist (the path is the host's, the mount is the container's) the walk starts
at the mount's root.

The files found stay open and are read with ``pread``. Every failure gives
``None``, never an exception.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Tuple

from .descriptors import close_descriptors, open_fd

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import ContainerFigures

# memory.stat is some 40 lines (v2) or 36 (v1): read whole.
STAT_READ_BYTES = 8192
# cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages (9223372036854771712
# with 4 KiB pages); anything this large is no limit.
UNLIMITED_BYTES = 1 << 60


class CgroupMemory:
    """The container memory limit of this process, if any; ``read()`` per sample."""

    def __init__(self, proc_self: str = "/proc/self", cgroup_root: str = "/sys/fs/cgroup"):
        self.version: Optional[int] = None
        self.path: Optional[str] = None  # the directory that sets the limit
        self._limit: Optional[int] = None
        self._usage: Optional[int] = None
        self._events: Optional[int] = None
        self._stat: Optional[int] = None
        try:
            self._find(proc_self, cgroup_root)
        except Exception:  # an odd /proc or mount: no container figures
            self.close()

    @property
    def has_limit(self) -> bool:
        return self._limit is not None

    def _find(self, proc_self: str, cgroup_root: str) -> None:
        with open(f"{proc_self}/cgroup", "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        found = _memory_cgroup(lines)
        if found is None:
            return
        version, path = found
        mount = os.path.join(cgroup_root, "memory") if version == 1 else cgroup_root
        names = _V1_FILES if version == 1 else _V2_FILES
        tightest: Optional[Tuple[int, str, int]] = None  # limit, directory, its open limit file
        for directory in _candidates(mount, path):
            limit_fd = open_fd(os.path.join(directory, names[0]))
            if limit_fd is None:
                continue
            limit = _parse_limit(_pread(limit_fd))
            if limit is None or (tightest is not None and limit >= tightest[0]):
                os.close(limit_fd)
                continue
            if tightest is not None:
                os.close(tightest[2])
            tightest = (limit, directory, limit_fd)
        if tightest is None:
            return
        _, directory, limit_fd = tightest
        self.version, self.path, self._limit = version, directory, limit_fd
        self._usage = open_fd(os.path.join(directory, names[1]))
        self._events = open_fd(os.path.join(directory, names[2]))
        self._stat = open_fd(os.path.join(directory, "memory.stat"))
        self._inactive_key = b"total_inactive_file" if version == 1 else b"inactive_file"

    def read(self) -> Optional[ContainerFigures]:
        """The limit, the cgroup's usage and its OOM kills; ``None`` without a limit."""
        if self._limit is None:
            return None
        limit = _parse_limit(_pread(self._limit))
        if limit is None:  # the limit was lifted
            return None
        return {
            "limit_bytes": limit,
            "usage_bytes": _parse_int(_pread(self._usage)),
            "inactive_file_bytes": _event_count(_pread(self._stat, STAT_READ_BYTES), self._inactive_key),
            "oom_kill_count": _event_count(_pread(self._events), b"oom_kill"),
            "cgroup_version": self.version or 0,
        }

    def usage(self) -> Optional[int]:
        """The limited cgroup's usage alone: cheap enough for every tick."""
        return _parse_int(_pread(self._usage))

    def close(self) -> None:
        close_descriptors(self, ("_limit", "_usage", "_events", "_stat"))


# limit, usage, events
_V1_FILES = ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.oom_control")
_V2_FILES = ("memory.max", "memory.current", "memory.events")


def _memory_cgroup(lines: List[str]) -> Optional[Tuple[int, str]]:
    v2: Optional[str] = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            return 1, path
    return (2, v2) if v2 is not None else None


def _candidates(mount: str, path: str) -> List[str]:
    """``mount/path`` and its ancestors up to ``mount``, nearest first."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    start = os.path.join(mount, *parts) if parts else mount
    if not os.path.isdir(start):
        return [mount]  # a cgroup namespace: the mount is this container's cgroup
    return [os.path.join(mount, *parts[:n]) for n in range(len(parts), -1, -1)]


def _pread(fd: Optional[int], size: int = 512) -> Optional[bytes]:
    if fd is None:
        return None
    try:
        return os.pread(fd, size, 0)
    except OSError:
        return None


def _parse_int(data: Optional[bytes]) -> Optional[int]:
    if data is None:
        return None
    try:
        return int(data.strip())
    except ValueError:
        return None


def _parse_limit(data: Optional[bytes]) -> Optional[int]:
    value = _parse_int(data)  # "max" (v2) parses as None
    if value is None or value <= 0 or value >= UNLIMITED_BYTES:
        return None
    return value


def _event_count(data: Optional[bytes], key: bytes) -> Optional[int]:
    # v2 memory.events: "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n...";
    # v1 memory.oom_control: "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n".
    if data is None:
        return None
    for line in data.splitlines():
        name, _, value = line.partition(b" ")
        if name == key:
            try:
                return int(value)
            except ValueError:
                return None
    return None
