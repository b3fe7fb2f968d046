"""A cell's error that a worker raised or died of is told apart from the kernel's own, and the
out-of-memory assistant diagnoses it from the worker's words, not the kernel's figures."""

from __future__ import annotations

from typing import Any

from jupyterlab_vram_helper.cluster.cluster_errors import worker_error
from jupyterlab_vram_helper.oom.oom_watch import OomWatch

CUDA_OOM = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
    "1.10 GiB is free. Process 4242 has 78.08 GiB memory in use."
)


def named(name: str, module: str, base: type = Exception) -> type:
    return type(name, (base,), {"__module__": module})


def raised_in(filename: str, exc: BaseException) -> BaseException:
    """``exc`` raised from code whose file is ``filename`` (as the engine's re-raise shows it)."""
    code = compile("raise exc", filename, "exec")
    try:
        exec(code, {"exc": exc})
    except BaseException as caught:
        return caught
    raise AssertionError("not raised")


def test_dask_killed_worker_names_the_last_worker() -> None:
    killed = named("KilledWorker", "distributed.scheduler")(
        "Attempted to run task 'grow-1' on 1 different workers, but all those workers died while running it. "
        "The last worker that attempt to run the task was tcp://127.0.0.1:37401."
    )
    found = worker_error(killed)
    assert found is not None and (found.engine, found.kind, found.worker) == (
        "dask",
        "killed_worker",
        "tcp://127.0.0.1:37401",
    )


def test_ray_s_memory_monitor_and_a_cuda_oom_in_a_ray_task_name_the_pid() -> None:
    oom = named("OutOfMemoryError", "ray.exceptions")(
        "Task was killed due to the node running low on memory.\nMemory on the node (IP: 10.0.0.2, ID: abc) where "
        "the task (task ID: x, name=f, pid=5151, memory used=1.2GB) was running was 7.5GB / 7.8GB"
    )
    found = worker_error(oom)
    assert found is not None and (found.engine, found.kind, found.pid) == ("ray", "oom_killed", 5151)
    task = named("RayTaskError(OutOfMemoryError)", "ray.exceptions")(f"ray::f() (pid=6161, ip=10.0.0.2)\n{CUDA_OOM}")
    found = worker_error(task)
    assert found is not None and (found.kind, found.pid) == ("cuda_oom", 6161)


def test_a_cuda_oom_is_the_worker_s_only_where_the_engine_re_raised_it() -> None:
    torch_oom = named("OutOfMemoryError", "torch")
    found = worker_error(raised_in("/site-packages/distributed/client.py", torch_oom(CUDA_OOM)))
    assert found is not None and (found.engine, found.kind, found.worker) == ("dask", "cuda_oom", None)
    assert worker_error(raised_in("/home/me/notebook.py", torch_oom(CUDA_OOM))) is None
    assert worker_error(ValueError("bad")) is None


def test_the_diagnosis_uses_the_message_s_figures_and_never_the_kernel_s() -> None:
    def no_kernel_reading() -> Any:
        raise AssertionError("the kernel's figures were read")

    watch = OomWatch(read_figures=no_kernel_reading, inspect=no_kernel_reading)
    origin: dict[str, Any] = {
        "engine": "dask",
        "cluster": "tcp://s:1",
        "worker": None,
        "pid": None,
        "kind": "cuda_oom",
        "last": None,
    }
    restart = {**origin, "kind": "killed_worker"}
    diagnosis = watch.diagnose_cluster("OutOfMemoryError", CUDA_OOM, origin)
    assert diagnosis["kind"] == "cuda" and diagnosis["requested_bytes"] == 2 << 30
    assert diagnosis["cluster_worker"] == origin and diagnosis["stale_holders"] == []
    diagnosis = watch.diagnose_cluster("KilledWorker", "all those workers died", restart)
    assert diagnosis["kind"] == "host" and diagnosis["total_bytes"] is None
