"""Says what each process of the kernel's tree is: a DataLoader worker, a pool worker, a Ray worker, ...

Read once per process (pid and start time), from what costs least first:

1. The kernel's own multiprocessing registry (``multiprocessing.process._children``,
   looked up in ``sys.modules``, never imported): every ``Process`` the
   kernel started, whatever the start method (fork, spawn, forkserver), with
   its pid and name (Python drops a process's target once it started, so the
   name is what is left). A pool worker is named ``ForkPoolWorker-N``
   (Spawn…, ForkServer…); Dask's nanny names its worker ``Dask Worker process
   (from Nanny)``; vLLM's engine core ``EngineCore…``. Any other is an
   ``mp_process``. Certain.
2. Its name (the comm) and command line: torch names its DataLoader workers
   ``pt_data_worker`` (the comm, set as a worker starts); multiprocessing's
   own helpers (``multiprocessing.resource_tracker``,
   ``multiprocessing.forkserver``), a spawned child (``spawn_main``),
   process titles (Ray's ``ray::IDLE``, ``raylet``, ``gcs_server``, its agents'
   ``ray::DashboardAgent`` and ``ray::RuntimeEnvAgent``; vLLM's
   ``VLLM::EngineCore``, ``VLLM::Worker``), Ray's scripts (its dashboard, log
   monitor, autoscaler monitor), ``dask worker`` / ``dask-worker``.
   Certain for these names and titles; ``dask worker`` is taken for a
   nanny, which it runs unless told ``--no-nanny``: a guess.
3. Its environment's names (not values), only for a process that is no fork
   of the kernel: ``TORCHELASTIC_RUN_ID``, or ``RANK`` with ``LOCAL_RANK`` and
   ``WORLD_SIZE`` (torchrun's ranks). A guess: anyone may set them.
4. Its parent's role: a spawned child of a Dask nanny is its worker, a child
   of a raylet a Ray worker, a child of vLLM's engine its worker. A guess.

What none of these places is ``other``: ``subprocess`` commands, and forks the
registry does not list (``os.fork()``, a library's own). The ranks
``torch.multiprocessing.spawn`` starts are ``mp_process``: nothing cheap
tells them from another spawned ``Process`` (their target is gone once they
started).
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from .proc_files import read_environ_names


class Role(NamedTuple):
    """A process's role, what it was read from, and whether that is a guess."""

    role: str
    basis: str | None
    guess: bool


OTHER = Role("other", None, False)

# Process names multiprocessing.Pool gives its workers (one per start method).
_POOL_WORKER_NAMES = ("ForkPoolWorker-", "SpawnPoolWorker-", "ForkServerPoolWorker-")
_DASK_WORKER_NAME = "Dask Worker process (from Nanny)"
_DISTRIBUTED_ENVIRONMENT = frozenset({"TORCHELASTIC_RUN_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE"})
# The titles Ray's per-node agents give themselves (ray_constants.AGENT_PROCESS_TYPE_*): children
# of the raylet like its workers, but node processes, never a task's or an actor's. The comm
# keeps their first 15 bytes.
_RAY_AGENT_TITLES = frozenset({"ray::DashboardAgent", "ray::RuntimeEnvAgent"})
_RAY_AGENT_COMMS = frozenset(title[:15] for title in _RAY_AGENT_TITLES)


def registry_roles() -> dict[int, Role]:
    """Roles of the processes the kernel's multiprocessing started, by pid (none without multiprocessing).

    Reads the ``Process`` objects' instance attributes only (no property, no
    method: nothing of the user's runs) and keeps none of them.
    """
    process_module = sys.modules.get("multiprocessing.process")
    children = getattr(process_module, "_children", None)
    if not children:
        return {}
    roles: dict[int, Role] = {}
    try:
        processes = tuple(children)  # one C call: another thread may add to the set
    except RuntimeError:
        return {}
    for process in processes:
        fields = getattr(process, "__dict__", None)
        if type(fields) is not dict:
            continue
        pid = getattr(fields.get("_popen"), "pid", None)
        if type(pid) is int:
            roles[pid] = _registered_role(fields.get("_name"))
    return roles


def _registered_role(name: Any) -> Role:
    if isinstance(name, str):
        if name.startswith(_POOL_WORKER_NAMES):
            return Role("mp_pool_worker", "multiprocessing", False)
        if name == _DASK_WORKER_NAME:
            return Role("dask_worker", "multiprocessing", False)
        if name.startswith("EngineCore"):
            return Role("vllm_engine", "multiprocessing", False)
    return Role("mp_process", "multiprocessing", False)


def command_role(name: str, argv: list[str]) -> Role | None:
    """The role the process's name or command line says, if any."""
    first = argv[0] if argv else ""
    line = " ".join(argv[:8])
    if name == "pt_data_worker":
        return Role("dataloader_worker", "name", False)
    if name == "raylet" or first.endswith("/raylet"):
        return Role("raylet", "cmdline", False)
    if first.rstrip() in _RAY_AGENT_TITLES or name in _RAY_AGENT_COMMS:
        return Role("ray_node", "cmdline", False)
    if first.startswith("ray::") or name.startswith("ray::") or "ray/_private/workers/" in line:
        return Role("ray_worker", "cmdline", False)
    if name == "gcs_server" or first.endswith("/gcs_server") or first.startswith("ray-dashboard-"):
        return Role("ray_node", "cmdline", False)
    if "ray/dashboard" in line or "ray/_private" in line or "ray/autoscaler/" in line:
        return Role("ray_node", "cmdline", False)
    if first.startswith("VLLM::") or name.startswith("VLLM::"):
        return Role("vllm_engine", "cmdline", False)
    if "multiprocessing.resource_tracker" in line or "multiprocessing.forkserver" in line:
        return Role("mp_helper", "cmdline", False)
    if "dask worker" in line or "dask-worker" in line or "dask_worker" in line:
        if "--no-nanny" in argv:
            return Role("dask_worker", "cmdline", False)
        return Role("dask_nanny", "cmdline", True)
    if "multiprocessing.spawn" in line or "--multiprocessing-fork" in argv:
        return Role("mp_process", "cmdline", False)
    return None


def environment_role(root: str, pid: int) -> Role | None:
    """torchrun's ranks, by the names of the variables they started with."""
    names = read_environ_names(root, pid, _DISTRIBUTED_ENVIRONMENT)
    if "TORCHELASTIC_RUN_ID" in names or {"RANK", "LOCAL_RANK", "WORLD_SIZE"} <= names:
        return Role("torch_distributed_rank", "environment", True)
    return None


# A child's role, where its parent's says what it must be.
_CHILD_OF = {"dask_nanny": "dask_worker", "raylet": "ray_worker", "vllm_engine": "vllm_engine"}


def parent_role(parent: Role | None) -> Role | None:
    """The role a child of a process of role ``parent`` has, if its parent tells."""
    child = _CHILD_OF.get(parent.role) if parent is not None else None
    return Role(child, "parent", True) if child is not None else None


def recognise(
    root: str,
    pid: int,
    name: str,
    argv: list[str],
    kernel_argv: list[str] | None,
    registry: dict[int, Role],
    parent: Role | None,
) -> Role:
    """The role of one process (see the module docstring for the order)."""
    registered = registry.get(pid)
    command = command_role(name, argv)
    if registered is not None:
        # A registry entry says mp_process for any Process; a title it set since says more.
        if registered.role == "mp_process" and command is not None and command.role != "mp_process":
            return command
        if registered.role == "mp_process":
            return parent_role(parent) or registered
        return registered
    if command is not None and command.role != "mp_process":
        return command
    inherited = parent_role(parent)
    if inherited is not None:
        return inherited
    if command is not None:
        return command
    if argv != kernel_argv:
        # Not a fork of the kernel: it may be a torchrun rank.
        return environment_role(root, pid) or OTHER
    return OTHER
