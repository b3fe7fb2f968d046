"""Finds the clusters the kernel drives: Dask clients the user made, and a Ray runtime it initialised.

Found, not imposed: only modules the user already imported are looked at (``sys.modules``),
nothing is imported or started, and the engines' objects are found again at every reading
rather than kept, so that the helper never keeps a client, or what it holds, alive.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, NamedTuple

# A namespace this large is scanned only up to this many names per reading, so that a
# notebook with a huge namespace does not make every reading dear.
MAX_NAMESPACE_NAMES = 5000


class Found(NamedTuple):
    """One cluster found at one reading; ``handle`` is the client or the ray module, dropped after the reading."""

    engine: str
    found_by: str
    variable: str | None
    handle: Any


def find_clusters(user_ns: Mapping[str, Any] | None, modules: Mapping[str, Any] | None = None) -> list[Found]:
    """The Dask clients and the Ray runtime in use now, each once, in a stable order."""
    modules = sys.modules if modules is None else modules
    found = _dask_clients(user_ns, modules)
    ray = _ray_runtime(modules)
    if ray is not None:
        found.append(ray)
    return found


def _dask_clients(user_ns: Mapping[str, Any] | None, modules: Mapping[str, Any]) -> list[Found]:
    """The clients in the user's namespace first (their names are what the user knows), then the default."""
    client_module = modules.get("distributed.client")
    client_class = getattr(client_module, "Client", None)
    if not isinstance(client_class, type):
        return []
    found: list[Found] = []
    seen: set[int] = set()
    for name, value in _namespace_items(user_ns):
        if isinstance(value, client_class) and id(value) not in seen and not name.startswith("_"):
            seen.add(id(value))
            found.append(Found("dask", "namespace", name, value))
    default = _default_client(client_module)
    if default is not None and id(default) not in seen:
        found.append(Found("dask", "default_client", None, default))
    return found


def _namespace_items(user_ns: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """The namespace's (name, value) pairs, copied at once: the user's thread may change it meanwhile."""
    if not isinstance(user_ns, dict):
        return []
    try:
        items = list(user_ns.items())
    except RuntimeError:
        # The dict changed size while it was copied; the next reading looks again.
        return []
    return [(name, value) for name, value in items[:MAX_NAMESPACE_NAMES] if isinstance(name, str)]


def _default_client(client_module: Any) -> Any:
    """Dask's default client, as distributed keeps it, without making or importing anything."""
    getter = getattr(client_module, "_get_global_client", None)
    if getter is None:
        return None
    try:
        return getter()
    except Exception:
        return None


def _ray_runtime(modules: Mapping[str, Any]) -> Found | None:
    """The ray module where the user imported it and initialised it in this process."""
    ray = modules.get("ray")
    is_initialized = getattr(ray, "is_initialized", None)
    if is_initialized is None:
        return None
    try:
        initialized = bool(is_initialized())
    except Exception:
        return None
    return Found("ray", "initialized", None, ray) if initialized else None
