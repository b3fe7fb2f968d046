"""The frames an error keeps alive, and their locals: what the ``last_traceback``
hidden holder holds (hidden_references.py).

A traceback keeps every frame it passes through, and each frame its locals
(a failed training step's batch, activations, the model's outputs). These
walk them bounded, and read a frame's locals without keeping them alive.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Iterable
from typing import Any

# Bounds of one walk.
FRAMES_PER_TRACEBACK = 100
CHAINED_EXCEPTIONS = 5
LOCALS_PER_FRAME = 200

CO_OPTIMIZED = 0x0001
_INTERNAL_FRAME_PREFIXES = ("IPython", "ipykernel", "jupyterlab_vram_helper", "asyncio", "tornado", "traitlets")


def exception_chain(exc: Any) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during (bounded, no cycles)."""
    out: list[BaseException] = []
    todo = [exc]
    while todo and len(out) < CHAINED_EXCEPTIONS:
        e = todo.pop(0)
        if not isinstance(e, BaseException) or any(e is x for x in out):
            continue
        out.append(e)
        todo.extend([e.__cause__, e.__context__])
    return out


def traceback_frames(tbs: Iterable[Any]) -> list[Any]:
    """The distinct frames of these tracebacks (bounded)."""
    frames: list[Any] = []
    ids = set()
    for tb in tbs:
        n = 0
        while isinstance(tb, types.TracebackType) and n < FRAMES_PER_TRACEBACK:
            frame = tb.tb_frame
            if id(frame) not in ids:
                ids.add(id(frame))
                frames.append(frame)
            tb = tb.tb_next
            n += 1
    return frames


def is_user_function_frame(frame: Any) -> bool:
    """A function's frame outside IPython/ipykernel/us (module-level frames are the namespace itself)."""
    try:
        if not frame.f_code.co_flags & CO_OPTIMIZED:
            return False
        name = frame.f_globals.get("__name__", "")
        return not (isinstance(name, str) and name.startswith(_INTERNAL_FRAME_PREFIXES))
    except Exception:
        return False


def frame_locals(frame: Any) -> list[tuple[str, Any]]:
    """A function frame's locals (bounded), read without keeping them alive.

    On Python 3.10-3.12 reading ``f_locals`` leaves a snapshot dict on the
    frame, which ``frame.clear()`` does not touch: after our reading, the
    usual recovery from an out-of-memory error (``traceback.clear_frames``)
    would no longer free the failed function's tensors. The snapshot is only a
    cache there (the next reader gets it filled again from the frame), so it is
    emptied once read: see :func:`only_the_frame_holds` for when. Only function
    frames: a module-level frame's ``f_locals`` is its globals. From 3.13 on
    ``f_locals`` is a view, not a copy.
    """
    try:
        snapshot = frame.f_locals
        items = list(snapshot.items())[:LOCALS_PER_FRAME]
        if leaves_snapshot(frame) and only_the_frame_holds(snapshot):
            snapshot.clear()
        del snapshot
    except Exception:
        return []
    return [(k, v) for k, v in items if isinstance(k, str)]


def leaves_snapshot(frame: Any) -> bool:
    """Whether reading ``frame.f_locals`` leaves a snapshot dict on it (a function frame, Python < 3.13)."""
    return sys.version_info < (3, 13) and bool(frame.f_code.co_flags & CO_OPTIMIZED)


def only_the_frame_holds(snapshot: Any) -> bool:
    """Whether nothing but its frame holds this ``f_locals`` snapshot, which the
    caller holds in one variable (and nothing else of the caller's holds it).

    The snapshot is the very dict that ``locals()``, ``vars()`` or a debugger
    (pdb's ``curframe_locals``) handed out inside or about that frame: a
    ``saved.append(locals())`` holds it. That dict is the user's then, never to
    be emptied; and what it holds it keeps alive whatever we do. Told by its
    reference count, against that of a snapshot only its frame holds, counted
    the same way on this interpreter (:func:`_frame_only_count`).
    """
    return type(snapshot) is dict and sys.getrefcount(snapshot) <= _frame_only_count()


@functools.cache
def _frame_only_count() -> int:
    """What :func:`only_the_frame_holds` counts for a snapshot that only its frame holds."""
    frame = _finished_frame()
    snapshot = frame.f_locals  # one variable, as in the callers of only_the_frame_holds
    count = _counted_as_only_the_frame_holds_counts(snapshot)
    # The finished frame links back to this one (f_back), which holds it: a cycle that
    # would keep this call's callers' frames (and what they hold) until gc runs.
    del frame, snapshot
    return count


def _counted_as_only_the_frame_holds_counts(snapshot: Any) -> int:
    # The frame, the caller's variable, this parameter and getrefcount's argument: as there.
    return sys.getrefcount(snapshot)


def _finished_frame() -> Any:
    return sys._getframe()  # this call's frame, finished once returned, as a traceback's frames are
