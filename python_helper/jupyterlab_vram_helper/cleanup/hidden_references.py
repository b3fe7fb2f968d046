"""The hidden holders of the ``inspect`` listing (cleanup.py), and what each one is.

IPython keeps references the user never named: the output cache (Out, _oh,
_, __, ___ and _N where the user did not bind them, and their copies in
user_ns_hidden) and the last error (its exception chain and traceback frames).
This module finds the objects they hold and describes a holder for the listing;
clearing them is namespace_surgery.py's. Reads only: nothing here changes the
namespace, keeps a user object or runs the user's code (an exception's own
``__str__`` included).
"""

from __future__ import annotations

import builtins
import re
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from ..oom import error_frames
from . import holder_summaries
from .holders import Found, Sizer
from .storages import Storages, bytes_by_device

OUTPUT_NAME = re.compile(r"_\d+\Z")
UNDERS = ("_", "__", "___")
_ABSENT = object()


def is_cache_name(name: str) -> bool:
    """Tell whether a name is one of IPython's output cache names (``_``, ``__``, ``___`` or ``_N``)."""
    return name in UNDERS or bool(OUTPUT_NAME.match(name))


def users_cache_names(shell: Any) -> dict[str, Any]:
    """The ``_``, ``__``, ``___`` and ``_N`` of ``user_ns`` that the user bound
    (``_ = gettext``, ``_5 = x``), not IPython: names of the user's, which
    neither a delete nor clearing the output cache may remove.

    As IPython's ``DisplayHook.update_user_ns`` tells the unders apart (and
    then leaves them alone): a value is IPython's when it is the copy that
    IPython put in ``user_ns_hidden`` next to it, or, without one there, the
    displayhook's own ``_``/``__``/``___``. IPython pushes each ``_N`` of its
    own into ``user_ns_hidden`` too: one that is not that copy is the user's
    (with output caching off, ``cache_size = 0``, every one is).
    """
    user_ns = getattr(shell, "user_ns", None) or {}
    hidden = getattr(shell, "user_ns_hidden", None) or {}
    displayhook = getattr(shell, "displayhook", None)
    out: dict[str, Any] = {}
    for name in UNDERS:
        value = user_ns.get(name, _ABSENT)
        if value is _ABSENT:
            continue
        ipythons = hidden[name] if name in hidden else getattr(displayhook, name, _ABSENT)
        if ipythons is not value:
            out[name] = value
    for name, value in list(user_ns.items()):
        if isinstance(name, str) and OUTPUT_NAME.match(name) and hidden.get(name, _ABSENT) is not value:
            out[name] = value
    return out


def output_history(shell: Any) -> dict[Any, Any] | None:
    """Return IPython's output cache dictionary, or None when the shell has none."""
    oh = getattr(getattr(shell, "history_manager", None), "output_hist", None)
    if isinstance(oh, dict):
        return oh
    oh = getattr(shell, "user_ns", {}).get("_oh")
    return oh if isinstance(oh, dict) else None


def output_cache_objects(shell: Any) -> list[Any]:
    """Return every object the output cache holds, each once."""
    out: list[Any] = []
    ids = set()

    def add(obj: Any) -> None:
        if obj is not None and id(obj) not in ids:
            ids.add(id(obj))
            out.append(obj)

    oh = output_history(shell) or {}
    for value in list(oh.values()):
        add(value)
    displayhook = getattr(shell, "displayhook", None)
    for attr in UNDERS:
        add(getattr(displayhook, attr, None))
    users = users_cache_names(shell)
    for ns in (getattr(shell, "user_ns", None) or {}, getattr(shell, "user_ns_hidden", None) or {}):
        for key, value in list(ns.items()):
            if isinstance(key, str) and is_cache_name(key) and not (key in users and users[key] is value):
                add(value)
    return out


def output_cache_labels(shell: Any) -> dict[int, list[str]]:
    """id(object) -> its names in the output cache: "Out[3]", "_3", "_", ..."""
    labels: dict[int, list[str]] = {}

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
    users = users_cache_names(shell)
    for ns in (getattr(shell, "user_ns", None) or {}, getattr(shell, "user_ns_hidden", None) or {}):
        for key, value in list(ns.items()):
            if isinstance(key, str) and OUTPUT_NAME.match(key) and not (key in users and users[key] is value):
                add(value, key)
    displayhook = getattr(shell, "displayhook", None)
    user_ns = getattr(shell, "user_ns", None) or {}
    for attr in UNDERS:
        value = getattr(displayhook, attr, None)
        if value is None and attr not in users:
            value = user_ns.get(attr)
        add(value, attr)
    return labels


def last_exceptions(shell: Any) -> list[BaseException]:
    """The last error and its chain: sys.last_exc/last_value and the last execution result's."""
    out: list[BaseException] = []
    last = getattr(shell, "last_execution_result", None)
    for exc in (getattr(sys, "last_exc", None), getattr(sys, "last_value", None), getattr(last, "error_in_exec", None)):
        for e in error_frames.exception_chain(exc):
            if not any(e is o for o in out):
                out.append(e)
    return out


def tracebacks_of(excs: list[BaseException], shell: Any) -> list[Any]:
    """Return each traceback that keeps the last error's frames alive, each once."""
    tbs = [getattr(sys, "last_traceback", None)]
    tbs.extend(getattr(e, "__traceback__", None) for e in excs)
    tbs.append(getattr(getattr(shell, "InteractiveTB", None), "tb", None))
    out: list[Any] = []
    for tb in tbs:
        if isinstance(tb, types.TracebackType) and not any(tb is o for o in out):
            out.append(tb)
    return out


# What an exception's message may be made of for its text to be read: values whose
# str() and repr() are Python's own C code (exact types: a subclass's may be the user's).
_PLAIN_TYPES = (str, int, float, bool, bytes, type(None))
_MAX_PLAIN_ITEMS = 16
TITLE_CHARS = 80

# The built-in exceptions whose __str__ (C) is called, each with the fields it reads
# (CPython's Objects/exceptions.c; AttributeError's and NameError's are BaseException's).
# Others' (a library's C, anything in Python) are not called.
_BUILTIN_STR_FIELDS: tuple[tuple[type, tuple[str, ...]], ...] = (
    (BaseException, ("args",)),
    (KeyError, ("args",)),
    (AttributeError, ("args",)),
    (NameError, ("args",)),
    (OSError, ("errno", "strerror", "filename", "filename2", "args")),
    (ImportError, ("msg", "args")),
    (SyntaxError, ("msg", "filename", "lineno")),
    (UnicodeEncodeError, ("encoding", "object", "reason")),
    (UnicodeDecodeError, ("encoding", "object", "reason")),
    (UnicodeTranslateError, ("object", "reason")),
) + tuple((group, ("message",)) for group in [getattr(builtins, "BaseExceptionGroup", None)] if group is not None)


def error_title(exc: BaseException) -> str:
    """``RuntimeError: boom``: the class name and the first line of the message, as
    ``str(exc)`` gives it, without running the user's code.

    ``str(exc)`` calls the class's ``__str__``, which a user's exception class
    may override (it could print into the notebook, raise, or take its time),
    and ``BaseException.__str__`` calls ``str()`` of each argument. The message
    is read only where the ``__str__`` is a built-in exception's
    (:data:`_BUILTIN_STR_FIELDS`) and what it reads is plain data: then it is
    ``str(exc)``'s text (torch's out-of-memory errors, RuntimeError, KeyError,
    OSError, ...). Otherwise the class name alone (NumPy's allocation error,
    whose ``__str__`` is Python code, included).
    """
    name = type.__getattribute__(type(exc), "__name__")  # type's own lookup: not a metaclass's
    try:
        text = _builtin_message(exc)
    except Exception:
        text = ""
    text = text.strip()
    text = text.splitlines()[0] if text else ""
    if len(text) > TITLE_CHARS:
        text = text[: TITLE_CHARS - 1] + "…"
    return f"{name}: {text}" if text else name


def _builtin_message(exc: BaseException) -> str:
    method: Any = None
    owner: Any = None
    # type's own lookups: a metaclass's __getattribute__ is user code
    for owner in type.__getattribute__(type(exc), "__mro__"):
        namespace = type.__getattribute__(owner, "__dict__")
        if "__str__" in namespace:
            method = namespace["__str__"]
            break
    if type(method) is not types.WrapperDescriptorType:
        return ""  # a __str__ written in Python
    fields = next((f for cls, f in _BUILTIN_STR_FIELDS if cls is owner), None)
    if fields is None:
        return ""
    # The C fields themselves (the built-in class's descriptors): not a property the user's class may define.
    if not all(_plain(getattr(owner, field).__get__(exc)) for field in fields):
        return ""
    text = method(exc)
    return text if type(text) is str else ""


def _plain(value: Any, depth: int = 0) -> bool:
    kind = type(value)
    if any(kind is t for t in _PLAIN_TYPES):
        return True
    return (
        kind is tuple
        and depth < 2
        and len(value) <= _MAX_PLAIN_ITEMS
        and all(_plain(item, depth + 1) for item in value)
    )


TRACEBACK_WARNING = "Clearing the traceback disables %debug for that error"
OUTPUT_CACHE_WARNING = "Clearing empties Out, _, __, ___ and every _N"

_HOLDER_TEXT = {
    "output_cache": "the output cache",
    "last_traceback": "the traceback of the last error",
    "last_execution_result": "the result of the last cell",
}


def hidden_holders(
    shell: Any,
    sizer: Sizer,
    depth: int,
    named: set,
    labels: dict[int, list[str]],
    held: Storages,
    summary: Callable[[Any, str, Found], str],
) -> list[dict[str, Any]]:
    """The hidden holders' entries (the listing's ``hidden``).

    ``named``: the storages the listed names hold; ``labels``: the output
    cache's labels (:func:`output_cache_labels`), already read by the caller;
    ``held``: every storage found so far, to which the holders' are added;
    ``summary``: an object's summary, as its listing entry says it.

    User objects are opened (their attributes walked) as for a name: a
    pipeline object echoed into ``Out[N]`` or a batch object left in a failed
    function's locals holds its tensors there; library objects stay closed
    (``Classes`` skips them).
    """
    walked: list[tuple[str, str, Found, str, str | None]] = []  # (holder, label, found, summary, warning)
    # output cache
    objects = output_cache_objects(shell)
    found = Found()
    seen: set = set()
    holding: list[str] = []
    for obj in objects:
        before = len(found.storages)
        sizer.walk(obj, found, depth, seen, objects=True)
        if len(found.storages) > before:
            holding.extend(labels.get(id(obj), [])[:1])
    del objects
    walked.append(
        (
            "output_cache",
            "Output cache (Out, _, __, ___, _N)",
            found,
            (
                f"{holder_summaries.plural(len(holding), 'output')} holding memory: {', '.join(holding[:8])}"
                + (", …" if len(holding) > 8 else "")
            ),
            OUTPUT_CACHE_WARNING,
        )
    )
    # last traceback
    excs = last_exceptions(shell)
    found = Found()
    held_by: list[str] = []
    title = error_title(excs[0]) if excs else ""
    seen = set()
    for frame in error_frames.traceback_frames(tracebacks_of(excs, shell)):
        if not error_frames.is_user_function_frame(frame):
            continue
        for local_name, value in error_frames.frame_locals(frame):
            before = sum(found.storages.values())
            sizer.walk(value, found, depth, seen, objects=True)
            if sum(found.storages.values()) > before and len(held_by) < 8:
                held_by.append(f"{frame.f_code.co_name}(): {local_name}")
            del value
        del frame
    del excs
    walked.append(
        (
            "last_traceback",
            f"Traceback of the last error ({title})" if title else "Traceback of the last error",
            found,
            "frame locals: " + ", ".join(held_by) if held_by else "no frame locals hold memory",
            TRACEBACK_WARNING,
        )
    )
    # last execution result
    found = Found()
    last = getattr(shell, "last_execution_result", None)
    result = getattr(last, "result", None)
    count = getattr(last, "execution_count", None)
    if result is not None:
        sizer.walk(result, found, depth, objects=True)
        text = summary(result, sizer.classes.kind(result), found)
    else:
        text = "no result"
    del result, last
    walked.append(
        (
            "last_execution_result",
            f"Result of the last cell (In[{count}])" if isinstance(count, int) else "Result of the last cell",
            found,
            text,
            None,
        )
    )
    out = []
    for holder, label, found, text, warning in walked:
        held.update(found.storages)
        others = [(h, f.storages) for h, _l, f, _t, _w in walked if h != holder]
        out.append(hidden_entry(holder, label, found, named, text, warning, others))
    return out


def hidden_entry(
    holder: str,
    label: str,
    found: Found,
    named: set,
    summary: str,
    warning: str | None,
    others: Sequence[tuple[str, Storages]] = (),
) -> dict[str, Any]:
    """``others``: the other hidden holders and their storages. What one of them
    holds too stays alive when only this one is cleared: ``held_also_by`` says
    so (what a listed name holds too is ``named_bytes_by_device``'s, not counted
    again there)."""
    by_device = bytes_by_device(found.storages)
    total = sum(by_device.values())
    shared = [k for k in found.storages if k in named]
    also = sum(found.storages[k] for k in shared)
    if also:
        summary += f" ({_size(also)} of it also held by named variables)"
    held_also_by = []
    for other, storages in others:
        keys = [k for k in found.storages if k in storages and k not in named]
        if keys:
            held_also_by.append({"holder": other, "bytes_by_device": bytes_by_device(found.storages, keys)})
            both = sum(found.storages[k] for k in keys)
            summary += f" ({_size(both)} of it also held by {_HOLDER_TEXT.get(other, other)})"
    return {
        "holder": holder,
        "label": label,
        "bytes_by_device": by_device,
        "total_bytes": total,
        # What a listed name holds too: clearing this holder alone leaves it alive.
        "named_bytes_by_device": bytes_by_device(found.storages, shared),
        "held_also_by": held_also_by,
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
