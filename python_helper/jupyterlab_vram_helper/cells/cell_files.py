"""Which notebook cell a code file name belongs to.

IPython compiles every cell under a file name of its own, so a frame of a
traceback (tracemalloc's, or PyTorch's allocator history) names the cell that
ran it:

- ipykernel's caching compiler: ``/tmp/ipykernel_<pid>/<hash>.py``, where the
  hash is of the raw cell source only (``ipykernel/compiler.py``): running the
  same source again gives the same name;
- plain IPython: ``<ipython-input-<N>-<hash>>``, with the execution count in it.

Both register the name in ``shell.compile._filename_map`` (name -> execution
count of the latest run) when the cell is compiled. That map is private
IPython API: it is read defensively, and the patterns above are the fallback.

The execution count alone does not say which notebook cell ran: the cell id
does. :class:`CellFiles` notes ``execution count -> cell id`` at each
``pre_run_cell`` while allocations are recorded; cells run before that resolve
to their execution count only (the frontend maps counts to cells through its
per-cell history).

Code a cell runs through ``run_cell`` (``%%capture``, ``get_ipython().run_cell``)
is compiled as a cell of its own, and registered under the shell's count as it
is then, which is the next cell's: such a file is noted as the running cell's
(:meth:`CellFiles.note_nested`) until a cell of its own runs the same source.

Two notebook cells with the same source (a cell copied, a training step
pasted twice) compile under one file name: their allocations cannot be told
apart. The cells that ran each source are noted (a hash of it, cheap), and a
file two or more cells ran names them all (:meth:`CellFiles.same_code_cells`),
so that the line says "one of N cells" instead of naming the last one only.

Line 1 of a code file is not always line 1 of the cell the user sees: IPython
drops a cell's leading blank lines before it compiles it, and a cell magic's
body (``%%capture``) is compiled alone, below the magic's line. The lines
before it are noted per file (:meth:`CellFiles.line_offset`), so that a line
named in the Lines tab is the line of the cell in the notebook.
"""

from __future__ import annotations

import linecache
import re
from typing import Any

_IPYTHON_INPUT = re.compile(r"^<ipython-input-(\d+)-[0-9a-f]+>$")
_IPYKERNEL_FILE = re.compile(r"[/\\]ipykernel_\d+[/\\][0-9a-f]+\.py$")

MAX_NOTED_CELLS = 10_000
MAX_SAME_CODE_CELLS = 16  # cells named as having run one source
MAX_SOURCE_LINE_CHARS = 200


class CellFiles:
    """Resolves a code file name to ``(execution_count, cell_id)``, or tells that it is no cell."""

    def __init__(self, shell: Any = None):
        self.shell = shell
        self._cell_ids: dict[int, str] = {}  # execution count -> notebook cell id
        # code file -> the cell that ran it through run_cell (the shell's map names the wrong one)
        self._nested: dict[str, tuple[int | None, str | None]] = {}
        self._cache: dict[str, tuple[int | None, str | None] | None] = {}
        # code file -> the cell's lines above its line 1 (none noted: 0). A file
        # name hashes its raw source, so its offset never changes.
        self._line_offsets: dict[str, int] = {}
        # hashes of the sources run_cell ran: a cell of its own with one of them
        # takes its file back, and sets its offset again (str caches its hash)
        self._nested_sources: dict[int, None] = {}
        # hash of a raw source -> the cells that ran it; code file -> those of them, where two or more
        self._source_cells: dict[int, list[str]] = {}
        self._shared_files: dict[str, list[str]] = {}

    def note(self, execution_count: int | None, cell_id: str | None) -> None:
        """Remember which notebook cell runs under ``execution_count`` (from ``pre_run_cell``)."""
        if isinstance(execution_count, int) and isinstance(cell_id, str) and cell_id:
            if execution_count not in self._cell_ids and len(self._cell_ids) >= MAX_NOTED_CELLS:
                self._drop_cell_ids()
            self._cell_ids[execution_count] = cell_id[:256]
            self._cache.clear()  # a re-run moves a file name to its new count

    def _drop_cell_ids(self) -> None:
        """Past the bound: the counts no code file names any more go first (a cell run
        again compiles under its latest count), so that a cell run once long ago and
        still holding memory keeps its id; then the oldest, down to half the bound, so
        that this pass over the notes comes once per thousands of cells."""
        named = set(self._read_filename_map().values())
        if not named:  # no map to read: every count may name a file (<ipython-input-N-...>)
            self._cell_ids.pop(next(iter(self._cell_ids)))
            return
        named.update(count for count, _ in self._nested.values() if count is not None)
        kept = {count: cell_id for count, cell_id in self._cell_ids.items() if count in named}
        while len(kept) > MAX_NOTED_CELLS // 2:
            kept.pop(next(iter(kept)))
        self._cell_ids = kept

    def note_nested(
        self, raw_cell: Any, execution_count: int | None, cell_id: str | None, outer_raw_cell: Any = None
    ) -> None:
        """The running cell ``(execution_count, cell_id)``, whose source is
        ``outer_raw_cell``, runs ``raw_cell`` through ``run_cell``."""
        filename = self._code_name(raw_cell)
        if filename is not None:
            if len(self._nested) >= MAX_NOTED_CELLS:
                self._nested.pop(next(iter(self._nested)))
            self._nested[filename] = (execution_count, cell_id[:256] if isinstance(cell_id, str) and cell_id else None)
            self._cache.pop(filename, None)
            if len(self._nested_sources) >= MAX_NOTED_CELLS:
                self._nested_sources.pop(next(iter(self._nested_sources)))
            self._nested_sources[hash(raw_cell)] = None
            # A magic's body sits in the running cell below the magic's line; code
            # from elsewhere (a string given to run_cell) keeps its own numbering.
            # IPython ends a cell with a newline before it splits the body off:
            # the cell as sent (JupyterLab's ends without one) may lack it.
            body = raw_cell[:-1] if isinstance(raw_cell, str) and raw_cell.endswith("\n") else raw_cell
            at = outer_raw_cell.find(body) if isinstance(outer_raw_cell, str) and body else -1
            if at >= 0:
                self._note_offset(filename, outer_raw_cell.count("\n", 0, at) + leading_blank_lines(raw_cell))

    def note_own(self, raw_cell: Any, cell_id: str | None = None) -> None:
        """A cell of its own (``cell_id``) runs ``raw_cell``: its file is that cell's
        again, not a nested run's."""
        if isinstance(raw_cell, str) and isinstance(cell_id, str) and cell_id:
            self._note_source(raw_cell, cell_id[:256])
        blank = leading_blank_lines(raw_cell)
        # Hashing the source for its file name costs a pass in Python over every
        # byte: only where this source ran nested (its file and offset are to take
        # back) or an offset is due, not on every cell once one nested run was seen.
        if blank or (isinstance(raw_cell, str) and hash(raw_cell) in self._nested_sources):
            filename = self._code_name(raw_cell)
            if filename is not None and self._nested.pop(filename, None) is not None:
                self._cache.pop(filename, None)
            if filename is not None:
                # A cell of its own with the text a magic's body had shares that
                # body's file: its offset is its own blank lines, none or some.
                self._note_offset(filename, blank)

    def _note_source(self, raw_cell: str, cell_id: str) -> None:
        key = hash(raw_cell)  # str caches its hash: one pass over a new source
        cells = self._source_cells.get(key)
        if cells is None:
            if len(self._source_cells) >= MAX_NOTED_CELLS:
                self._source_cells.pop(next(iter(self._source_cells)))
            self._source_cells[key] = [cell_id]
            return
        if cell_id in cells or len(cells) >= MAX_SAME_CODE_CELLS:
            return
        cells.append(cell_id)
        filename = self._code_name(raw_cell)  # a second cell with this source: rare
        if filename is not None:
            if len(self._shared_files) >= MAX_NOTED_CELLS:
                self._shared_files.pop(next(iter(self._shared_files)))
            self._shared_files[filename] = cells

    def same_code_cells(self, filename: str) -> list[str] | None:
        """The cells that ran the source compiled under ``filename``, where two or more did; else None."""
        return list(self._shared_files[filename]) if filename in self._shared_files else None

    def _note_offset(self, filename: str, offset: int) -> None:
        if offset <= 0:
            self._line_offsets.pop(filename, None)
            return
        if len(self._line_offsets) >= MAX_NOTED_CELLS:
            self._line_offsets.pop(next(iter(self._line_offsets)))
        self._line_offsets[filename] = offset

    def line_offset(self, filename: str) -> int:
        """How many lines of the cell the user sees come before line 1 of ``filename``'s code."""
        return self._line_offsets.get(filename, 0)

    def _code_name(self, raw_cell: Any) -> str | None:
        """The file name the shell compiles ``raw_cell`` under: ipykernel's names
        hash the raw source alone (IPython's own also hash the transformed code,
        which the hook does not see: those names may not match, and nothing is noted)."""
        try:
            if not isinstance(raw_cell, str):
                return None
            name = self.shell.compile.get_code_name(raw_cell, raw_cell, self.shell.execution_count)
            return name if isinstance(name, str) else None
        except Exception:
            return None

    def raw_line(self, execution_count: int | None, line: int) -> str | None:
        """Line ``line`` of the cell run under ``execution_count`` as the user wrote it
        (IPython's input history), or None."""
        try:
            if execution_count is None:
                return None
            text = self.shell.history_manager.input_hist_raw[execution_count]
            lines = text.splitlines() if isinstance(text, str) else []
            if not 0 < line <= len(lines):
                return None
            return lines[line - 1].strip()[:MAX_SOURCE_LINE_CHARS] or None
        except Exception:
            return None

    def cell_id_of(self, execution_count: int) -> str | None:
        """The notebook cell noted under ``execution_count``, if any."""
        return self._cell_ids.get(execution_count)

    def forget(self) -> None:
        self._cell_ids.clear()
        self._nested.clear()
        self._cache.clear()
        self._line_offsets.clear()
        self._nested_sources.clear()
        self._source_cells.clear()
        self._shared_files.clear()

    def start_lookup(self) -> None:
        """Call once per listing: file names resolve against the shell's map as it is now."""
        self._cache.clear()
        self._filename_map = self._read_filename_map()

    def _read_filename_map(self) -> dict[str, int]:
        try:
            found = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
            return dict(found) if isinstance(found, dict) else {}
        except Exception:
            return {}

    def is_cell(self, filename: str) -> bool:
        return self.resolve(filename) is not None

    def resolve(self, filename: str) -> tuple[int | None, str | None] | None:
        """``(execution_count, cell_id)`` of the cell compiled under ``filename``; ``None``: not a cell."""
        try:
            return self._cache[filename]
        except KeyError:
            pass
        found = self._resolve(filename)
        self._cache[filename] = found
        return found

    def _resolve(self, filename: str) -> tuple[int | None, str | None] | None:
        if not isinstance(filename, str):
            return None
        nested = self._nested.get(filename)
        if nested is not None:
            return nested
        count = getattr(self, "_filename_map", {}).get(filename)
        if not isinstance(count, int) or isinstance(count, bool):
            match = _IPYTHON_INPUT.match(filename)
            if match:
                count = int(match.group(1))
            elif _IPYKERNEL_FILE.search(filename):
                count = None
            else:
                return None
        return count, self._cell_ids.get(count) if count is not None else None


_LEADING_BLANK_LINES = re.compile(r"(?:[ \t\f\v]*\r?\n)*")


def leading_blank_lines(raw_cell: Any) -> int:
    """The blank lines IPython drops from the top of a cell before compiling it
    (its ``leading_empty_lines`` transform); reads only those lines."""
    if not isinstance(raw_cell, str):
        return 0
    blank = _LEADING_BLANK_LINES.match(raw_cell)
    if blank is None or blank.end() == len(raw_cell):
        return 0  # a blank cell: IPython keeps it whole
    return raw_cell.count("\n", 0, blank.end())


def source_line(filename: str, line: int) -> str | None:
    """The text of ``line`` in ``filename`` as IPython cached it (cells live in linecache), or None."""
    try:
        text = linecache.getline(filename, line)
    except Exception:
        return None
    text = text.strip()
    if not text:
        return None
    return text[:MAX_SOURCE_LINE_CHARS]
