"""Namespace surgery for ``delete`` (cleanup.py): removing a name and the copies
IPython keeps of its object, and clearing the hidden holders.

It works like IPython's ``del_var`` and ``%reset -f out``, but by identity and
without touching the user's other names. Names are treated as data; nothing is
compiled or executed. Finding what the hidden holders hold is left to
hidden_references.py.
"""

from __future__ import annotations

import functools
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ..oom import error_frames
from .hidden_references import (
    OUTPUT_NAME,
    UNDERS,
    is_cache_name,
    last_exceptions,
    output_history,
    tracebacks_of,
    users_cache_names,
)
from .holders import Classes, Found, Sizer

# How many frames of one traceback are cleared, and their locals snapshots emptied; a deep
# recursion stops here, so that clearing stays quick.
MAX_FRAMES_SYNCED = 10_000
# The code flags CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE and CO_ASYNC_GENERATOR,
# with the values that the inspect module gives them.
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200


class NameRebound(Exception):
    """The name no longer holds the object that was checked: nothing was deleted."""


_UNCHECKED = object()


def detach(shell: Any, user_ns: dict[str, Any], name: str, expected: Any = _UNCHECKED) -> list[Probe]:
    """Delete ``name`` and its hidden copies, and return probes that tell whether its memory died.

    The probes are weakrefs, or KeptUntilChecked objects that release_probes
    lets go of.

    As with IPython's ``shell.del_var(name)``, copies of the object in the
    output cache (Out/_oh, _, __, ___, _N), in ``user_ns_hidden`` and in the
    last execution result go too. Unlike it, other *user* names bound to the
    same object (``b = a``) stay, because the user chose ``a`` only; the reply
    says that ``b`` still holds it.

    ``expected`` is the object that was checked and confirmed. The name is
    taken out in one step (``pop``) and put back at once, untouched, if it held
    another object by then because code on another thread rebound it; that
    raises :class:`NameRebound`.
    """
    obj = user_ns.pop(name, _UNCHECKED)
    if obj is _UNCHECKED:
        raise NameRebound(name)  # The name was deleted in the meantime.
    if expected is not _UNCHECKED and obj is not expected:
        # This is not the object that was confirmed, so the name is put back as it was.
        user_ns.setdefault(name, obj)
        raise NameRebound(name)
    probes = _probes(obj)
    # A _ or _5 that the user bound to the object is another of the user's names, so it stays.
    users = users_cache_names(shell)
    # list() makes one copy under the GIL, so that a user thread that binds a global in the
    # meantime cannot make the loop fail.
    for key in [
        k for k, v in list(user_ns.items()) if v is obj and isinstance(k, str) and is_cache_name(k) and k not in users
    ]:
        del user_ns[key]
    # IPython's own copies (in the output history and user_ns_hidden) go, whatever their
    # key. In the namespaces of code the user ran (a %run script's module, a separate global
    # namespace) only ``name`` itself goes, because another name there is the user's, which
    # a function of that script may still use.
    for ns, ipython_copies in _other_namespaces(shell, user_ns):
        if ipython_copies:
            for key in [k for k, v in list(ns.items()) if v is obj]:
                del ns[key]
        elif ns.get(name) is obj:
            del ns[name]
    displayhook = getattr(shell, "displayhook", None)
    for attr in UNDERS:
        try:
            if getattr(displayhook, attr, None) is obj:
                setattr(displayhook, attr, None)
        except Exception:
            pass
    last = getattr(shell, "last_execution_result", None)
    if last is not None and getattr(last, "result", None) is obj:
        _replace_last_result(shell, keep_result=False, keep_error=True)
    del obj
    return probes


def _other_namespaces(shell: Any, user_ns: dict[str, Any]) -> list[tuple[dict[Any, Any], bool]]:
    """Return the namespaces besides ``user_ns`` where IPython's ``del_var`` looks.

    Each comes with whether it holds IPython's own copies (True) or the user's
    names (False).
    """
    out: list[tuple[dict[Any, Any], bool]] = []

    def add(ns: Any, ipython_copies: bool) -> None:
        if type(ns) is dict and ns is not user_ns and not any(ns is o for o, _ in out):
            out.append((ns, ipython_copies))

    add(getattr(shell, "user_ns_hidden", None), True)
    add(output_history(shell), True)
    add(getattr(shell, "user_global_ns", None), False)
    try:
        for module in list(getattr(shell, "_main_mod_cache", {}).values()):
            add(getattr(module, "__dict__", None), False)
    except Exception:
        pass
    return out


def _probes(obj: Any) -> list[Probe]:
    ref = weak_ref(obj)
    classes = Classes()
    if ref is not None and classes.kind(obj) != "module":
        return [ref]
    # For lists, dicts and tuples, which take no weakref, the probes watch what they hold
    # instead. For a module they watch the module itself, and its parameters and buffers,
    # because an optimizer keeps those alive without the module.
    found = Found()
    found.probes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Sizer(classes).walk(obj, found, 5, objects=True)
    leaves = found.probes
    found.probes = None
    if ref is not None:
        return [ref] + [Part(r) for r in (weak_ref(leaf) for leaf in leaves if leaf is not obj) if r is not None]
    # Bytes and bytearrays, and containers that hold only those, take no weakref, so they
    # are kept until the check.
    probes: list[Probe] = [weak_ref(leaf) or KeptUntilChecked(leaf) for leaf in leaves]
    return probes or [KeptUntilChecked(obj)]


class Part:
    """A probe of part of a deleted object, such as a module's parameter or buffer.

    When the part is still alive, part of the memory stayed, held by something else.
    """

    __slots__ = ("_ref",)

    def __init__(self, ref: weakref.ref) -> None:
        self._ref = ref

    def __call__(self) -> Any:
        return self._ref()


class KeptUntilChecked:
    """A probe for an object that takes no weakref, such as bytes or a bytearray.

    It keeps the object until ``delete`` has checked it, and calls it alive when
    anything else still refers to it. ``release()`` lets it go; ``delete`` calls
    it before it reads the memory figures after the delete.

    The object's reference count tells whether anything else refers to it. It
    is compared with the count of an object that only a probe holds, measured
    by the same expression, so that the interpreter's way of counting the
    call's own references cancels out.
    """

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __call__(self) -> Any:
        return self._obj if self._obj is not None and self._references() > _alone() else None

    def _references(self) -> int:
        return sys.getrefcount(self._obj)

    def release(self) -> None:
        self._obj = None


@functools.cache
def _alone() -> int:
    """Return the reference count of an object that only a probe holds."""
    return KeptUntilChecked(object())._references()


# A probe is a weakref or a KeptUntilChecked. When called, each gives the object while the
# object is alive elsewhere.
Probe = Callable[[], Any]


def release_probes(probes: dict[str, list[Probe]]) -> None:
    """Let go of what the KeptUntilChecked probes of ``delete`` kept."""
    for refs in probes.values():
        for ref in refs:
            if type(ref) is KeptUntilChecked:
                ref.release()


def leaf_refs(found: Found) -> list[weakref.ref]:
    """Return weakrefs to the leaves that a walk collected in ``found.probes``, and let the leaves go."""
    refs = [r for r in (weak_ref(o) for o in found.probes or ()) if r is not None]
    found.probes = None
    return refs


def weak_ref(obj: Any) -> weakref.ref | None:
    """Return a weak reference to an object, or None when its type does not support one."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return None


def _replace_last_result(shell: Any, keep_result: bool, keep_error: bool) -> None:
    """Swap in a fresh ExecutionResult; None would break IPython's own del_var."""
    last = getattr(shell, "last_execution_result", None)
    if last is None:
        return
    try:
        fresh = type(last)(getattr(last, "info", None))
        fresh.execution_count = getattr(last, "execution_count", None)
        if keep_result:
            fresh.result = last.result
        if keep_error:
            fresh.error_before_exec = last.error_before_exec
            fresh.error_in_exec = last.error_in_exec
        shell.last_execution_result = fresh
    except Exception:
        try:
            last.result = last.result if keep_result else None
            if not keep_error:
                last.error_in_exec = None
                last.error_before_exec = None
        except Exception:
            pass


def clear_output_cache(shell: Any) -> None:
    """Do what ``%reset -f out`` does, and also clear the copies of _, __, ___ that IPython leaves in user_ns_hidden.

    A ``_``, ``__``, ``___`` or ``_N`` that the user bound (``_ = gettext``,
    ``_5 = x``) is the user's, not the cache's; IPython leaves such unders alone
    when it shows a result. ``flush()``, however, resets the user's unders to ''
    along with IPython's, and deletes ``_1`` up to the last prompt's, so the
    user's are put back afterwards.
    """
    # Without a displayhook, flush() fails below, as it should.
    displayhook: Any = getattr(shell, "displayhook", None)
    user_ns = getattr(shell, "user_ns", {})
    hidden = getattr(shell, "user_ns_hidden", {})
    users = users_cache_names(shell)
    try:
        displayhook.flush()
    except Exception:
        oh = output_history(shell)
        if oh is not None:
            oh.clear()
        for attr in UNDERS:
            try:
                setattr(displayhook, attr, "")
            except Exception:
                pass
            if attr in user_ns and attr not in users:
                user_ns[attr] = ""  # This is what flush() does.
    for attr, value in users.items():
        user_ns[attr] = value
    for key in [k for k in list(user_ns) if isinstance(k, str) and OUTPUT_NAME.match(k) and k not in users]:
        del user_ns[key]
    for key in [k for k in list(hidden) if isinstance(k, str) and is_cache_name(k)]:
        if key in UNDERS:
            # flush() reset IPython's visible unders to ''. The hidden copies are set equal to
            # those, and to '' next to the user's own, so that IPython can still tell its own
            # _ from a user's assignment: the copy equals its own and differs from the user's.
            hidden[key] = getattr(displayhook, key, "") if key in users else user_ns.get(key, "")
        else:
            del hidden[key]


def clear_last_traceback(shell: Any) -> None:
    """Free the frames of the last error; %debug no longer works for that error afterwards."""
    excs = last_exceptions(shell)
    for tb in tracebacks_of(excs, shell):
        _clear_frames(tb)
    for attr in ("last_type", "last_value", "last_traceback", "last_exc"):
        # The attributes are removed rather than set to None, because IPython's %debug asks
        # hasattr(sys, "last_traceback") and then reads its frames, which would fail on None.
        try:
            delattr(sys, attr)
        except AttributeError:
            pass
    for e in excs:
        try:
            e.__traceback__ = None
        except Exception:
            pass
    del excs
    _replace_last_result(shell, keep_result=True, keep_error=False)
    itb = getattr(shell, "InteractiveTB", None)
    if itb is not None and hasattr(itb, "tb"):
        try:
            del itb.tb
        except Exception:
            pass
    if hasattr(shell, "_last_traceback"):
        try:
            shell._last_traceback = None  # This is ipykernel's formatted copy, which is text only.
        except Exception:
            pass


def _clear_frames(tb: Any) -> None:
    """Do what ``traceback.clear_frames`` does, but leave generators' and coroutines' frames alone.

    It also lets the locals that clearing dropped go for good.

    Generators are left alone because the error chain can hold the frame of a
    generator that the user still drives (a worker that stored an error it
    caught and re-raised ``from`` it later). On Python 3.12 and before,
    ``frame.clear()`` on a suspended generator's frame finalises the generator.
    Their locals therefore stay, and the user's generator works on.

    On Python 3.10 to 3.12, reading a function frame's ``f_locals`` (as
    debuggers and IPython's verbose tracebacks do) leaves a snapshot dict on
    the frame that ``frame.clear()`` does not touch. While anything still holds
    the frame (a traceback the user kept), the snapshot keeps the locals alive.
    So the snapshot is taken before the frame is cleared, and emptied after it
    where only the frame holds it; it is a cache, which its next reader fills
    again. Where anyone else holds it, it is left as it is, because it is the
    dict that ``locals()`` gave the user (``saved.append(locals())``), whose
    contents are the user's; re-reading ``f_locals`` after the clearing would
    have emptied it. This is done for function frames only, because a
    module-level frame's ``f_locals`` is its globals, the notebook's namespace.
    From Python 3.13 on, ``f_locals`` is a view of the frame rather than a copy.
    """
    n = 0
    while isinstance(tb, types.TracebackType) and n < MAX_FRAMES_SYNCED:
        frame = tb.tb_frame
        snapshot = None
        try:
            if not frame.f_code.co_flags & _GENERATOR_FLAGS:
                if error_frames.leaves_snapshot(frame):
                    snapshot = frame.f_locals
                frame.clear()
                if snapshot is not None and error_frames.only_the_frame_holds(snapshot):
                    snapshot.clear()
        except Exception:
            # A frame that is still executing, on another thread, raises RuntimeError; the
            # frame and its snapshot stay.
            pass
        del snapshot
        tb = tb.tb_next
        n += 1


def clear_last_execution_result(shell: Any) -> None:
    """Drop the result and the error of the last execution that IPython keeps."""
    _replace_last_result(shell, keep_result=False, keep_error=False)


CLEARERS: dict[str, Callable[[Any], None]] = {
    "output_cache": clear_output_cache,
    "last_traceback": clear_last_traceback,
    "last_execution_result": clear_last_execution_result,
}
