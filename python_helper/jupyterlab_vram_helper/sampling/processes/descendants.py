"""Finds every process the kernel started: its descendants, and those re-parented away that still live.

Two ways to find children, chosen once: ``/proc/<pid>/task/<tid>/children``
(one small file per thread, Linux built with CONFIG_PROC_CHILDREN, as the
common distributions are), else one scan of every ``/proc/*/stat`` for its
parent id (milliseconds on a machine with a few hundred processes:
benchmarks/process_tree_cost.py measures both). Either way only the stat
lines are read of processes outside the tree; nothing else of theirs.

A process is named by its pid and its start time (field 22 of its stat
line): a pid is reused. Every descendant seen is remembered, so that one whose
parent chain no longer reaches the kernel (a daemon that double-forked, a
worker whose parent ended) is still followed, with its own descendants, while a
process with that pid and that start time lives.
"""

from __future__ import annotations

from typing import NamedTuple

from .proc_files import ProcStat, has_children_files, read_children, read_stat, scan_parents

# The most processes followed; a fork bomb in a cell must not make the sampler walk forever.
MAX_PROCESSES = 256


class Descendant(NamedTuple):
    """One process of the tree, as found."""

    stat: ProcStat
    depth: int
    reparented: bool


class Descendants:
    """Finds the kernel's descendants at each call, and remembers them to follow the re-parented ones."""

    def __init__(self, pid: int, root: str = "/proc", use_children_files: bool | None = None):
        self.pid = pid
        self._root = root
        if use_children_files is None:
            use_children_files = has_children_files(root, pid)
        self.method = "task_children" if use_children_files else "stat_scan"
        # pid -> start time of every process of the last tree: followed while it lives.
        self.followed: dict[int, int] = {}

    def find(self) -> list[Descendant]:
        """The tree now: parents before their children, siblings by pid."""
        children_of = self._children_by_files if self.method == "task_children" else self._scanner()
        found: list[Descendant] = []
        seen: set[int] = {self.pid}
        self._walk(self.pid, 0, False, children_of, found, seen)
        for pid, start_time in sorted(self.followed.items()):
            if pid in seen or len(found) >= MAX_PROCESSES:
                continue
            stat = read_stat(self._root, pid)
            if stat is None or stat.start_time != start_time or stat.state in _ENDED:
                continue  # it ended (and the pid may be another process's now)
            seen.add(pid)
            found.append(Descendant(stat, 1, True))
            self._walk(pid, 1, True, children_of, found, seen)
        self.followed = {d.stat.pid: d.stat.start_time for d in found}
        return found

    def is_followed(self, pid: int, start_time: int) -> bool:
        """Whether that very process (pid and start time) was in the last tree."""
        return self.followed.get(pid) == start_time

    def _walk(self, pid: int, depth: int, reparented: bool, children_of, found: list[Descendant], seen: set[int]):
        for stat in children_of(pid):
            if stat.pid in seen or len(found) >= MAX_PROCESSES:
                continue
            seen.add(stat.pid)
            found.append(Descendant(stat, depth + 1, reparented))
            self._walk(stat.pid, depth + 1, reparented, children_of, found, seen)

    def _children_by_files(self, pid: int) -> list[ProcStat]:
        """The living children of ``pid``, from its threads' children files."""
        children = []
        for child in sorted(set(read_children(self._root, pid) or ())):
            stat = read_stat(self._root, child)
            # The parent is checked again: the child may have ended, and its pid
            # gone to another process, between the two reads.
            if stat is not None and stat.ppid == pid and stat.state not in _ENDED:
                children.append(stat)
        return children

    def _scanner(self):
        """A children_of over one scan of /proc/*/stat, made for this call."""
        by_parent = scan_parents(self._root)

        def children_of(pid: int) -> list[ProcStat]:
            return sorted((s for s in by_parent.get(pid, ()) if s.state not in _ENDED), key=lambda s: s.pid)

        return children_of


# Zombies (ended, not yet reaped) and dead tasks hold no memory: they are not listed.
_ENDED = frozenset({"Z", "X", "x"})
