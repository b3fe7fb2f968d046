"""Find the frames that an error keeps alive, and their locals. They are what
the ``last_traceback`` hidden holder of hidden_references.py holds.

A traceback keeps every frame that it passes through, and each frame keeps its
locals, such as a failed training step's batch, its activations and the
model's outputs. The functions here walk them within fixed bounds, and read a
frame's locals without keeping them alive.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Iterable
from typing import Any

# These bound one walk, so that a deep or long chain costs little.
FRAMES_PER_TRACEBACK = 100
CHAINED_EXCEPTIONS = 5
LOCALS_PER_FRAME = 200

# The code flag that marks a function's frame, as opposed to a module's.
CO_OPTIMIZED = 0x0001
# Frames whose module names start with these belong to IPython, the kernel or
# this helper, not to the user's code.
_INTERNAL_FRAME_PREFIXES = ("IPython", "ipykernel", "jupyterlab_vram_helper", "asyncio", "tornado", "traitlets")


def exception_chain(exc: Any) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, each once and at
    most CHAINED_EXCEPTIONS of them, so that a cycle ends the walk."""
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
    """The distinct frames of these tracebacks, at most FRAMES_PER_TRACEBACK from each."""
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
    """Whether ``frame`` is a function's frame outside IPython, ipykernel and this
    helper. Module-level frames do not count, because their locals are the
    namespace itself."""
    try:
        if not frame.f_code.co_flags & CO_OPTIMIZED:
            return False
        name = frame.f_globals.get("__name__", "")
        return not (isinstance(name, str) and name.startswith(_INTERNAL_FRAME_PREFIXES))
    except Exception:
        return False


def frame_locals(frame: Any) -> list[tuple[str, Any]]:
    """A function frame's locals, at most LOCALS_PER_FRAME of them, read without
    keeping them alive.

    On Python 3.10 to 3.12, reading ``f_locals`` leaves a snapshot dict on the
    frame, which ``frame.clear()`` does not touch. After the helper had read
    it, the usual recovery from an out-of-memory error
    (``traceback.clear_frames``) would no longer free the failed function's
    tensors. The snapshot is only a cache on those versions, since the next
    reader gets it filled again from the frame, so it is emptied once read;
    :func:`only_the_frame_holds` says when that is safe. Only function frames
    are emptied, because a module-level frame's ``f_locals`` is its globals.
    From Python 3.13 on, ``f_locals`` is a view, not a copy.
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
    """Whether reading ``frame.f_locals`` leaves a snapshot dict on it, which is
    so for a function's frame before Python 3.13."""
    return sys.version_info < (3, 13) and bool(frame.f_code.co_flags & CO_OPTIMIZED)


def only_the_frame_holds(snapshot: Any) -> bool:
    """Whether nothing but its frame holds this ``f_locals`` snapshot. The caller
    must hold it in exactly one variable and nowhere else.

    The snapshot is the very dict that ``locals()``, ``vars()`` or a debugger
    (pdb's ``curframe_locals``) handed out inside or about that frame, so a
    ``saved.append(locals())`` holds it. Such a dict then belongs to the user
    and must never be emptied, and it keeps what it holds alive whatever the
    helper does. The test compares its reference count with that of a snapshot
    that only its frame holds, counted the same way on this interpreter (see
    :func:`_frame_only_count`).
    """
    return type(snapshot) is dict and sys.getrefcount(snapshot) <= _frame_only_count()


@functools.cache
def _frame_only_count() -> int:
    """The count that :func:`only_the_frame_holds` sees for a snapshot that only
    its frame holds. It is measured once on this interpreter and cached."""
    frame = _finished_frame()
    # The snapshot is held in one variable, as in the callers of
    # only_the_frame_holds, so that the counts compare.
    snapshot = frame.f_locals
    count = _counted_as_only_the_frame_holds_counts(snapshot)
    # The finished frame links back to this one through f_back, and this one
    # holds it. That cycle would keep this call's callers' frames, and what
    # they hold, alive until the garbage collector runs.
    del frame, snapshot
    return count


def _counted_as_only_the_frame_holds_counts(snapshot: Any) -> int:
    # The count includes the frame, the caller's variable, this parameter and
    # getrefcount's argument, just as in only_the_frame_holds.
    return sys.getrefcount(snapshot)


def _finished_frame() -> Any:
    # This call's frame is finished once the call returns, as a traceback's
    # frames are, so its snapshot behaves like theirs.
    return sys._getframe()
