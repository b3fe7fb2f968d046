"""How each engine is released: the steps a ``release_engine`` request runs, kind by kind.

Each engine documents its own way to give its processes and memory back,
and only that way is used: ``ray.shutdown()``; a Dask client's ``close()``
and its cluster's; a pool's ``terminate()`` and ``join()``; a DataLoader
iterator's ``_shutdown_workers()`` (what its ``__del__`` calls, in
torch/utils/data/dataloader.py) and the reference let go; for vLLM the
engine shut down, its name deleted, ``gc.collect()``, vLLM's
``destroy_model_parallel()`` and ``destroy_distributed_environment()`` and
``torch.cuda.empty_cache()`` (what vLLM's maintainers give for freeing an
``LLM`` in the same process).

Every step is caught: what raised is recorded as that step's error, and the
steps after it still run, so that the reply says what was done. Nothing is
imported that the kernel has not loaded, except vLLM's own
``vllm.distributed.parallel_state`` once ``vllm`` is loaded.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import types
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..sampling.processes.proc_files import read_stat
from .releasables import KIND_DASK, KIND_DATALOADER, KIND_POOL, KIND_RAY, KIND_VLLM, iterator_of

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import ReleaseStep


class Steps:
    """The steps of one release, as they ran."""

    def __init__(self) -> None:
        self.done: list[ReleaseStep] = []

    def run(self, action: str, call: Callable[[], Any]) -> bool:
        """Run ``call``, recorded as ``action``; True when it did not raise."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()
        except Exception as exc:
            from .cleanup import error_text

            self.done.append({"action": action, "ok": False, "error": error_text(exc)})
            return False
        self.done.append({"action": action, "ok": True, "error": None})
        return True


def release(kind: str, name: str, objects: list[Any], context: ReleaseContext, timeout_s: float) -> list[ReleaseStep]:
    """Run the steps of ``kind`` on ``objects`` (what :func:`releasables.locate` found) and
    say how each went. ``objects`` is emptied: no reference outlives the request."""
    steps = Steps()
    try:
        RELEASERS[kind](name, objects, context, steps, timeout_s)
    finally:
        objects.clear()
    return steps.done


class ReleaseContext:
    """What the steps need of the kernel: its namespace and shell, and the processes to end."""

    def __init__(self, shell: Any, user_ns: dict[str, Any], processes: list[dict[str, Any]], root: str = "/proc"):
        self.shell = shell
        self.user_ns = user_ns
        self.processes = processes
        self.root = root

    def delete_name(self, steps: Steps, name: str, expected: Any) -> None:
        """Delete ``name`` from the namespace (and IPython's copies) if it still holds ``expected``."""
        from .namespace_surgery import NameRebound, detach, release_probes

        def delete() -> None:
            try:
                release_probes({name: detach(self.shell, self.user_ns, name, expected=expected)})
            except NameRebound:
                raise RuntimeError(f"{name} holds another object now: it was left as it is") from None

        steps.run(f"del {name}", delete)

    def kill_remaining(self, steps: Steps) -> None:
        """SIGKILL the released processes still alive (same pid and start time): what the user confirmed."""
        alive = [p for p in self.processes if _alive(self.root, p)]
        if not alive:
            return

        def kill() -> None:
            for process in alive:
                if _alive(self.root, process):
                    os.kill(process["pid"], signal.SIGKILL)

        steps.run("SIGKILL " + ", ".join(str(p["pid"]) for p in alive), kill)


def _alive(root: str, process: dict[str, Any]) -> bool:
    stat = read_stat(root, process["pid"])
    return stat is not None and stat.start_time == process["start_time"] and stat.state not in ("Z", "X", "x")


def _in_thread(call: Callable[[], Any], timeout_s: float) -> Callable[[], None]:
    """``call`` run on a thread of its own, given up on after ``timeout_s`` (a join that may hang)."""

    def bounded() -> None:
        failure: list[BaseException] = []

        def target() -> None:
            try:
                call()
            except BaseException as exc:  # handed to the waiting thread, which records it
                failure.append(exc)

        thread = threading.Thread(target=target, name="jupyterlab-vram-release", daemon=True)
        thread.start()
        thread.join(timeout_s)
        if thread.is_alive():
            raise TimeoutError(f"it did not end within {timeout_s:g} s")
        if failure:
            raise failure[0]

    return bounded


def _release_pool(name: str, objects: list[Any], context: ReleaseContext, steps: Steps, timeout_s: float) -> None:
    pool = objects[0]
    # terminate() signals the workers and joins them; a worker that ignores SIGTERM would make
    # that join wait forever, so it runs on a thread of its own and SIGKILL follows the timeout.
    ended = steps.run(f"{name}.terminate(); {name}.join()", _in_thread(_terminator(pool), timeout_s))
    del pool
    if not ended:
        context.kill_remaining(steps)


def _release_iterator(name: str, objects: list[Any], context: ReleaseContext, steps: Steps, timeout_s: float) -> None:
    holder = objects[0]
    iterator = iterator_of(holder)
    if iterator is not None:
        # torch's own shutdown: it ends the pin-memory thread, tells the workers to exit, joins
        # them (5 s each at most) and terminates those that did not.
        steps.run(
            f"{name}._shutdown_workers()" if iterator is holder else "iterator._shutdown_workers()",
            iterator._shutdown_workers,
        )
    del iterator
    if isinstance(holder, types.GeneratorType):
        steps.run(f"{name}.close()", holder.close)
    elif name.endswith("._iterator"):
        steps.run(f"{name} = None", _iterator_clearer(holder))
    else:
        context.delete_name(steps, name, holder)
    del holder
    objects.clear()
    steps.run("gc.collect()", gc.collect)
    context.kill_remaining(steps)


def _terminator(pool: Any) -> Callable[[], None]:
    """A pool's ``terminate()`` then ``join()``: the workers signalled, then waited for."""

    def terminate() -> None:
        pool.terminate()
        pool.join()

    return terminate


def _iterator_clearer(loader: Any) -> Callable[[], None]:
    """Let go of a DataLoader's persistent iterator: the next epoch makes a new one."""
    return lambda: setattr(loader, "_iterator", None)


def _release_dask(name: str, objects: list[Any], context: ReleaseContext, steps: Steps, timeout_s: float) -> None:
    cluster_class = getattr(sys.modules.get("distributed.deploy.cluster"), "Cluster", None)
    for obj in objects:
        is_cluster = cluster_class is not None and isinstance(obj, cluster_class)
        what = "cluster" if is_cluster else "client"
        status = getattr(obj, "status", None)
        if str(getattr(status, "name", status)) in ("closed", "closing"):
            continue  # closing the client closed the cluster it started
        steps.run(f"{what}.close(timeout={timeout_s:g})", _closer(obj, timeout_s))
    obj = None


def _closer(obj: Any, timeout_s: float) -> Callable[[], Any]:
    """A Dask client's or cluster's ``close``, bounded by ``timeout_s``."""
    return lambda: obj.close(timeout=timeout_s)


def _release_ray(name: str, objects: list[Any], context: ReleaseContext, steps: Steps, timeout_s: float) -> None:
    ray = objects[0]
    steps.run("ray.shutdown()", ray.shutdown)


def _release_vllm(name: str, objects: list[Any], context: ReleaseContext, steps: Steps, timeout_s: float) -> None:
    engine = objects[0]
    inner = getattr(engine, "llm_engine", engine)
    shutdown = getattr(inner, "shutdown", None)
    if callable(shutdown):
        # vLLM's engine shuts its engine-core process down (V1); older engines have no shutdown.
        steps.run(f"{name}.llm_engine.shutdown()" if inner is not engine else f"{name}.shutdown()", shutdown)
    del inner, shutdown
    context.delete_name(steps, name, engine)
    del engine
    objects.clear()
    steps.run("gc.collect()", gc.collect)
    state = _vllm_parallel_state()
    if state is not None:
        for function in ("destroy_model_parallel", "destroy_distributed_environment"):
            call = getattr(state, function, None)
            if callable(call):
                steps.run(f"{function}()", call)
    _destroy_process_group(steps)
    steps.run("gc.collect()", gc.collect)
    _empty_cache(steps)


def _vllm_parallel_state() -> Any:
    if "vllm" not in sys.modules:
        return None
    try:
        return sys.modules.get("vllm.distributed.parallel_state") or importlib.import_module(
            "vllm.distributed.parallel_state"
        )
    except Exception:
        return None


def _destroy_process_group(steps: Steps) -> None:
    dist = sys.modules.get("torch.distributed")
    available = getattr(dist, "is_available", None)
    initialized = getattr(dist, "is_initialized", None)
    if callable(available) and available() and callable(initialized) and initialized():
        steps.run("torch.distributed.destroy_process_group()", dist.destroy_process_group)  # type: ignore[union-attr]


def _empty_cache(steps: Steps) -> None:
    from .cleanup import empty_cuda_cache

    failures: list[dict[str, Any]] = []
    outcome = empty_cuda_cache(failures)
    if outcome.startswith("skipped"):
        return
    steps.done.append(
        {"action": "torch.cuda.empty_cache()", "ok": not failures, "error": outcome if failures else None}
    )


RELEASERS: dict[str, Callable[[str, list[Any], ReleaseContext, Steps, float], None]] = {
    KIND_POOL: _release_pool,
    KIND_DATALOADER: _release_iterator,
    KIND_DASK: _release_dask,
    KIND_RAY: _release_ray,
    KIND_VLLM: _release_vllm,
}
