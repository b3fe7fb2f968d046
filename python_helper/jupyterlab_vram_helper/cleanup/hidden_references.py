"""The hidden holders of the ``inspect`` listing (cleanup.py), and what each one is.

IPython keeps references the user never named: the output cache (Out, _oh,
_, __, ___ and _N where the user did not bind them, and their copies in
user_ns_hidden) and the last error (its exception chain and traceback frames).
This module finds the objects they hold and describes a holder for the listing;
namespace_surgery.py clears them. This module only reads: nothing here changes
the namespace, keeps a user object or runs the user's code, an exception's own
``__str__`` included.
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
    """Return the ``_``, ``__``, ``___`` and ``_N`` of ``user_ns`` that the user bound rather than IPython.

    Examples are ``_ = gettext`` and ``_5 = x``. These are the user's names,
    which neither a delete nor clearing the output cache may remove.

    They are told apart as IPython's ``DisplayHook.update_user_ns`` tells them
    apart (it then leaves the user's alone). A value is IPython's when it is the
    copy that IPython put in ``user_ns_hidden`` next to it, or, when there is no
    copy there, when it is the displayhook's own ``_``, ``__`` or ``___``.
    IPython pushes each ``_N`` of its own into ``user_ns_hidden`` too, so one that
    is not that copy is the user's. With output caching off (``cache_size = 0``),
    every one of them is the user's.
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
    """Map the id of each object in the output cache to its names there, such as "Out[3]", "_3" and "_"."""
    labels: dict[int, list[str]] = {}

    def add(obj: Any, label: str) -> None:
        # type() is used rather than isinstance(), because isinstance reads the object's own
        # __class__, which may raise.
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
    """Return the last error and its chain, from sys.last_exc, sys.last_value and the last execution result."""
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


# An exception's message is read only when it is made of these values, whose str() and
# repr() are Python's own C code. The types must match exactly, because a subclass's
# methods may be the user's code.
_PLAIN_TYPES = (str, int, float, bool, bytes, type(None))
_MAX_PLAIN_ITEMS = 16
TITLE_CHARS = 80

# The built-in exceptions whose __str__, written in C, may be called, each with the fields
# that it reads (see CPython's Objects/exceptions.c; AttributeError and NameError use
# BaseException's). The __str__ of any other class, whether a library's C or Python code,
# is not called.
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
    """Return the class name and the first line of the message, such as ``RuntimeError: boom``.

    The message is the one that ``str(exc)`` gives, read without running the
    user's code.

    ``str(exc)`` calls the class's ``__str__``, which a user's exception class
    may override (it could print into the notebook, raise, or take its time),
    and ``BaseException.__str__`` calls ``str()`` of each argument. The message
    is read only where the ``__str__`` is a built-in exception's
    (:data:`_BUILTIN_STR_FIELDS`) and what it reads is plain data: then it is
    ``str(exc)``'s text (torch's out-of-memory errors, RuntimeError, KeyError,
    OSError, and so on). Otherwise the title is the class name alone, as for
    NumPy's allocation error, whose ``__str__`` is Python code.
    """
    # The type's own lookup is used, so that a metaclass's cannot run.
    name = type.__getattribute__(type(exc), "__name__")
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
    # The type's own lookups are used, because a metaclass's __getattribute__ is user code.
    for owner in type.__getattribute__(type(exc), "__mro__"):
        namespace = type.__getattribute__(owner, "__dict__")
        if "__str__" in namespace:
            method = namespace["__str__"]
            break
    if type(method) is not types.WrapperDescriptorType:
        return ""  # This __str__ is written in Python, so it is not called.
    fields = next((f for cls, f in _BUILTIN_STR_FIELDS if cls is owner), None)
    if fields is None:
        return ""
    # The C fields themselves are read through the built-in class's descriptors, so that
    # no property that the user's class may define runs.
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
    """Return the hidden holders' entries, which are the listing's ``hidden``.

    ``named`` holds the storages that the listed names hold. ``labels`` are the
    output cache's labels (:func:`output_cache_labels`), which the caller has
    already read. ``held`` holds every storage found so far, and the holders'
    storages are added to it. ``summary`` gives an object's summary as its
    listing entry says it.

    User objects are opened, that is, their attributes are walked, as for a
    name, because a pipeline object echoed into ``Out[N]`` or a batch object
    left in a failed function's locals holds its tensors there. Library
    objects stay closed, because ``Classes`` skips them.
    """
    # Each item is (holder, label, found, summary, warning).
    walked: list[tuple[str, str, Found, str, str | None]] = []
    # The output cache.
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
    # The last traceback.
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
    # The last execution result.
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
    """Return the listing entry of one hidden holder.

    ``others`` are the other hidden holders and their storages. What one of
    them also holds stays alive when only this holder is cleared, and
    ``held_also_by`` says so. What a listed name also holds is reported in
    ``named_bytes_by_device`` instead and is not counted again in
    ``held_also_by``.
    """
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
        # What a listed name also holds stays alive when only this holder is cleared.
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
