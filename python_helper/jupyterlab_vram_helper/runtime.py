"""The one helper instance of this process, and the functions that install and uninstall it.

``install()`` is idempotent: the bootstrap may run any number of times (at
each kernel restart, and for each frontend that attaches), and there is still
one comm target, one sampler thread and one set of IPython hooks.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Callable
from typing import Any

from .cells.after_cell import AfterCellReadings
from .cells.cell_accounting import CellMemoryRecorder
from .cells.cell_load import CellLoadTracker
from .cluster.cell_cluster import CellClusters
from .cluster.cluster_watch import ClusterWatch, engine_imported
from .comm.background_sender import BackgroundSender
from .comm.channel import Channel
from .sampling.sample import SampleSource
from .sampling.sampler import Sampler
from .thread_warnings import HelperThreadWarnings

# A cell hook is an (IPython event name, callback) pair that install()
# registers on the shell. They are per-cell accounting's `pre_run_cell` and
# `post_run_cell`, not pre_execute and post_execute, which also fire for comm
# messages. They catch every exception themselves, because IPython prints a
# failing hook into the user's cell output.
CellHook = tuple[str, Callable[..., None]]


def find_shell() -> Any:
    """Return the running IPython shell, or None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def find_comm_manager(shell: Any) -> Any:
    """The kernel's comm manager.

    ipykernel 6.18 and later route comms through the ``comm`` package, and set
    ``kernel.comm_manager`` to the same object. Older ipykernel has only its
    own ``kernel.comm_manager``, and ``comm.get_comm_manager()`` would return
    an unconnected default one there, so the kernel's attribute wins when both
    exist.
    """
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        raise RuntimeError("jupyterlab-vram: not running inside an IPython kernel (no get_ipython().kernel)")
    kernel_manager = getattr(kernel, "comm_manager", None)
    if kernel_manager is not None:
        return kernel_manager
    # ipykernel 6.18 and later depend on the comm package.
    import comm

    return comm.get_comm_manager()


class Runtime:
    """The helper of one kernel: its sampler, its comm channel and its IPython hooks."""

    def __init__(self, source: SampleSource | None = None, comm_manager: Any = None, shell: Any = None):
        self.source = source if source is not None else SampleSource()
        self.channel = Channel(self.source)
        self.sampler = Sampler(self.source, self.channel)
        self.cell_sender = BackgroundSender(self.channel.broadcast)
        self._comm_manager = comm_manager
        self._shell = shell
        self._cleanup: Any = None
        self._oom_watch: Any = None
        self._allocations: Any = None
        # The clusters the kernel drives: looked for at each sampler tick, read by a poller
        # that starts only once an engine is imported (cluster/cluster_watch.py).
        self.cluster_cells = CellClusters()
        self.cluster_watch = ClusterWatch(self._make_cluster_poller)
        self._last_figures: Any = None
        self.cells = CellMemoryRecorder(
            config=lambda: self.sampler.config,
            send=self.cell_sender.post,
            has_listeners=self.channel.has_targets,
            call_soon=self.cell_sender.call_soon,
            diagnose_oom=lambda type_name, message: self.oom_watch.diagnose(type_name, message),
            after_cell=AfterCellReadings(
                cell_load=CellLoadTracker(self.source.load),
                processes=self.source.processes if self.source.processes.available else None,
                processes_now=self.source.processes_now,
            ),
            clusters=self.cluster_cells,
            cluster_error=self._cluster_error,
        )
        self.sampler.add_observer(self.cells.observe)
        self.sampler.add_observer(self._watch_clusters)
        self.channel.bind(
            self.sampler,
            cell_history=self.cells.history,
            cleanup=lambda: self.cleanup,
            notebook_names=self.notebook_names,
            record_series=self.cells.series,
            allocations=lambda: self.allocations,
            before_request=self.cells.finish_records,
            stop_process=self.stop_process,
            release_engine=self.release_engine,
            estimate_memory=self.estimate_memory,
            cluster_action=self.cluster_action,
        )
        self._cell_hooks: list[CellHook] = self.cells.hooks()
        self._thread_warnings = HelperThreadWarnings()
        self.installed = False

    # Cleanup, the out-of-memory diagnosis and the notebook-names listing are
    # imported at their first use, not at install, because compiling their
    # modules took a third of the bootstrap's time in a fresh kernel
    # (benchmarks/bootstrap_cost.py), and many kernels never need them.

    @property
    def cleanup(self) -> Any:
        """The :class:`cleanup.Cleanup`, which answers free_memory, inspect and delete."""
        if self._cleanup is None:
            from .cleanup.cleanup import Cleanup

            self._cleanup = Cleanup(self.source, shell=lambda: self._shell, read_figures=self.sampler.read_figures)
        return self._cleanup

    @property
    def oom_watch(self) -> Any:
        """The :class:`oom_watch.OomWatch` that diagnoses a cell's out-of-memory error."""
        if self._oom_watch is None:
            from .oom.oom_watch import OomWatch

            self._oom_watch = OomWatch(
                read_figures=self.sampler.read_figures,
                inspect=lambda: self.cleanup.held_references(),
                allocation_sites=self._oom_allocation_sites,
                processes=self.source.processes.recently_seen,
                releases=self._oom_releases,
            )
        return self._oom_watch

    def _oom_releases(self, tree: Any) -> dict[int, Any]:
        """The releasable (kind, name) that holds each process of ``tree``, for the OOM diagnosis's remedies."""
        from .cleanup.releasables import find_releasables, tree_processes

        user_ns = getattr(self._shell, "user_ns", None)
        releases: dict[int, Any] = {}
        for found in find_releasables(user_ns if isinstance(user_ns, dict) else {}):
            for entry in tree_processes(found, tree):
                releases.setdefault(entry["pid"], {"kind": found.kind, "name": found.name})
        return releases

    def _oom_allocation_sites(self, device: str) -> dict[str, Any]:
        # Recording was never asked for, so there is nothing to load, and the UI offers to turn it on.
        if self._allocations is None:
            return {"recording": False, "sites": []}
        return self._allocations.top_sites(device)

    @property
    def allocations(self) -> Any:
        """The :class:`allocation_sites.AllocationSites`, which records allocations
        and lists live memory by line."""
        if self._allocations is None:
            from .allocations.allocation_sites import AllocationSites

            self._allocations = AllocationSites(
                shell=lambda: self._shell, broadcast=self.channel.broadcast, call_soon=self.cell_sender.call_soon
            )
        return self._allocations

    def notebook_names(self) -> dict[str, Any]:
        """The result of a ``notebook_names`` request: the names in the user
        namespace, and the runtime state."""
        from .cells.notebook_names import notebook_names as find_notebook_names

        shell = self._shell
        return find_notebook_names(getattr(shell, "user_ns", None), getattr(shell, "user_ns_hidden", None))  # type: ignore[return-value]

    def stop_process(self, pid: int, start_time: int, timeout_s: float) -> dict[str, Any]:
        """The result of a ``stop_process`` request (cleanup/stop_process.py, loaded at the first one)."""
        from .cleanup.stop_process import stop_memory
        from .cleanup.stop_process import stop_process as stop

        def snapshot() -> Any:
            return stop_memory(self.sampler.read_figures())

        return stop(self.source.processes, snapshot, pid, start_time, timeout_s)  # type: ignore[return-value]

    def release_engine(self, mode: str, kind: str | None, name: str | None, timeout_s: float) -> dict[str, Any]:
        """The result of a ``release_engine`` request (cleanup/release_engine.py, loaded at the first one)."""
        from .cleanup.release_engine import EngineRelease

        release = EngineRelease(shell=lambda: self._shell, read_figures=self.sampler.read_figures)
        return release.answer(mode, kind, name, timeout_s)  # type: ignore[return-value]

    def estimate_memory(self, args: Any, progress: Callable[..., None]) -> dict[str, Any]:
        """The result of an ``estimate_memory`` request (the estimate package, loaded at the first one)."""
        from .estimate.estimate_request import answer

        user_ns = getattr(self._shell, "user_ns", None)
        gpus = self.sampler.read_figures().get("gpus")
        return answer(user_ns if isinstance(user_ns, dict) else {}, args, progress, gpus)  # type: ignore[return-value]

    def _watch_clusters(self, figures: Any, started: float) -> None:
        """The sampler's observer: keep its reading for the clusters' local workers, and look for an engine."""
        self._last_figures = figures
        self.cluster_watch.tick(self.sampler.config.watch_cluster)

    def _make_cluster_poller(self) -> Any:
        """The cluster poller (cluster/cluster_poller.py, loaded at the first tick that finds an engine)."""
        from .cluster.cluster_poller import ClusterPoller
        from .cluster.local_figures import local_figures

        return ClusterPoller(
            shell=lambda: self._shell,
            config=lambda: self.sampler.config,
            broadcast=self.channel.broadcast,
            local=lambda: local_figures(self._last_figures),
            listeners=lambda: len(self.channel.targets()),
            cells=self.cluster_cells,
        )

    def _cluster_error(self, exc: BaseException) -> Any:
        """The diagnosis of a cell's error that a cluster worker raised or died of; None otherwise.

        It runs in post_run_cell after an error only, and looks no further than sys.modules
        unless an engine is imported.
        """
        if not engine_imported():
            return None
        from .cluster.cluster_errors import worker_error

        found = worker_error(exc)
        if found is None:
            return None
        poller = self.cluster_watch.poller
        if poller is None:
            # No cluster was ever read: nothing says the worker died of its memory.
            return None
        origin, memory = poller.record_error(found)
        if not memory:
            return None
        return self.oom_watch.diagnose_cluster(found.type_name, found.message, origin)

    def cluster_action(self, args: Any) -> dict[str, Any]:
        """The result of a ``cluster_action`` request (cluster/cluster_actions.py, loaded at the first one)."""
        from .cluster.cluster_actions import answer
        from .cluster.deadline_call import DeadlineCalls

        poller = self.cluster_watch.poller
        user_ns = getattr(self._shell, "user_ns", None)
        return answer(
            args,
            user_ns if isinstance(user_ns, dict) else None,
            poller.calls if poller is not None else DeadlineCalls(),
            poller.set_allocator if poller is not None else (lambda name, worker, reading: None),
        )

    def install(self) -> None:
        if self.installed:
            return
        shell = self._shell if self._shell is not None else find_shell()
        manager = self._comm_manager if self._comm_manager is not None else find_comm_manager(shell)
        # The shell is known before anything is registered, so that an interrupt part way
        # through (a KeyboardInterrupt landing between two hooks) can take back all that was
        # registered; otherwise the next delivery would add a second of each hook.
        self._shell = shell
        self.cells.shell = shell
        # The bootstrap runs as a cell of the kernel's event loop. The loop is
        # None where no loop runs it.
        self.cells.reply_loop = asyncio.events._get_running_loop()
        self.channel.register(manager)
        try:
            self._thread_warnings.install()
            self.sampler.start()
            self._register_cell_hooks(shell)
            atexit.register(self._at_exit)
            self.installed = True
        except BaseException:
            atexit.unregister(self._at_exit)
            self._unregister_cell_hooks()
            self.channel.unregister()
            self.sampler.stop()
            self._thread_warnings.uninstall()
            raise

    def uninstall(self) -> None:
        if not self.installed:
            return
        self.installed = False
        atexit.unregister(self._at_exit)
        self._unregister_cell_hooks()
        if self._allocations is not None:
            # Tracemalloc and the allocator history end with the helper.
            self._allocations.stop()
        self.sampler.stop()
        self.cluster_watch.stop()
        self.cell_sender.stop()
        self._thread_warnings.uninstall()
        self.channel.unregister()
        self.cells.close()
        self.source.host.close()
        self.source.load.forget()
        self.source.nvml.shutdown()

    def _at_exit(self) -> None:
        # At interpreter exit IOPub may already be gone, so this stops
        # sampling and releases NVML, but sends nothing.
        self.installed = False
        self.sampler.stop(timeout=0.5)
        self.source.nvml.shutdown()

    # -- IPython hooks (per-cell accounting) --------------------------------

    def _register_cell_hooks(self, shell: Any) -> None:
        events = getattr(shell, "events", None)
        if events is None:
            return
        for event, callback in self._cell_hooks:
            events.register(event, callback)

    def _unregister_cell_hooks(self) -> None:
        events = getattr(self._shell, "events", None)
        if events is None:
            return
        for event, callback in self._cell_hooks:
            try:
                events.unregister(event, callback)
            except ValueError:
                # The hook is already gone.
                pass


_lock = threading.Lock()
_runtime: Runtime | None = None


def install() -> Runtime:
    """Install the helper in this process once, and return the installed one."""
    global _runtime
    with _lock:
        if _runtime is None or not _runtime.installed:
            runtime = Runtime()
            runtime.install()
            _runtime = runtime
        return _runtime


def uninstall() -> None:
    """Uninstall the helper of this process, if one is installed."""
    global _runtime
    with _lock:
        runtime, _runtime = _runtime, None
    if runtime is not None:
        runtime.uninstall()


def current() -> Runtime | None:
    """Return the installed helper, or None when none is installed."""
    return _runtime
