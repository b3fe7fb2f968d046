"""Reads one process's files under /proc: its stat line, its children, its command and its memory rollup.

Every reader takes the /proc root, so that the unit tests can give a fake tree,
and returns ``None`` where the process is gone or the file cannot be read: a
process may end between any two reads, and that is an answer, not an error.
"""

from __future__ import annotations

import os
from typing import NamedTuple

# A command line or an environment is read up to this much: a summary needs its
# start only, and a process can have megabytes of arguments.
CMDLINE_READ_BYTES = 4096
ENVIRON_READ_BYTES = 65536
# smaps_rollup is a few hundred bytes; stat a few hundred too.
SMALL_READ_BYTES = 4096

# The kernel's page size, for the RSS in pages of the stat line.
try:
    PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):
    PAGE_BYTES = 4096


class ProcStat(NamedTuple):
    """The fields of /proc/<pid>/stat the tree uses."""

    pid: int
    name: str
    state: str
    ppid: int
    start_time: int
    rss_bytes: int


class Rollup(NamedTuple):
    """The figures of /proc/<pid>/smaps_rollup the tree uses, in bytes."""

    rss: int
    pss: int
    uss: int
    swap: int


def read_bytes(path: str, limit: int = SMALL_READ_BYTES) -> bytes | None:
    """The start of a file, or None where it cannot be read (gone, refused)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def parse_stat(data: bytes) -> ProcStat | None:
    """The stat line's fields; None where it is not one.

    The name (field 2) is in parentheses and may itself hold spaces and
    parentheses, so the fields after it are counted from its last ``)``.
    """
    try:
        open_at = data.index(b"(")
        close_at = data.rindex(b")")
        pid = int(data[:open_at])
        name = data[open_at + 1 : close_at].decode("utf-8", "replace")
        rest = data[close_at + 2 :].split()
        # rest[0] is field 3 (state): field n is rest[n - 3].
        return ProcStat(
            pid, name, rest[0].decode("ascii", "replace"), int(rest[1]), int(rest[19]), int(rest[21]) * PAGE_BYTES
        )
    except (ValueError, IndexError):
        return None


def read_stat(root: str, pid: int) -> ProcStat | None:
    """The process's stat fields, or None where it is gone."""
    data = read_bytes(f"{root}/{pid}/stat")
    return parse_stat(data) if data else None


def read_children(root: str, pid: int) -> list[int] | None:
    """The children of every thread of ``pid`` (/proc/<pid>/task/<tid>/children); None where the
    kernel has no such files (built without CONFIG_PROC_CHILDREN) or the process is gone.

    A child belongs to the thread that forked it, so every thread's file is read.
    """
    try:
        tids = os.listdir(f"{root}/{pid}/task")
    except OSError:
        return None
    children: list[int] = []
    found_file = False
    for tid in tids:
        data = read_bytes(f"{root}/{pid}/task/{tid}/children", 65536)
        if data is None:
            continue
        found_file = True
        children.extend(int(child) for child in data.split())
    return children if found_file or not tids else None


def has_children_files(root: str, pid: int) -> bool:
    """Whether this kernel lists children per thread (CONFIG_PROC_CHILDREN)."""
    return os.path.exists(f"{root}/{pid}/task/{pid}/children")


def scan_parents(root: str) -> dict[int, list[ProcStat]]:
    """Every process's stat by its parent's pid: one scan of /proc/*/stat, where
    the per-thread children files are missing."""
    by_parent: dict[int, list[ProcStat]] = {}
    try:
        names = os.listdir(root)
    except OSError:
        return by_parent
    for name in names:
        if name.isdigit():
            stat = read_stat(root, int(name))
            if stat is not None:
                by_parent.setdefault(stat.ppid, []).append(stat)
    return by_parent


def read_cmdline(root: str, pid: int) -> list[str] | None:
    """The process's arguments (the start of them), or None where they cannot be read.

    A process that set its title (setproctitle: Ray's ``ray::IDLE``, vLLM's
    ``VLLM::EngineCore``) shows the title here as one argument.
    """
    data = read_bytes(f"{root}/{pid}/cmdline", CMDLINE_READ_BYTES)
    if data is None:
        return None
    return [part.decode("utf-8", "replace") for part in data.rstrip(b"\0").split(b"\0")] if data else []


def read_environ_names(root: str, pid: int, wanted: frozenset[str]) -> set[str]:
    """Which of ``wanted`` variables the process started with (empty where unreadable).

    Only names: no value leaves this function.
    """
    data = read_bytes(f"{root}/{pid}/environ", ENVIRON_READ_BYTES)
    if not data:
        return set()
    names = {entry.split(b"=", 1)[0].decode("utf-8", "replace") for entry in data.split(b"\0") if entry}
    return names & wanted


def parse_rollup(data: bytes) -> Rollup | None:
    """smaps_rollup's figures (kB lines) in bytes; None where a needed line is missing."""
    values: dict[bytes, int] = {}
    for line in data.splitlines():
        key, _, rest = line.partition(b":")
        if key in _ROLLUP_KEYS:
            try:
                values[key] = int(rest.split()[0]) * 1024
            except (ValueError, IndexError):
                return None
    try:
        return Rollup(
            values[b"Rss"],
            values[b"Pss"],
            values[b"Private_Clean"] + values[b"Private_Dirty"],
            values.get(b"Swap", 0),
        )
    except KeyError:
        return None


_ROLLUP_KEYS = frozenset({b"Rss", b"Pss", b"Private_Clean", b"Private_Dirty", b"Swap"})


def read_rollup(root: str, pid: int) -> Rollup | None:
    """The process's smaps_rollup (Linux >= 4.14), or None where it cannot be read.

    Reading it walks the process's page tables: its cost grows with the
    memory the process maps (about 25 us per 1 MB resident, measured), which
    is why rollup_budget.py paces it.
    """
    data = read_bytes(f"{root}/{pid}/smaps_rollup", SMALL_READ_BYTES)
    return parse_rollup(data) if data else None
