"""Reads the kernel's container memory limit, which is its cgroup's limit, usage and OOM kill count.

In a container (Docker, Kubernetes, a JupyterHub spawner) the kernel is killed
at its cgroup's memory limit, long before the node's RAM runs out; the node's
total in /proc/meminfo says nothing about it. :class:`CgroupMemory` finds the
cgroup of this process and, among it and its ancestors, the one with the
smallest limit, because the kernel is killed at the tightest limit on its path
(which may be on a parent slice, or Docker's ``--cgroup-parent``), not at the
nearest one. The files read are these:

- On cgroup v2, ``/proc/self/cgroup`` has ``0::/path``. The files are
  ``memory.max`` (where ``max`` means no limit), ``memory.current``,
  ``memory.events`` (``oom_kill``, ``oom``) and ``memory.stat``
  (``inactive_file``).
- On cgroup v1, ``/proc/self/cgroup`` has a ``N:memory:/path`` line, or one
  with ``memory`` among a comma-separated list. The files are
  ``memory.limit_in_bytes`` (where a huge value means no limit),
  ``memory.usage_in_bytes``, ``memory.oom_control`` (``oom_kill``, on Linux
  4.13 and later) and ``memory.stat`` (``total_inactive_file``). A v1 memory
  line wins over ``0::``, because in a hybrid layout the memory controller
  lives on v1.

As for the OOM kill count, Linux counts a kill in the victim's own memory
cgroup and, on v2, in each of its parents, since ``memory.events`` is
hierarchical there (v1 did so only in Linux 5.2 to 5.6). So on v2 the limited
cgroup's count is read, which takes in the kernel's, while on v1 the kernel's
own cgroup's ``memory.oom_control`` is read, because the limited one's never
rises when the limit sits on a parent (such as a Slurm job or step above its
``task_N``).

Where the container may swap, the kernel is not killed at the memory limit.
Past it, the cgroup's pages go to swap, and the OOM killer acts once no more
can, because the swap limit or the machine's swap is full. A page can go to
swap only while every cgroup above the kernel has room for it, so the
tightest swap limit on the path is the one that ends swapping, wherever it
sits (Docker and Kubernetes set both on the container's own cgroup; a
systemd slice's ``MemorySwapMax=`` sits on the slice, above a scope's
``MemoryMax=``). Where no cgroup on the path limits swap, the usage is the
memory-limited cgroup's, and the machine's swap is the only bound. The files
differ by version:

- On cgroup v2, ``memory.swap.max`` (where ``max`` means no limit) limits swap
  alone, per cgroup, so the smallest on the path is the limit, and
  ``memory.swap.current`` of that cgroup is the usage.
- On cgroup v1, ``memory.memsw.limit_in_bytes`` caps memory and swap together,
  of a cgroup's whole subtree, and the memory limit that pushes pages out may
  sit on another cgroup of the path (a child, or a parent). The swap cgroup is
  the one with the smallest memsw limit; the swap limit is that memsw limit
  less the effective memory limit (the tightest ``memory.limit_in_bytes`` on
  the path, the one found above), floored at 0. That is what may go to swap
  once memory is full. The usage is that cgroup's memsw usage less its
  memory usage, floored at 0. Without swap accounting (``swapaccount=0``, or
  a kernel built without it) the files are absent, so the figures are
  ``None``, and the cgroup limits no swap.

Swappiness 0 allows no swap at the limit. The reclaim that a cgroup's limit
triggers then scans file pages only (mm/vmscan.c ``get_scan_count``:
``if (cgroup_reclaim(sc) && !swappiness) scan_balance = SCAN_FILE``), so the
kernel is OOM-killed at its memory limit with swap free, and the swap limit
reads 0. The swappiness that counts is the one that the kernel's pages are
scanned with. On v1 it is ``memory.swappiness`` of the kernel's own cgroup,
which owns the LRU lists scanned (``lruvec_memcg``); a child inherits its
parent's value when it is created, and Docker's ``--memory-swappiness`` sets
the container's cgroup. v2 has no per-cgroup swappiness, so the machine's
``/proc/sys/vm/swappiness`` applies.

The usage counts the page cache of every file that the container read or
wrote. Reading a dataset fills it up to the limit without any risk of an OOM
kill, since the kernel reclaims inactive file pages first. ``inactive_file``
is that reclaimable part, and the usage less it is the working set that
docker stats, cAdvisor and Kubernetes' eviction go by.

Inside a container with its own cgroup namespace, the path reads ``/`` and
the container's cgroup is mounted at the root. When ``<root>/<path>`` does
not exist, because the path is the host's while the mount is the
container's, the walk starts at the mount's root.

The files found stay open and are read with ``pread``. Every failure gives
``None``, never an exception.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from .descriptors import close_descriptors, open_fd

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ...protocol_types import ContainerFigures

# memory.stat is some 40 lines on v2 or 36 on v1, so it is read whole.
STAT_READ_BYTES = 8192
# cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages (9223372036854771712
# with 4 KiB pages); anything this large is no limit.
UNLIMITED_BYTES = 1 << 60


class CgroupMemory:
    """The container memory limit of this process, if any, which ``read()`` reads once per sample."""

    def __init__(
        self, proc_self: str = "/proc/self", cgroup_root: str = "/sys/fs/cgroup", proc_root: str | None = None
    ):
        """Find the cgroup and open its files.

        ``proc_root`` is where v2's ``sys/vm/swappiness`` is read from, by
        default the folder above ``proc_self``.
        """
        self.version: int | None = None
        # The directory that sets the limit.
        self.path: str | None = None
        self._limit: int | None = None
        self._usage: int | None = None
        self._events: int | None = None
        self._stat: int | None = None
        # The directory whose swap figures are read.
        self.swap_path: str | None = None
        # On v2 these are memory.swap.max and memory.swap.current. On v1 they
        # are memory.memsw.limit_in_bytes, memory.memsw.usage_in_bytes, and the
        # swap cgroup's memory usage to subtract. The last is opened only with
        # the memsw files, and only where the swap cgroup is not the
        # memory-limited one, whose memory usage is ``_usage``, read once for
        # both.
        self._swap_limit: int | None = None
        self._swap_usage: int | None = None
        self._swap_memory_usage: int | None = None
        # On v1 this is memory.swappiness of the kernel's cgroup, and on v2
        # <proc>/sys/vm/swappiness. It is kept open and read with the rest at
        # the slow pace, not once, because an admin can change it at run time
        # (with sysctl vm.swappiness, or a write to memory.swappiness), and a
        # stale value would say that the kernel may swap where it is killed at
        # the limit, or the reverse. That costs one pread a second.
        self._swappiness: int | None = None
        if proc_root is None:
            proc_root = os.path.dirname(os.path.normpath(proc_self)) or "."
        try:
            self._find(proc_self, cgroup_root, proc_root)
        except Exception:
            # An odd /proc or mount gives no container figures.
            self.close()

    @property
    def has_limit(self) -> bool:
        return self._limit is not None

    def _find(self, proc_self: str, cgroup_root: str, proc_root: str) -> None:
        with open(f"{proc_self}/cgroup", "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        found = _memory_cgroup(lines)
        if found is None:
            return
        version, path = found
        mount = os.path.join(cgroup_root, "memory") if version == 1 else cgroup_root
        names = _V1_FILES if version == 1 else _V2_FILES
        candidates = _candidates(mount, path)
        tightest = _tightest(candidates, names[0], _parse_limit)
        if tightest is None:
            return
        directory = tightest[1]
        limit_fd = open_fd(os.path.join(directory, names[0]))
        if limit_fd is None:
            return
        self.version, self.path, self._limit = version, directory, limit_fd
        self._usage = open_fd(os.path.join(directory, names[1]))
        # v1 counts a kill in the victim's own cgroup alone (see the module's
        # docstring), so the kernel's own cgroup is read there.
        self._events = open_fd(os.path.join(candidates[0] if version == 1 else directory, names[2]))
        self._stat = open_fd(os.path.join(directory, "memory.stat"))
        self._inactive_key = b"total_inactive_file" if version == 1 else b"inactive_file"
        self._find_swap(version, candidates, directory)
        self._swappiness = open_fd(
            os.path.join(candidates[0], "memory.swappiness")
            if version == 1
            else os.path.join(proc_root, "sys", "vm", "swappiness")
        )

    def _find_swap(self, version: int, directories: list[str], memory_directory: str) -> None:
        """Open the swap files of the cgroup with the smallest swap limit on the
        path (v2's ``memory.swap.max``, v1's ``memory.memsw.limit_in_bytes``;
        see the module's docstring), or else the memory-limited cgroup's."""
        names = ("memory.swap.max", "memory.swap.current") if version == 2 else _V1_SWAP_FILES
        parse = _parse_swap_limit if version == 2 else _parse_limit
        tightest = _tightest(directories, names[0], parse)
        directory = tightest[1] if tightest is not None else memory_directory
        self.swap_path = directory
        self._swap_limit = open_fd(os.path.join(directory, names[0]))
        self._swap_usage = open_fd(os.path.join(directory, names[1]))
        if version == 1 and self._swap_usage is not None and directory != memory_directory:
            self._swap_memory_usage = open_fd(os.path.join(directory, _V1_FILES[1]))

    def read(self) -> ContainerFigures | None:
        """The limit, the cgroup's usage and its OOM kills, or ``None`` without a limit."""
        if self._limit is None:
            return None
        limit = _parse_limit(_pread(self._limit))
        # The limit may have been lifted since the cgroup was found.
        if limit is None:
            return None
        usage = _parse_int(_pread(self._usage))
        swap_limit, swap_usage = self.swap(limit, usage)
        return {
            "limit_bytes": limit,
            "usage_bytes": usage,
            "inactive_file_bytes": _event_count(_pread(self._stat, STAT_READ_BYTES), self._inactive_key),
            "oom_kill_count": _event_count(_pread(self._events), b"oom_kill"),
            "cgroup_version": self.version or 0,
            "swap_limit_bytes": swap_limit,
            "swap_usage_bytes": swap_usage,
        }

    def swap(self, memory_limit: int, memory_usage: int | None) -> tuple[int | None, int | None]:
        """The swap limit and the swap usage, given the effective memory limit and
        the memory-limited cgroup's usage just read (see the module's docstring).

        Each is None where it is unknown, and the limit is None also where none
        is set.
        """
        if self.version == 2:
            limit = _parse_swap_limit(_pread(self._swap_limit))
            usage = _non_negative(_parse_int(_pread(self._swap_usage)))
        else:
            memsw_limit = _parse_limit(_pread(self._swap_limit))
            limit = max(0, memsw_limit - memory_limit) if memsw_limit is not None else None
            usage = None
            memsw_usage = _parse_int(_pread(self._swap_usage))
            if memsw_usage is not None:
                if self.swap_path != self.path:
                    memory_usage = _parse_int(_pread(self._swap_memory_usage))
                if memory_usage is not None:
                    usage = max(0, memsw_usage - memory_usage)
        if _parse_int(_pread(self._swappiness)) == 0:
            # Swappiness 0 allows no swap at the limit, whatever swap is free
            # (see the module's docstring).
            limit = 0
        return limit, usage

    def usage(self) -> int | None:
        """The limited cgroup's usage alone, which is cheap enough to read at every tick."""
        return _parse_int(_pread(self._usage))

    def close(self) -> None:
        close_descriptors(
            self,
            ("_limit", "_usage", "_events", "_stat", "_swap_limit", "_swap_usage", "_swap_memory_usage", "_swappiness"),
        )


# The files of the limit, the usage and the events, for each version.
_V1_FILES = ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.oom_control")
_V2_FILES = ("memory.max", "memory.current", "memory.events")
# v1's swap limit and usage files, which count memory and swap together.
_V1_SWAP_FILES = ("memory.memsw.limit_in_bytes", "memory.memsw.usage_in_bytes")


def _memory_cgroup(lines: list[str]) -> tuple[int, str] | None:
    v2: str | None = None
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


def _tightest(directories: list[str], name: str, parse: Callable[[bytes | None], int | None]) -> tuple[int, str] | None:
    """The (limit, directory) of the smallest limit in the file ``name`` among
    ``directories``, or None where none sets one.

    Of equal limits, the nearest wins. Each file is read once, and nothing is
    kept open.
    """
    tightest: tuple[int, str] | None = None
    for directory in directories:
        limit = parse(_read_file(os.path.join(directory, name)))
        if limit is not None and (tightest is None or limit < tightest[0]):
            tightest = (limit, directory)
    return tightest


def _candidates(mount: str, path: str) -> list[str]:
    """``mount/path`` and its ancestors up to ``mount``, nearest first."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    start = os.path.join(mount, *parts) if parts else mount
    if not os.path.isdir(start):
        # In a cgroup namespace, the mount is this container's cgroup.
        return [mount]
    return [os.path.join(mount, *parts[:n]) for n in range(len(parts), -1, -1)]


def _pread(fd: int | None, size: int = 512) -> bytes | None:
    if fd is None:
        return None
    try:
        return os.pread(fd, size, 0)
    except OSError:
        return None


def _parse_int(data: bytes | None) -> int | None:
    if data is None:
        return None
    try:
        return int(data.strip())
    except ValueError:
        return None


def _parse_limit(data: bytes | None) -> int | None:
    # v2's "max" parses as None.
    value = _parse_int(data)
    if value is None or value <= 0 or value >= UNLIMITED_BYTES:
        return None
    return value


def _non_negative(value: int | None) -> int | None:
    return value if value is not None and value >= 0 else None


def _parse_swap_limit(data: bytes | None) -> int | None:
    """A swap limit, where 0 is a limit that allows no swap at all, and ``max``,
    a huge value or anything malformed is None."""
    value = _parse_int(data)
    if value is None or value < 0 or value >= UNLIMITED_BYTES:
        return None
    return value


def _read_file(path: str) -> bytes | None:
    """A small file's text, read once for the walk over the candidates, or None
    if it cannot be read."""
    fd = open_fd(path)
    if fd is None:
        return None
    try:
        return _pread(fd)
    finally:
        os.close(fd)


def _event_count(data: bytes | None, key: bytes) -> int | None:
    # v2's memory.events reads "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n...",
    # and v1's memory.oom_control reads "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n".
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
