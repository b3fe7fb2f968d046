"""The frames an error keeps alive, and their locals: what the ``last_traceback``
hidden holder holds (hidden_references.py).

A traceback keeps every frame it passes through, and each frame its locals
(a failed training step's batch, activations, the model's outputs). These
walk them bounded, and read a frame's locals without keeping them alive.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Iterable, List, Tuple

# Bounds of one walk.
FRAMES_PER_TRACEBACK = 100
CHAINED_EXCEPTIONS = 5
LOCALS_PER_FRAME = 200

CO_OPTIMIZED = 0x0001
_INTERNAL_FRAME_PREFIXES = ("IPython", "ipykernel", "jupyterlab_vram_helper", "asyncio", "tornado", "traitlets")


def exception_chain(exc: Any) -> List[BaseException]:
    """``exc`` and the exceptions it was raised from or during (bounded, no cycles)."""
    out: List[BaseException] = []
    todo = [exc]
    while todo and len(out) < CHAINED_EXCEPTIONS:
        e = todo.pop(0)
        if not isinstance(e, BaseException) or any(e is x for x in out):
            continue
        out.append(e)
        todo.extend([e.__cause__, e.__context__])
    return out


def traceback_frames(tbs: Iterable[Any]) -> List[Any]:
    """The distinct frames of these tracebacks (bounded)."""
    frames: List[Any] = []
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


def frame_locals(frame: Any) -> List[Tuple[str, Any]]:
    """A function frame's locals (bounded), read without keeping them alive.

    On Python 3.10-3.12 reading ``f_locals`` leaves a snapshot dict on the
    frame, which ``frame.clear()`` does not touch: after our reading, the
    usual recovery from an out-of-memory error (``traceback.clear_frames``)
    would no longer free the failed function's tensors. The snapshot is only a
    cache there (the next reader gets it filled again from the frame), so it is
    emptied once read. Only function frames: a module-level frame's
    ``f_locals`` is its globals. From 3.13 on ``f_locals`` is a view, not a copy.
    """
    try:
        snapshot = frame.f_locals
        items = list(snapshot.items())[:LOCALS_PER_FRAME]
        if sys.version_info < (3, 13) and frame.f_code.co_flags & CO_OPTIMIZED and isinstance(snapshot, dict):
            snapshot.clear()
        del snapshot
    except Exception:
        return []
    return [(k, v) for k, v in items if isinstance(k, str)]
