"""Live allocations grouped by the notebook line that made them.

Input: for one device, live allocations as ``(bytes, frames)`` where
``frames`` is a sequence of ``(filename, line, function)``, innermost first
(tracemalloc's raw traces and PyTorch's allocator snapshot both come that
way). Output: the ``sites`` of an ``allocation_sites`` reply
(docs/protocol.md).

An allocation is charged to the innermost frame in notebook code (a cell's
code file, :mod:`cell_files`), so ``np.zeros`` called from cell 7 line 3 is
charged to cell 7 line 3, and the library frame just inside it
(``numpy/...``) is shown beneath, the one that allocated most bytes from that
line. An allocation with no notebook frame in its captured stack (made by a
library on its own, or deeper than the recorded frame depth) is charged to its
innermost frame and marked as outside the notebook.

Frames are tuples compared by identity first: tracemalloc shares one tuple
per distinct traceback, so 100,000 allocations from a loop cost one
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
# (cell file or None, line, filename, function): what a site is keyed by
SiteKey = tuple[bool, str, int]


def _is_helper_frame(filename: str) -> bool:
    return filename.startswith("<jupyterlab-vram>") or "jupyterlab_vram_helper" in filename


# What IPython's %time and %%time compile the timed code under: line 1 is the
# first line of the code timed, which sits on the magic's line (%time) or on
# the lines after it (%%time, whose line is the cell's first). Functions and
# classes a timed cell defines keep that name: called from another line later,
# their frames are not the timed body's.
_TIMED_CODE = ("<timed exec>", "<timed eval>")
_TIME_MAGIC = re.compile(r"run_(cell|line)_magic\(\s*['\"]time['\"]\s*,")


def _timed_cell_line(cell: Frame, timed: Frame) -> int | None:
    """The cell's line of a frame of timed code called from the cell's frame ``cell``;
    None where the cell's line is no %time/%%time (a timed cell's function, called later)."""
    try:
        magic = linecache.getline(cell[0], cell[1])
    except Exception:
        return None
    found = _TIME_MAGIC.search(magic)
    if found is None:
        return None
    if found.group(1) == "line":
        return cell[1] + timed[1] - 1
    # %%time compiles its body without the blank lines at its top (IPython's transforms).
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
    """Accumulates one device's live allocations; :meth:`result` gives its sites."""

    def __init__(self, cells: CellFiles, normalise: Callable[[Any], Frame] = lambda f: f):
        self._cells = cells
        self._normalise = normalise
        self._sites: dict[SiteKey, _Site] = {}
        self._by_stack: dict[int, tuple[Any, _Site | None, Frame | None, str | None]] = {}
        # Bytes alive per cell code file of the cell that ran (the outermost cell frame)
        self._by_running_cell: dict[str, int] = {}
        self.total_bytes = 0
        self.count = 0
        self.unattributed_bytes = 0  # no frames at all (made before recording started)
        self.helper_bytes = 0  # made by this helper itself: not the user's
        self.helper_count = 0

    def add(self, size: int, frames: Sequence[Any], count: int = 1) -> None:
        """``count`` allocations of ``size`` bytes in all, all made by the stack ``frames``."""
        # id() is safe: the caller keeps every stack alive for the grouping's lifetime.
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
        beneath it, and the code file of the cell that ran (the outermost cell
        frame: a function defined in one cell and called from another charges
        its line to the first and its bytes to the second's run).

        ``(None, None, None)``: no frames; ``(None, frame, None)``: the helper's own allocation.
        """
        if not frames:
            return None, None, None
        normalised: list[Frame] = []
        timed = -1  # where in ``normalised`` the outermost frame of timed code is
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
                    continue  # an outer cell frame: only the running cell is wanted of it
                line = _timed_cell_line(frame, normalised[timed]) if timed >= 0 else None
                if line is not None:  # the cell's own line, inside the magic's call: not the magic's line
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
        """Bytes still alive per code file of the cell whose run allocated them
        (every allocation, not only the listed sites)."""
        return dict(self._by_running_cell)

    def _describe(self, device: str, site: _Site) -> dict[str, Any]:
        library = max(site.library.items(), key=lambda item: item[1])[0] if site.library else None
        cell: dict[str, Any] | None = None
        frame = None
        code = source_line(site.filename, site.line)
        if site.in_cell:
            count, cell_id = self._cells.resolve(site.filename) or (None, None)
            line = site.line + self._cells.line_offset(site.filename)  # the line in the cell as the user sees it
            cell = {"execution_count": count, "cell_id": cell_id, "line": line}
            same = self._cells.same_code_cells(site.filename)
            if same is not None:  # their allocations cannot be told apart: all are named
                cell["same_code_cells"] = same
            if code is None or "get_ipython().run_" in code:
                # A cell magic's body (the compiled cell is the magic's call alone), or a
                # magic's line (%run, %time): the line as the user wrote it.
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
    """IPython's own machinery between a cell's line and the code it runs (%run's, a magic's)."""
    normalised = filename.replace("\\", "/")
    return "/IPython/" in normalised or filename.startswith("<decorator-gen-")


def _beneath(inner: Sequence[Frame]) -> Frame | None:
    """The frame shown beneath a cell's line: the first, going in from the cell
    (``inner`` is innermost first), that is not IPython's own: the script's line
    under ``%run``, the library function a line called."""
    for frame in reversed(inner):
        if not _is_ipython_frame(frame[0]):
            return frame
    return inner[-1] if inner else None


def _frame_dict(filename: str, line: int, function: str | None) -> dict[str, Any]:
    return {"filename": filename[-500:], "line": line, "function": function[:200] if function else None}
