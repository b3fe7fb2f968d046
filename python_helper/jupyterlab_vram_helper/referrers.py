"""Describing what still holds an object after ``delete`` (cleanup.py's ``still_alive``).

A short, bounded phrase built from ``gc.get_referrers``: no promise of
completeness, and no reference to the object kept once it is built.
"""

from __future__ import annotations

import gc
import sys
import types
from typing import Any, List, Optional

from . import holders

MAX_REFERRER_KINDS = 3
# The cleanup's own frames hold the object while asking (it is passed in): not holders to name.
_OWN_MODULES = frozenset({__name__, __name__.rpartition(".")[0] + ".cleanup"})
# Nor are its own objects (the probe that keeps a deleted bytes object until it is checked).
_OWN_PACKAGE = __name__.rpartition(".")[0] + "."


def describe_referrers(obj: Any, shell: Any) -> str:
    """A short phrase naming who still refers to ``obj`` (bounded; no promise of completeness)."""
    user_ns = getattr(shell, "user_ns", None)
    kinds: List[str] = []
    me = sys._getframe()
    try:
        referrers = gc.get_referrers(obj)
    except Exception:
        referrers = []
    try:
        for ref in referrers[:50]:
            try:
                if ref is me or (type(ref) is types.FrameType and ref.f_globals.get("__name__") in _OWN_MODULES):
                    continue
                if (getattr(type(ref), "__module__", None) or "").startswith(_OWN_PACKAGE):
                    continue
                kind = _referrer_kind(ref, obj, user_ns)
            except Exception:  # a user object that raises even when looked at
                kind = "an object that could not be described"
            if kind and kind not in kinds:
                kinds.append(kind)
            if len(kinds) >= MAX_REFERRER_KINDS:
                break
    finally:
        del referrers, me
    if not kinds:
        return "still referenced from outside Python's object graph (a view of it, the autograd graph or a C extension)"
    return "still referenced by " + ", ".join(kinds)


def _referrer_kind(ref: Any, obj: Any, user_ns: Any) -> Optional[str]:
    # By type(), never isinstance(): isinstance reads a user object's own
    # ``__class__``, which can be anything, raising included (lazy proxies).
    kind = type(ref)
    if issubclass(kind, dict):
        keys = [k for k, v in list(ref.items())[:100_000] if v is obj][:3]
        shown = ", ".join(_key_text(k) for k in keys)
        if ref is user_ns:
            return f"the user namespace (as {shown})"
        owner = _dict_owner(ref)
        if owner is not None:
            return f"a dict (attribute {shown} of {owner})"
        return f"a dict (key {shown})" if shown else "a dict"
    if issubclass(kind, list):
        return "a list"
    if issubclass(kind, tuple):
        return "a tuple"
    if issubclass(kind, (set, frozenset)):
        return "a set"
    if kind is types.FrameType:
        return f"a frame ({ref.f_code.co_name})"
    if kind is types.CellType:
        return "a closure"
    attrs = holders._instance_dict(ref)  # 3.11+: an inline __dict__ is reported as its object
    if attrs is not None:
        keys = [k for k, v in list(attrs.items())[:10_000] if v is obj][:3]
        if keys:
            return f"the attribute {', '.join(str(k) for k in keys)} of {kind.__name__}"
    return f"a {kind.__name__}"


def _key_text(key: Any) -> str:
    """A dict key as text, without running user code (a user class's repr could print, or raise)."""
    kind = type(key)
    if kind is str:
        return key
    if kind in (int, float, bool, bytes) or key is None:
        return repr(key)
    return f"a {kind.__name__} key"


def _dict_owner(d: dict) -> Optional[str]:
    try:
        for ref in gc.get_referrers(d)[:20]:
            if issubclass(type(ref), types.ModuleType) and getattr(ref, "__dict__", None) is d:
                return f"module {ref.__name__}"
            if holders._instance_dict(ref) is d:
                return type(ref).__name__
    except Exception:
        pass
    return None
