"""Works out which execution count the cell that ``pre_run_cell`` announces runs under.

The hook receives an ``ExecutionInfo``, which carries no count, and
``shell.execution_count`` means different things across IPython releases:

- up to the 9.x releases of late 2025 (IPython 8 among them), ``run_cell_async``
  increments the count only after the cell ran, so in ``pre_run_cell`` it is
  the running cell's own number;
- later releases increment the count before ``pre_run_cell`` (so that cells
  can re-enter ``run_cell_async``), so the running cell's number is one less.

Both set ``ExecutionResult.execution_count`` to the cell's number, and
``post_run_cell`` receives that result. :class:`CellNumbering` compares it with
the count that the shell showed at the start of the same cell, and keeps the
difference, which holds for every later cell of that shell. Until a cell has
ended, the difference comes from the shell's own code (see
:func:`_counts_before_running`), not from a version string, because the change
came in a minor release, and forks backport such things.
"""

from __future__ import annotations

from typing import Any

# At most this many cells are started and not yet ended, as nested cells are.
# More means that a post_run_cell was lost.
MAX_OPEN_CELLS = 32


class CellNumbering:
    """Learns, per shell, how ``shell.execution_count`` in ``pre_run_cell`` relates to the cell's number."""

    def __init__(self) -> None:
        # This is 1 when the shell counts the cell before pre_run_cell, 0 when
        # it counts it after the cell ran, and None while that is not known.
        self._offset: int | None = None
        self._shell_id: int | None = None
        # This maps id(info) to shell.execution_count in pre_run_cell, for the
        # store_history cells still running.
        self._raw: dict[int, int] = {}

    def at_start(self, shell: Any, info: Any) -> int | None:
        """The count of the cell that ``info`` announces. Call it from
        ``pre_run_cell``; it never raises."""
        try:
            count = shell.execution_count
            # The exact class check also refuses a bool.
            if count.__class__ is not int:
                return None
            if not getattr(info, "store_history", False):
                # Such a cell is never counted, and both orderings compile it
                # under the count as it is.
                return count
            if id(shell) == self._shell_id and self._offset is not None:
                # The offset is learned for every cell but a shell's first.
                # This is a hook's hot path, so it is kept short.
                return count - self._offset
            if id(shell) != self._shell_id:
                self._shell_id = id(shell)
                self._offset = None
                self._raw.clear()
            if len(self._raw) >= MAX_OPEN_CELLS:
                self._raw.pop(next(iter(self._raw)))
            self._raw[id(info)] = count
            return count - (1 if _counts_before_running(shell) else 0)
        except Exception:
            return None

    def at_end(self, result: Any) -> None:
        """Learn from the cell that ``result`` ends. Call it from ``post_run_cell``;
        it never raises."""
        if not self._raw:
            # The offset is learned, or no cell noted here is waiting, so there
            # is nothing to compare.
            return
        try:
            raw = self._raw.pop(id(getattr(result, "info", None)), None)
            count = getattr(result, "execution_count", None)
            if raw is None or count.__class__ is not int:
                return
            if raw - count in (0, 1):
                self._offset = raw - count
                # The cells still open are numbered by the offset from here on.
                self._raw.clear()
        except Exception:
            pass

    def forget(self) -> None:
        self._raw.clear()


def _counts_before_running(shell: Any) -> bool:
    """Whether this shell's ``run_cell_async`` increments the count before ``pre_run_cell``.

    It is asked only for the first cell of a shell, before
    :meth:`CellNumbering.at_end` has seen one end. The releases that count
    first keep the cell's number in a local variable ``execution_count`` of
    ``run_cell_async``, which is a cell variable because a closure reads it,
    while the older ones only ever use the attribute. A shell without such a
    method is taken to use the older ordering.
    """
    try:
        code = type(shell).run_cell_async.__code__
        return "execution_count" in code.co_varnames + code.co_cellvars
    except Exception:
        return False
