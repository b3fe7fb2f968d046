"""Describes what still holds an object after a ``delete``, for the ``still_alive`` part of its reply (cleanup.py).

The description is a short, bounded phrase built from ``gc.get_referrers``. It
does not promise to be complete, and no reference to the object is kept once
it is built.
"""

from __future__ import annotations

import gc
import sys
import time
import types
from typing import Any

from ..sampling.safe_reads import type_module, type_name
from . import holders

MAX_REFERRER_KINDS = 3
# How many referrers are looked at per object, and in the pass that names the owners of dicts.
REFERRERS_PER_OBJECT = 50
OWNER_REFERRERS = 10_000
# Naming a dict's owner takes a second pass over the heap. It is skipped when the first pass
# already took this long (with millions of objects), so that a delete never holds the kernel
# for long.
OWNER_BUDGET_S = 1.0
# The cleanup's own frames hold the object while asking about it, because it is passed in,
# so they are not holders to name.
_OWN_MODULES = frozenset(
    {__name__, __name__.rpartition(".")[0] + ".cleanup", __name__.rpartition(".")[0] + ".listings"}
)
# Nor are the helper's own objects, such as the probe that keeps a deleted bytes object until
# it is checked. The prefix covers the whole helper, not only this subpackage.
_OWN_PACKAGE = __name__.partition(".")[0] + "."
# ModuleType's own __dict__ descriptor is used, because a module subclass may define properties.
_MODULE_DICT = vars(types.ModuleType)["__dict__"]


def describe_referrers_many(objs: list[Any], shell: Any, limit: int | None = None) -> list[str]:
    """Return a short phrase naming who still refers to each of the first ``limit`` of ``objs``.

    The phrases are bounded and do not promise to be complete, and the list
    itself is not named as a holder. They come from one ``gc.get_referrers``
    pass over the heap for all of the objects, because each pass visits every
    object that the collector tracks and can take seconds in a large session.
    At most one more pass names the owners of the dicts among the referrers.
    """
    user_ns = getattr(shell, "user_ns", None)
    start = time.perf_counter()
    me = sys._getframe()
    # An exact tuple is passed on as the call's arguments without being copied, so it can be
    # recognised among the referrers.
    asked = tuple(objs[:limit])
    targets = {id(o): i for i, o in enumerate(asked)}
    per: list[list[Any]] = [[] for _ in asked]
    dicts: list[Any] = []
    try:
        try:
            referrers = gc.get_referrers(*asked)
        except Exception:
            referrers = []
        for ref in referrers:
            try:
                if ref is objs or ref is asked or ref is me or ref is per or _own(ref):
                    continue
                hits = {targets[id(x)] for x in gc.get_referents(ref) if id(x) in targets}
            except Exception:  # A user object may raise even when it is only looked at.
                continue
            for i in hits:
                if len(per[i]) < REFERRERS_PER_OBJECT:
                    per[i].append(ref)
        del referrers
        seen_dicts = set()
        for refs in per:
            for ref in refs:
                if issubclass(type(ref), dict) and ref is not user_ns and id(ref) not in seen_dicts:
                    seen_dicts.add(id(ref))
                    dicts.append(ref)
        owners = _dict_owners(dicts) if dicts and time.perf_counter() - start < OWNER_BUDGET_S else {}
        out = []
        for i, obj in enumerate(asked):
            kinds: list[str] = []
            for ref in per[i]:
                try:
                    kind = _referrer_kind(ref, obj, user_ns, owners)
                except Exception:  # A user object may raise even when it is only looked at.
                    kind = "an object that could not be described"
                if kind and kind not in kinds:
                    kinds.append(kind)
                if len(kinds) >= MAX_REFERRER_KINDS:
                    break
            if not kinds:
                out.append(
                    "still referenced from outside Python's object graph (a view of it, the autograd graph or a C "
                    "extension)"
                )
            else:
                out.append("still referenced by " + ", ".join(kinds))
        return out
    finally:
        del per, dicts, me, asked


def _own(ref: Any) -> bool:
    """Tell whether ``ref`` is one of the cleanup's own frames or objects, which hold what they ask about."""
    if type(ref) is types.FrameType and ref.f_globals.get("__name__") in _OWN_MODULES:
        return True
    module = type_module(type(ref))
    return isinstance(module, str) and module.startswith(_OWN_PACKAGE)


def _referrer_kind(ref: Any, obj: Any, user_ns: Any, owners: dict[int, str]) -> str | None:
    # The kind is found by type(), never isinstance(), because isinstance reads a user
    # object's own ``__class__``, which can be anything and can even raise (lazy proxies).
    kind = type(ref)
    if issubclass(kind, dict):
        # dict's own items() is used, because a subclass's items() is user code.
        keys = [k for k, v in list(dict.items(ref))[:100_000] if v is obj][:3]
        shown = ", ".join(_key_text(k) for k in keys)
        if ref is user_ns:
            return f"the user namespace (as {shown})"
        owner = owners.get(id(ref))
        if owner is not None:
            return f"a dict (attribute {shown} of {owner})"
        keys_shown = ", ".join(repr(k) if type(k) is str else _key_text(k) for k in keys)
        return f"a dict (key {keys_shown})" if keys_shown else "a dict"
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
    # On Python 3.11 and later, an inline __dict__ is reported as its object.
    attrs = holders._instance_dict(ref)
    if attrs is not None:
        keys = [k for k, v in list(attrs.items())[:10_000] if v is obj][:3]
        if keys:
            return f"the attribute {', '.join(str(k) for k in keys)} of {type_name(kind)}"
    return f"a {type_name(kind)}"


def _key_text(key: Any) -> str:
    """Return a dict key as text without running user code, because a user class's repr could print or raise."""
    kind = type(key)
    if kind is str:
        return key  # A string key is a name, as in "as b" or "attribute w".
    # The types are compared by identity, so that a metaclass's __eq__ never runs.
    if kind is int or kind is float or kind is bool or kind is bytes or key is None:
        return repr(key)
    return f"a {type_name(kind)}"


def _dict_owners(dicts: list[dict]) -> dict[int, str]:
    """Map the id of each dict to "module m" or to the class name of the object whose ``__dict__`` it is.

    One bounded ``gc.get_referrers`` pass finds the owners of all of them.
    """
    wanted = {id(d) for d in dicts}
    out: dict[int, str] = {}
    try:
        referrers = gc.get_referrers(*dicts)
    except Exception:
        return out
    try:
        for ref in referrers[:OWNER_REFERRERS]:
            try:
                if ref is dicts:
                    continue
                if issubclass(type(ref), types.ModuleType):
                    # ModuleType's own descriptor is used, so that a module subclass's properties
                    # never run.
                    d = _MODULE_DICT.__get__(ref)
                    owner = f"module {d.get('__name__')}"
                else:
                    d = holders._instance_dict(ref)
                    owner = type_name(type(ref))
                if d is not None and id(d) in wanted and id(d) not in out:
                    out[id(d)] = owner
            except Exception:
                continue
    finally:
        del referrers
    return out
