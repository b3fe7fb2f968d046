"""The hidden holders of the ``inspect`` listing: what each one is (cleanup.py).

IPython keeps references the user never named: the output cache (Out, _oh,
_, __, ___, _N, and their copies in user_ns_hidden) and the last error (its
exception chain and traceback frames). This module finds the objects they hold
and describes a holder for the listing; clearing them is namespace_surgery.py's.
Reads only: nothing here changes the namespace or keeps a user object.
"""

from __future__ import annotations

import re
import sys
import types
from typing import Any, Dict, List, Optional

from . import holders
from .holders import Found
from .storages import bytes_by_device

OUTPUT_NAME = re.compile(r"_\d+\Z")


def is_cache_name(name: str) -> bool:
    return name in ("_", "__", "___") or bool(OUTPUT_NAME.match(name))


def output_history(shell: Any) -> Optional[Dict[Any, Any]]:
    oh = getattr(getattr(shell, "history_manager", None), "output_hist", None)
    if isinstance(oh, dict):
        return oh
    oh = getattr(shell, "user_ns", {}).get("_oh")
    return oh if isinstance(oh, dict) else None


def output_cache_objects(shell: Any) -> List[Any]:
    out: List[Any] = []
    ids = set()

    def add(obj: Any) -> None:
        if obj is not None and id(obj) not in ids:
            ids.add(id(obj))
            out.append(obj)

    oh = output_history(shell) or {}
    for value in list(oh.values()):
        add(value)
    displayhook = getattr(shell, "displayhook", None)
    for attr in ("_", "__", "___"):
        add(getattr(displayhook, attr, None))
    for ns in (getattr(shell, "user_ns", None) or {}, getattr(shell, "user_ns_hidden", None) or {}):
        for key, value in list(ns.items()):
            if isinstance(key, str) and is_cache_name(key):
                add(value)
    return out


def output_cache_labels(shell: Any) -> Dict[int, List[str]]:
    """id(object) -> its names in the output cache: "Out[3]", "_3", "_", ..."""
    labels: Dict[int, List[str]] = {}

    def add(obj: Any, label: str) -> None:
        # type(), not isinstance(): isinstance reads the object's own __class__, which may raise.
        if obj is None or issubclass(type(obj), (str, int, float, bool)):
            return
        names = labels.setdefault(id(obj), [])
        if label not in names:
            names.append(label)

    oh = output_history(shell) or {}
    for key, value in sorted(oh.items(), key=lambda kv: kv[0] if isinstance(kv[0], int) else -1):
        add(value, f"Out[{key}]")
    for ns in (getattr(shell, "user_ns", None) or {}, getattr(shell, "user_ns_hidden", None) or {}):
        for key, value in list(ns.items()):
            if isinstance(key, str) and OUTPUT_NAME.match(key):
                add(value, key)
    displayhook = getattr(shell, "displayhook", None)
    user_ns = getattr(shell, "user_ns", None) or {}
    for attr in ("_", "__", "___"):
        value = getattr(displayhook, attr, None)
        if value is None:
            value = user_ns.get(attr)
        add(value, attr)
    return labels


def last_exceptions(shell: Any) -> List[BaseException]:
    """The last error and its chain: sys.last_exc/last_value and the last execution result's."""
    out: List[BaseException] = []
    last = getattr(shell, "last_execution_result", None)
    for exc in (getattr(sys, "last_exc", None), getattr(sys, "last_value", None),
                getattr(last, "error_in_exec", None)):
        for e in holders.exception_chain(exc):
            if not any(e is o for o in out):
                out.append(e)
    return out


def tracebacks_of(excs: List[BaseException], shell: Any) -> List[Any]:
    tbs = [getattr(sys, "last_traceback", None)]
    tbs.extend(getattr(e, "__traceback__", None) for e in excs)
    tbs.append(getattr(getattr(shell, "InteractiveTB", None), "tb", None))
    out: List[Any] = []
    for tb in tbs:
        if isinstance(tb, types.TracebackType) and not any(tb is o for o in out):
            out.append(tb)
    return out


def hidden_entry(holder: str, label: str, found: Found, named: set, summary: str, warning: Optional[str]) -> Dict[str, Any]:
    by_device = bytes_by_device(found.storages)
    total = sum(by_device.values())
    shared = [k for k in found.storages if k in named]
    also = sum(found.storages[k] for k in shared)
    if also:
        summary += f" ({_size(also)} of it also held by named variables)"
    return {
        "holder": holder,
        "label": label,
        "bytes_by_device": by_device,
        "total_bytes": total,
        # What a listed name holds too: clearing this holder alone leaves it alive.
        "named_bytes_by_device": bytes_by_device(found.storages, shared),
        "summary": summary,
        "warning": warning,
    }


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
