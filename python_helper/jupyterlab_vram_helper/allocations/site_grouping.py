"""Live allocations grouped by the notebook line that made them.

The input is, for one device, the live allocations as ``(bytes, frames)``,
where ``frames`` is a sequence of ``(filename, line, function)``, innermost
first; tracemalloc's raw traces and PyTorch's allocator snapshot both come
that way. The output is the ``sites`` of an ``allocation_sites`` reply
(docs/protocol.md).

An allocation is charged to the innermost frame in notebook code (a cell's
code file, see :mod:`cell_files`), so ``np.zeros`` called from cell 7 line 3
is charged to cell 7 line 3. The library frame just inside it (``numpy/...``)
is shown beneath, choosing the one that allocated the most bytes from that
line. An allocation with no notebook frame in its captured stack, because a
library made it on its own or the notebook's frame was deeper than the
recorded depth, is charged to its innermost frame and marked as outside the
notebook.

A stack is looked up by its identity first, because tracemalloc shares one
tuple per distinct traceback, so 100,000 allocations from a loop cost one
resolution, not 100,000.
"""

from __future__ import annotations

import ast
import linecache
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..cells.cell_files import CellFiles, leading_blank_lines, source_line

Frame = tuple[str, int, str | None]
# A site is keyed by (whether it is in a cell, filename, line).
SiteKey = tuple[bool, str, int]


def _is_helper_frame(filename: str) -> bool:
    return filename.startswith("<jupyterlab-vram>") or "jupyterlab_vram_helper" in filename


# These are the file names that IPython's %time and %%time compile the timed
# code under. Line 1 there is the first line of the timed code, which sits on
# the magic's line for %time, or on the lines after it for %%time, whose own
# line is the cell's first. Functions and classes that a timed cell defines
# keep that file name, so when they are called later from another line, their
# frames are not the timed body's.
_TIMED_CODE = ("<timed exec>", "<timed eval>")
_TIME_MAGIC = re.compile(r"run_(cell|line)_magic\(\s*['\"]time['\"]\s*,")


def _timed_cell_line(cell: Frame, timed: Frame) -> int | None:
    """The cell's line for a frame of timed code called from the cell's frame
    ``cell``, or None where the cell's line is not a %time or %%time. That is
    the case for a function that a timed cell defined, called later."""
    try:
        magic = linecache.getline(cell[0], cell[1])
    except Exception:
        return None
    found = _TIME_MAGIC.search(magic)
    if found is None:
        return None
    if found.group(1) == "line":
        return cell[1] + timed[1] - 1
    # IPython's transforms drop the blank lines at the top of a %%time body
    # before it is compiled, so they are added back.
    return cell[1] + _timed_body_blank_lines(magic) + timed[1]


def _timed_body_blank_lines(magic: str) -> int:
    """The blank lines at the top of the body of ``get_ipython().run_cell_magic('time', '', body)``."""
    try:
        call = ast.parse(magic.strip(), mode="eval").body
        body = call.args[2].value  # type: ignore[attr-defined]
    except Exception:
        return 0
    return leading_blank_lines(body)


class _Site:
    __slots__ = ("in_cell", "filename", "line", "function", "bytes", "count", "library")

    def __init__(self, in_cell: bool, filename: str, line: int, function: str | None):
        self.in_cell = in_cell
        self.filename = filename
        self.line = line
        self.function = function
        self.bytes = 0
        self.count = 0
        self.library: dict[Frame, int] = {}


class SiteGrouper:
    """Accumulates one device's live allocations, and :meth:`result` gives its sites."""

    def __init__(self, cells: CellFiles, normalise: Callable[[Any], Frame] = lambda f: f):
        self._cells = cells
        self._normalise = normalise
        self._sites: dict[SiteKey, _Site] = {}
        self._by_stack: dict[int, tuple[Any, _Site | None, Frame | None, str | None]] = {}
        # The bytes alive for each cell code file of the cell that ran, which is
        # the outermost cell frame.
        self._by_running_cell: dict[str, int] = {}
        self.total_bytes = 0
        self.count = 0
        # Allocations with no frames at all, made before recording started.
        self.unattributed_bytes = 0
        # Allocations made by this helper itself, which are not the user's.
        self.helper_bytes = 0
        self.helper_count = 0

    def add(self, size: int, frames: Sequence[Any], count: int = 1) -> None:
        """Add ``count`` allocations of ``size`` bytes in all, all made by the stack ``frames``."""
        # Keying by id() is safe, because the caller keeps every stack alive for
        # the grouping's lifetime, and the cached stack is compared as well.
        cached = self._by_stack.get(id(frames))
        if cached is None or cached[0] is not frames:
            site, library, running = self._place(frames)
            cached = (frames, site, library, running)
            self._by_stack[id(frames)] = cached
        site, library, running = cached[1], cached[2], cached[3]
        if running is not None:
            self._by_running_cell[running] = self._by_running_cell.get(running, 0) + size
        self.total_bytes += size
        self.count += count
        if site is None:
            if library is None:
                self.unattributed_bytes += size
            else:
                self.helper_bytes += size
                self.helper_count += count
            return
        site.bytes += size
        site.count += count
        if library is not None:
            site.library[library] = site.library.get(library, 0) + size

    def _place(self, frames: Sequence[Any]) -> tuple[_Site | None, Frame | None, str | None]:
        """The site charged with an allocation of this stack, the library frame
        beneath it, and the code file of the cell that ran.

        The cell that ran is the outermost cell frame, so a function defined in
        one cell and called from another charges its line to the first and its
        bytes to the second's run. The result is ``(None, None, None)`` for a
        stack with no frames, and ``(None, frame, None)`` for the helper's own
        allocation.
        """
        if not frames:
            return None, None, None
        normalised: list[Frame] = []
        # The index in ``normalised`` of the outermost frame of timed code.
        timed = -1
        site: _Site | None = None
        library: Frame | None = None
        running: str | None = None
        for raw in frames:
            frame = self._normalise(raw)
            if _is_helper_frame(frame[0]):
                return None, frame, None
            normalised.append(frame)
            if frame[0] in _TIMED_CODE:
                timed = len(normalised) - 1
            elif self._cells.is_cell(frame[0]):
                running = frame[0]
                if site is not None:
                    # This is an outer cell frame, and only the running cell
                    # is wanted from it.
                    continue
                line = _timed_cell_line(frame, normalised[timed]) if timed >= 0 else None
                # Inside a timing magic's call, the site is the cell's own line,
                # not the magic's line.
                if line is not None:
                    frame = (frame[0], line, frame[2])
                    library = _beneath(normalised[:timed])
                else:
                    library = _beneath(normalised[:-1])
                site = self._site(True, frame)
        if site is not None:
            return site, library, running
        return self._site(False, normalised[0]), None, None

    def _site(self, in_cell: bool, frame: Frame) -> _Site:
        key = (in_cell, frame[0], frame[1])
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = _Site(in_cell, frame[0], frame[1], frame[2])
        return site

    def result(self, device: str, max_sites: int) -> dict[str, Any]:
        ordered = sorted(self._sites.values(), key=lambda s: (-s.bytes, s.filename, s.line))
        return {
            "device": device,
            "total_bytes": self.total_bytes,
            "count": self.count,
            "unattributed_bytes": self.unattributed_bytes,
            "helper_bytes": self.helper_bytes,
            "helper_count": self.helper_count,
            "truncated": len(ordered) > max_sites,
            "sites": [self._describe(device, site) for site in ordered[:max_sites]],
        }

    def per_cell(self) -> dict[str, int]:
        """The bytes still alive for each code file of the cell whose run allocated
        them, counting every allocation, not only the listed sites."""
        return dict(self._by_running_cell)

    def _describe(self, device: str, site: _Site) -> dict[str, Any]:
        library = max(site.library.items(), key=lambda item: item[1])[0] if site.library else None
        cell: dict[str, Any] | None = None
        frame = None
        code = source_line(site.filename, site.line)
        if site.in_cell:
            count, cell_id = self._cells.resolve(site.filename) or (None, None)
            # The offset gives the line in the cell as the user sees it.
            line = site.line + self._cells.line_offset(site.filename)
            cell = {"execution_count": count, "cell_id": cell_id, "line": line}
            same = self._cells.same_code_cells(site.filename)
            # The allocations of cells with the same code cannot be told
            # apart, so all of those cells are named.
            if same is not None:
                cell["same_code_cells"] = same
            if code is None or "get_ipython().run_" in code:
                # For a cell magic's body, the compiled cell is the magic's call
                # alone, and a line magic such as %run or %time compiles to a
                # call too, so the line is shown as the user wrote it.
                code = self._cells.raw_line(count, line) or code
        else:
            frame = _frame_dict(site.filename, site.line, site.function)
        return {
            "device": device,
            "cell": cell,
            "frame": frame,
            "code": code,
            "library_frame": _frame_dict(*library) if library is not None else None,
            "bytes": site.bytes,
            "count": site.count,
        }


def _is_ipython_frame(filename: str) -> bool:
    """Whether ``filename`` is IPython's own machinery between a cell's line and
    the code it runs, such as that of %run or of another magic."""
    normalised = filename.replace("\\", "/")
    return "/IPython/" in normalised or filename.startswith("<decorator-gen-")


def _beneath(inner: Sequence[Frame]) -> Frame | None:
    """The frame shown beneath a cell's line, such as the script's line under
    ``%run`` or the library function that a line called.

    It is the first frame, going inwards from the cell, that is not IPython's
    own. ``inner`` is innermost first, so it is walked backwards.
    """
    for frame in reversed(inner):
        if not _is_ipython_frame(frame[0]):
            return frame
    return inner[-1] if inner else None


def _frame_dict(filename: str, line: int, function: str | None) -> dict[str, Any]:
    return {"filename": filename[-500:], "line": line, "function": function[:200] if function else None}
