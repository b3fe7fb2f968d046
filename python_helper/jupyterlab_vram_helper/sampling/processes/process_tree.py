"""The sample's ``processes``: every process the kernel started, with its role, host and GPU memory, and totals.

The sampler thread reads the tree at most every :data:`MIN_INTERVAL_S`
(descendants.py finds the processes, roles.py names them once per process,
smaps_rollup is read within rollup_budget.py's budget), and keeps the figures
in between: with no process, a tick costs nothing more. GPU memory per
process comes from the NVML process lists the sampler reads anyway
(readers/nvml.py): no driver call is added per process.

The cell hooks read :attr:`ProcessTreeReader.latest` (a tuple made at each
reading) and nothing else; the sender thread asks for a reading after a
cell (:meth:`ProcessTreeReader.read_totals`). A lock makes the two threads'
readings take turns.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .descendants import Descendant, Descendants
from .proc_files import read_cmdline, read_rollup
from .rollup_budget import RollupBudget, read_order, thread_cpu

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ...protocol_types import ProcessTree, ProcessTreeTotals, TreeGpuTotal, TreeProcess

# The tree is read at most this often (seconds): at the default 1 s interval, every tick.
MIN_INTERVAL_S = 0.9
# A command line is summed up in this many characters.
COMMAND_CHARS = 160
# What the tree last read of a process that ended is kept this long (seconds), and for at
# most this many: a worker the out-of-memory killer took is explained with its last figures.
ENDED_KEPT_S = 60.0
MAX_ENDED = 64


class GpuList(NamedTuple):
    """One device's NVML process list as the sampler last read it."""

    device: int  # the CUDA ordinal
    bytes_by_pid: dict[int, int | None] | None  # None: NVML cannot tell (no list, another pid namespace)
    kernel_bytes: int | None


class TreeTotals(NamedTuple):
    """What the cell hooks keep of a reading: the processes' host bytes, their count and GPU bytes per device."""

    host_bytes: int
    processes: int
    gpus: dict[int, int | None]


class Seen(NamedTuple):
    """What the tree last read of one process (numbers only), kept a while after it ended."""

    pid: int
    start_time: int
    role: str
    host_bytes: int | None
    uss_bytes: int | None
    first_uss_bytes: int | None  # its USS at the first reading: copy-on-write growth is the difference
    rollup_at: float | None
    gpus: tuple[tuple[int, int | None], ...]  # (device, NVML's bytes)
    ended_at: float | None  # the reader's clock when it was first missed; None while alive


class _Known:
    """What is kept of one process between readings (numbers and strings only)."""

    __slots__ = (
        "start_time",
        "name",
        "argv",
        "role",
        "command",
        "rollup",
        "rollup_at",
        "rollup_read",
        "rollup_rss",
        "unreadable",
        "first_uss",
    )

    def __init__(self, start_time: int, argv: list[str], name: str):
        self.start_time = start_time
        self.first_uss: int | None = None
        self.rollup: Any = None
        self.rollup_at: float | None = None
        # When it was read by the pacing clock: rollup_at is the wall clock the sample reports,
        # which read_order must not compare with the monotonic clock it paces by.
        self.rollup_read: float | None = None
        self.rollup_rss: int | None = None
        self.unreadable = False
        self.command_read(argv, name)

    def command_read(self, argv: list[str], name: str) -> None:
        """Its command and name (again after an exec: the role is read anew)."""
        self.name = name
        self.argv: list[str] | None = argv  # until its role is read
        self.command = _summary(argv, name)
        self.role: Any = None


class ProcessTreeReader:
    """Reads the kernel's process tree into the sample's ``processes`` (see the module docstring)."""

    def __init__(
        self,
        pid: int | None = None,
        root: str = "/proc",
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        budget: RollupBudget | None = None,
        use_children_files: bool | None = None,
        min_interval_s: float = MIN_INTERVAL_S,
    ):
        self.pid = os.getpid() if pid is None else pid
        self.root = root
        self._clock = clock
        self._wall_clock = wall_clock
        self._budget = budget if budget is not None else RollupBudget(clock)
        self._use_children_files = use_children_files
        self._min_interval_s = min_interval_s
        self.available = os.path.isdir(f"{root}/{self.pid}")
        self._descendants: Descendants | None = None
        self._known: dict[int, _Known] = {}
        self._kernel_argv: list[str] | None = None
        # The kernel's command as a process summary: a child that still has it has not exec'd yet.
        self._kernel_command: str | None = None
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._found: list[Descendant] = []
        self._tree: ProcessTree | None = None
        # The processes' totals at the last reading, for the cell hooks; None while there are none.
        self.latest: TreeTotals | None = None
        # What the last reading saw of each process, and of those that ended lately, by pid.
        self._seen: dict[int, Seen] = {}
        self._ended: dict[int, Seen] = {}

    @property
    def descendants(self) -> Descendants:
        """The finder of descendants, made at the first reading."""
        if self._descendants is None:
            self._descendants = Descendants(self.pid, self.root, self._use_children_files)
            self._kernel_argv = read_cmdline(self.root, self.pid)
            self._kernel_command = _summary(self._kernel_argv, "") if self._kernel_argv else None
        return self._descendants

    def read(self, kernel_rss: int | None, gpus: Sequence[GpuList], fresh: bool = False) -> ProcessTree | None:
        """The tree for a sample: read anew when due (or ``fresh``: every smaps_rollup too), else the last one."""
        if not self.available:
            return None
        now = self._clock()
        with self._lock:
            if fresh or self._tree is None or now - self._read_at >= self._min_interval_s:
                self._read_at = now
                self._found = self.descendants.find()
                self._tree = self._figures(self._found, gpus, fresh)
            elif self._found:
                # The processes as last read, with the kernel's RSS of this tick in the totals.
                self._tree = {**self._tree, "totals": _totals(self._tree["processes"], kernel_rss, gpus)}
                return self._tree
            tree = self._tree
        if self._found:
            tree["totals"] = _totals(tree["processes"], kernel_rss, gpus)
        return tree

    def read_totals(self, gpus: Sequence[GpuList]) -> TreeTotals | None:
        """A reading now, for a cell's record (the sender thread): the processes' totals, None with none."""
        if not self.available:
            return None
        with self._lock:
            self._read_at = self._clock()
            self._found = self.descendants.find()
            self._tree = self._figures(self._found, gpus, False)
        return self.latest

    def find(self, pid: int, start_time: int) -> tuple[bool, TreeProcess | None]:
        """Whether that process (pid and start time) is in the tree now (a fresh walk), and its figures."""
        with self._lock:
            found = self.descendants.find()
            for descendant in found:
                if descendant.stat.pid == pid and descendant.stat.start_time == start_time:
                    entry = self._entry(descendant, {}, [], True)
                    return True, entry
        return False, None

    def recently_seen(self) -> list[Seen]:
        """Every process of the last reading, and those that ended within ENDED_KEPT_S, as last read."""
        with self._lock:
            now = self._clock()
            ended = [seen for seen in self._ended.values() if now - (seen.ended_at or now) <= ENDED_KEPT_S]
            return [*self._seen.values(), *ended]

    def _note_seen(self, entries: list[TreeProcess]) -> None:
        """Keep what this reading saw (called under the lock); what vanished since moves to the ended."""
        current = {entry["pid"]: _seen(entry, self._known.get(entry["pid"])) for entry in entries}
        now = self._clock()
        for pid, seen in self._seen.items():
            if pid not in current or current[pid].start_time != seen.start_time:
                self._ended.pop(pid, None)
                self._ended[pid] = seen._replace(ended_at=now)
        while len(self._ended) > MAX_ENDED:
            del self._ended[next(iter(self._ended))]
        self._seen = current

    # -- figures -----------------------------------------------------------------

    def _figures(self, found: list[Descendant], gpus: Sequence[GpuList], fresh: bool) -> ProcessTree:
        """The tree's figures from ``found`` (called under the lock)."""
        alive = {d.stat.pid: d for d in found}
        for pid in [
            pid
            for pid, known in self._known.items()
            if pid not in alive or alive[pid].stat.start_time != known.start_time
        ]:
            del self._known[pid]
        if found:
            self._read_rollups(found, fresh)
        registry: dict[int, Any] | None = None
        entries: list[TreeProcess] = []
        roles: dict[int, Any] = {}
        for descendant in found:
            known = self._known_of(descendant)
            if known.role is None:
                if registry is None:
                    registry = _registry()
                known.role = _recognise(self, descendant, known, registry, roles)
            roles[descendant.stat.pid] = known.role
            entries.append(self._entry(descendant, roles, gpus, False))
        self.latest = _cell_totals(entries, gpus) if entries else None
        if entries or self._seen:
            self._note_seen(entries)
        return {
            "method": self.descendants.method,
            "read_at": self._wall_clock(),
            "processes": entries,
            "totals": None,
        }

    def _known_of(self, descendant: Descendant) -> _Known:
        stat = descendant.stat
        known = self._known.get(stat.pid)
        if known is None:
            argv = read_cmdline(self.root, stat.pid) or []
            known = self._known[stat.pid] = _Known(stat.start_time, argv, stat.name)
        elif known.name != stat.name or known.command.startswith("[") or known.command == self._kernel_command:
            # It exec'd since (a fork read before its exec has the kernel's command, and keeps the
            # kernel's name when it runs Python again, so its command is read until it differs),
            # or its command could not be read at the first look (read in the middle of an exec).
            argv = read_cmdline(self.root, stat.pid) or []
            if known.name != stat.name or _summary(argv, stat.name) != known.command:
                known.command_read(argv, stat.name)
        return known

    def _read_rollups(self, found: list[Descendant], fresh: bool) -> None:
        """Read the smaps_rollup of the processes most due, within the budget (every one if ``fresh``)."""
        now = self._clock()
        candidates = []
        for descendant in found:
            known = self._known_of(descendant)
            if known.unreadable:
                continue
            read_at = None if known.rollup_read is None or fresh else known.rollup_read
            candidates.append((descendant.stat.pid, read_at, descendant.stat.rss_bytes, known.rollup_rss))
        for pid in read_order(candidates, now):
            if not fresh and not self._budget.available():
                break
            started = thread_cpu()
            rollup = read_rollup(self.root, pid)
            self._budget.spend(thread_cpu() - started)
            known = self._known[pid]
            if rollup is None:
                known.unreadable = True
                continue
            known.rollup = rollup
            known.rollup_at = self._wall_clock()
            known.rollup_read = self._clock()
            known.rollup_rss = rollup.rss
            if known.first_uss is None:
                known.first_uss = rollup.uss

    def _entry(
        self, descendant: Descendant, roles: dict[int, Any], gpus: Sequence[GpuList], fresh_rollup: bool
    ) -> TreeProcess:
        stat = descendant.stat
        known = self._known_of(descendant)
        if fresh_rollup and not known.unreadable:
            rollup = read_rollup(self.root, stat.pid)
            if rollup is not None:
                known.rollup, known.rollup_at, known.rollup_rss = rollup, self._wall_clock(), rollup.rss
                if known.first_uss is None:
                    known.first_uss = rollup.uss
                known.rollup_read = self._clock()
        rollup = known.rollup if known.rollup_at is not None else None
        role = known.role if known.role is not None else _OTHER_ROLE
        return {
            "pid": stat.pid,
            "start_time": stat.start_time,
            "ppid": stat.ppid,
            "reparented": descendant.reparented,
            "depth": descendant.depth,
            "name": stat.name,
            "command": known.command,
            "role": role[0],
            "role_basis": role[1],
            "role_guess": role[2],
            "host": {
                "measure": "uss" if rollup is not None else "rss",
                "host_bytes": rollup.uss if rollup is not None else stat.rss_bytes,
                "uss_bytes": rollup.uss if rollup is not None else None,
                "pss_bytes": rollup.pss if rollup is not None else None,
                "rss_bytes": stat.rss_bytes,
                "swap_bytes": rollup.swap if rollup is not None else None,
                "rollup_at": known.rollup_at,
            },
            "gpus": [
                {"index": gpu.device, "used_bytes": gpu.bytes_by_pid[stat.pid]}
                for gpu in gpus
                if gpu.bytes_by_pid is not None and stat.pid in gpu.bytes_by_pid
            ],
        }


def _seen(entry: TreeProcess, known: _Known | None) -> Seen:
    host = entry["host"]
    return Seen(
        entry["pid"],
        entry["start_time"],
        entry["role"],
        host["host_bytes"],
        host["uss_bytes"],
        known.first_uss if known is not None else None,
        host["rollup_at"],
        tuple((gpu["index"], gpu["used_bytes"]) for gpu in entry["gpus"]),
        None,
    )


def _registry() -> dict[int, Any]:
    from .roles import registry_roles

    return registry_roles()


def _recognise(
    reader: ProcessTreeReader, descendant: Descendant, known: _Known, registry: dict[int, Any], roles: dict[int, Any]
) -> Any:
    from .roles import recognise

    argv, known.argv = known.argv or [], None
    stat = descendant.stat
    return recognise(reader.root, stat.pid, stat.name, argv, reader._kernel_argv, registry, roles.get(stat.ppid))


# roles.OTHER, without loading roles.py for a tree that has no process yet: (role, basis, guess).
_OTHER_ROLE = ("other", None, False)


def _summary(argv: list[str], name: str) -> str:
    """A command line in at most COMMAND_CHARS characters; the name where it has none (a kernel thread)."""
    text = " ".join(argv) if argv else f"[{name}]"
    return text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 1] + "…"


def _cell_totals(entries: list[TreeProcess], gpus: Sequence[GpuList]) -> TreeTotals:
    host = sum(entry["host"]["host_bytes"] or 0 for entry in entries)
    return TreeTotals(host, len(entries), {gpu.device: _processes_gpu_bytes(entries, gpu) for gpu in gpus})


def _processes_gpu_bytes(entries: list[TreeProcess], gpu: GpuList) -> int | None:
    if gpu.bytes_by_pid is None:
        return None
    total = 0
    for entry in entries:
        used = gpu.bytes_by_pid.get(entry["pid"], 0)
        if used is None:
            return None
        total += used
    return total


def _totals(entries: list[TreeProcess], kernel_rss: int | None, gpus: Sequence[GpuList]) -> ProcessTreeTotals | None:
    """The kernel and its processes together (None with no process: the sample's own figures say it)."""
    if not entries:
        return None
    hosts = [entry["host"] for entry in entries]
    processes_host = sum(host["host_bytes"] or 0 for host in hosts)
    measures = {host["measure"] for host in hosts}
    pss = [host["pss_bytes"] for host in hosts]
    gpu_totals: list[TreeGpuTotal] = []
    for gpu in gpus:
        processes_gpu = _processes_gpu_bytes(entries, gpu)
        used = None if gpu.kernel_bytes is None or processes_gpu is None else gpu.kernel_bytes + processes_gpu
        gpu_totals.append({"index": gpu.device, "used_bytes": used, "processes_used_bytes": processes_gpu})
    return {
        "host_bytes": None if kernel_rss is None else kernel_rss + processes_host,
        "processes_host_bytes": processes_host,
        "processes_pss_bytes": None if None in pss else sum(p or 0 for p in pss),
        "host_measure": "uss" if measures == {"uss"} else "rss" if measures == {"rss"} else "uss_and_rss",
        "gpus": gpu_totals,
    }


def tree_differs(before: Any, now: Any, threshold: int) -> bool:
    """Whether the tree moved enough for a sample: a process came or went, changed role, or a
    host or GPU figure (of a process or the totals) moved by more than ``threshold``."""
    if before is now:
        return False
    if before is None or now is None:
        return True
    old, new = before["processes"], now["processes"]
    if len(old) != len(new):
        return True
    for a, b in zip(old, new, strict=True):
        if a["pid"] != b["pid"] or a["start_time"] != b["start_time"] or a["role"] != b["role"]:
            return True
        if (
            _moved(a["host"]["host_bytes"], b["host"]["host_bytes"], threshold)
            or a["host"]["measure"] != b["host"]["measure"]
        ):
            return True
        if [(g["index"], g["used_bytes"] is None) for g in a["gpus"]] != [
            (g["index"], g["used_bytes"] is None) for g in b["gpus"]
        ]:
            return True
        if any(_moved(x["used_bytes"], y["used_bytes"], threshold) for x, y in zip(a["gpus"], b["gpus"], strict=True)):
            return True
    return False


def _moved(a: int | None, b: int | None, threshold: int) -> bool:
    if a is None or b is None:
        return a is not b
    return abs(a - b) > threshold
