"""The poller thread, which reads the clusters' telemetry every ``cluster_interval_s`` and sends it.

It starts at the first sampler tick that finds an engine imported (cluster_watch.py), finds the
clusters again at each reading (cluster_discovery.py), reads each with a deadline on a thread of
its own (deadline_call.py), and broadcasts a ClusterMessage to every comm after a reading that
changed something: membership, a status, a figure beyond the sampler's change threshold, or new
events; and once more, with no cluster, when the last one goes. It never raises and never
prints: a cluster that stops answering is a status in the message, not an error in a cell.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from .cell_cluster import CellClusters, ClusterReading
from .cluster_discovery import Found, find_clusters
from .cluster_events import ClusterEvents
from .cluster_state import ACTIONS, state_changed, totals
from .deadline_call import DeadlineCalls
from .local_figures import EMPTY, LocalFigures

THREAD_NAME = "jupyterlab-vram-cluster"
# A reading waits for the scheduler at most this long (and at least 1 s), within its interval.
MAX_READ_DEADLINE_S = 5.0


class ClusterPoller:
    """Reads the clusters the kernel drives at a bounded rate and broadcasts what changed."""

    def __init__(
        self,
        shell: Callable[[], Any],
        config: Callable[[], Any],
        broadcast: Callable[[Mapping[str, Any]], None],
        local: Callable[[], LocalFigures] = lambda: EMPTY,
        listeners: Callable[[], int] = lambda: 1,
        cells: CellClusters | None = None,
        modules: Mapping[str, Any] | None = None,
    ):
        self._shell = shell
        self._config = config
        self._broadcast = broadcast
        self._local = local
        # How many comms are open: a reading with none is skipped, and a new one gets the state.
        self._listeners = listeners
        self._sent_listeners = 0
        self.cells = cells if cells is not None else CellClusters()
        self.cells.request_reading = self.wake
        self.cells.event_ids = lambda first: [e["id"] for e in self.events.latest() if e["id"] >= first]
        self._modules = modules
        self.events = ClusterEvents()
        self.calls = DeadlineCalls()
        # The last state of each cluster by name: dicts of numbers and strings only.
        self.states: dict[str, dict[str, Any]] = {}
        self._sent: dict[str, dict[str, Any]] = {}
        # The allocator readings the user asked for, by (cluster, worker id), kept across readings.
        self._allocators: dict[tuple[str, str], dict[str, Any]] = {}
        self._sent_event = 0
        self._seq = 0
        self._last_read_started = time.time()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_error: str | None = None

    # -- thread -------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the poller's thread runs."""
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def start(self) -> None:
        """Start the thread (and catch the engine's memory log lines), unless it runs."""
        if self.running:
            return
        self.events.logs.install()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._stop,), name=THREAD_NAME, daemon=True)
        self._thread.start()

    def stop(self, final: bool = False, timeout: float = 2.0) -> None:
        """Stop the thread; with ``final`` (watching turned off), tell the comms that no cluster is watched."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self.events.logs.uninstall()
        self.cells.observe(None)
        if final and self._sent:
            with self._lock:
                self.states.clear()
                self._send_locked()

    def wake(self) -> None:
        """Read at once (a cell's record waits for the reading after it)."""
        self._wake.set()

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            self.read_once()
            interval = self._interval()
            self._wake.wait(max(0.0, interval - (time.monotonic() - started)))
            self._wake.clear()

    def _interval(self) -> float:
        try:
            return float(self._config().cluster_interval_s)
        except Exception:
            return 2.0

    # -- one reading --------------------------------------------------------

    def read_once(self) -> bool:
        """Read every cluster once and send a message if something changed; True when one was sent."""
        try:
            if not self._listeners() and not self.cells.latest:
                return False
            with self._lock:
                return self._read_locked()
        except Exception as exc:
            # The thread must never die, and must never print into a cell.
            self.last_error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return False

    def _read_locked(self) -> bool:
        started_perf = time.perf_counter()
        since, self._last_read_started = self._last_read_started, time.time()
        shell = self._shell()
        user_ns = getattr(shell, "user_ns", None)
        found = find_clusters(user_ns if isinstance(user_ns, dict) else None, self._modules)
        local = self._local()
        states: dict[str, dict[str, Any]] = {}
        for cluster in found:
            state = self._read_cluster(cluster, local, since)
            states.setdefault(state["name"], state)
            del cluster
        del found
        self.states = states
        self._observe_cells(started_perf)
        return self._send_if_changed()

    def _read_cluster(self, found: Found, local: LocalFigures, since: float) -> dict[str, Any]:
        """One cluster's state now: read anew, or its last figures with the reason they are old."""
        from .cluster_reading import read_dask, read_ray

        reader = read_dask if found.engine == "dask" else read_ray
        deadline = max(1.0, min(MAX_READ_DEADLINE_S, self._interval()))
        name, facts, workers, status, message, read_ms = reader(
            found.handle, local, self.calls, deadline, self._modules
        )
        previous = self.states.get(name)
        now = time.time()
        for worker in workers:
            worker["allocator"] = self._allocators.get((name, worker["id"]))
        if status == "ok":
            self.events.compare(found.engine, name, previous["workers"] if previous else None, workers, now, since)
            read_at: float | None = now
        else:
            workers = previous["workers"] if previous else []
            read_at = previous["read_at"] if previous else None
            read_ms = previous["read_ms"] if previous else None
        return {
            "engine": found.engine,
            "name": name,
            "found_by": found.found_by,
            "variable": found.variable[:256] if found.variable else None,
            "version": facts.get("version"),
            "dashboard": facts.get("dashboard") or (previous["dashboard"] if previous else None),
            "status": status,
            "message": message[:1000] if message else None,
            "read_at": read_at,
            "read_ms": read_ms,
            "interval_s": self._interval(),
            "workers": workers,
            "totals": totals(workers),
            "unseen": list(facts.get("unseen", ())),
            "actions": list(ACTIONS.get(found.engine, [])),
        }

    def _observe_cells(self, started_perf: float) -> None:
        """Hand the cells this reading's workers' memory, summed over the clusters."""
        states = [s for s in self.states.values() if s["status"] != "closed"]
        if not states:
            self.cells.observe(None)
            return
        memory = [s["totals"]["memory_bytes"] for s in states]
        events = self.events.latest()
        self.cells.spacing_s = self._interval()
        self.cells.observe(
            ClusterReading(
                started_perf,
                tuple(s["name"] for s in states),
                None if any(m is None for m in memory) else sum(m for m in memory if m is not None),
                sum(s["totals"]["workers"] for s in states),
                events[-1]["id"] if events else 0,
            )
        )

    # -- sending ------------------------------------------------------------

    def _send_if_changed(self) -> bool:
        threshold = self._threshold()
        events = self.events.latest()
        newest = events[-1]["id"] if events else 0
        listeners = self._listeners()
        joined, self._sent_listeners = listeners > self._sent_listeners, listeners
        changed = (
            joined
            or self.states.keys() != self._sent.keys()
            or newest != self._sent_event
            or any(state_changed(self._sent.get(name), state, threshold) for name, state in self.states.items())
        )
        if not changed:
            return False
        self._send_locked()
        return True

    def _send_locked(self) -> None:
        events = self.events.latest()
        self._seq += 1
        message = {
            "type": "cluster",
            "seq": self._seq,
            "time": time.time(),
            "clusters": list(self.states.values()),
            "events": events,
        }
        self._sent = dict(self.states)
        self._sent_event = events[-1]["id"] if events else 0
        self._broadcast(message)

    def _threshold(self) -> int:
        try:
            return int(self._config().change_threshold_bytes)
        except Exception:
            return 1 << 20

    def record_error(self, found: Any) -> tuple[dict[str, Any], bool]:
        """Record a cell's error that a worker raised or died of (cluster_errors.WorkerError) as an event.

        It returns the OomDiagnosis's ClusterOomWorker and whether the error is about memory (a
        KilledWorker is only where the worker it names was restarted for its memory). It runs
        in the cell's post_run_cell hook, so it never takes the poller's lock, which a reading
        may hold up to its deadline: it reads the last states as they are, and the poller
        sends the event at the reading it is woken for.
        """
        states = dict(self.states)
        cluster = next((s["name"] for s in states.values() if s["engine"] == found.engine), "")
        worker, pid = found.worker, found.pid
        if worker is None and pid is not None:
            state = states.get(cluster)
            named = [w["id"] for w in (state["workers"] if state else []) if w["pid"] == pid]
            worker = named[0] if named else None
        # The nanny's log line may have come after the last reading, before the error: it counts too.
        memory = (
            found.kind != "killed_worker"
            or (worker is not None and self.events.logs.restart_of(worker) is not None)
            or any(e["kind"] == "memory_restart" and e["worker"] == worker for e in self.events.latest())
        )
        head = found.message.strip().splitlines()[0] if found.message.strip() else found.type_name
        event = self.events.add(found.kind, found.engine, cluster, worker, pid, head, time.time())
        self.wake()
        origin = {
            "engine": found.engine,
            "cluster": cluster,
            "worker": worker,
            "pid": event["pid"],
            "kind": found.kind,
            "last": event["last"],
        }
        return origin, memory

    def set_allocator(self, name: str, worker_id: str, reading: dict[str, Any]) -> None:
        """Keep a worker's allocator reading (an action's) in its state, and send it."""
        with self._lock:
            self._allocators[(name, worker_id)] = reading
            state = self.states.get(name)
            if state is None:
                return
            # New dicts, so that the state last sent still holds the old reading to compare with.
            workers = [dict(w, allocator=reading) if w["id"] == worker_id else w for w in state["workers"]]
            self.states[name] = dict(state, workers=workers)
            self._send_if_changed()
