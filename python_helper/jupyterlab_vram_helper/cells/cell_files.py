"""Which notebook cell a code file name belongs to.

IPython compiles every cell under a file name of its own, so a frame of a
traceback (tracemalloc's, or PyTorch's allocator history) names the cell that
ran it. The names come in two forms:

- ipykernel's caching compiler uses ``/tmp/ipykernel_<pid>/<hash>.py``, where
  the hash is of the raw cell source only (``ipykernel/compiler.py``), so
  running the same source again gives the same name;
- plain IPython uses ``<ipython-input-<N>-<hash>>``, with the execution count
  in it.

Both register the name in ``shell.compile._filename_map``, which maps it to
the execution count of the latest run, when the cell is compiled. That map is
private IPython API, so it is read defensively, and the patterns above are
the fallback.

The execution count alone does not say which notebook cell ran, but the cell
id does. :class:`CellFiles` notes which cell id runs under which execution
count at each ``pre_run_cell`` while allocations are recorded. Cells run
before that resolve to their execution count only, and the frontend maps
counts to cells through its per-cell history.

Code that a cell runs through ``run_cell`` (as ``%%capture`` or
``get_ipython().run_cell`` do) is compiled as a cell of its own, and
registered under the shell's count as it is then, which is the next cell's.
Such a file is therefore noted as the running cell's
(:meth:`CellFiles.note_nested`) until a cell of its own runs the same source.

Two notebook cells with the same source (a cell copied, or a training step
pasted twice) compile under one file name, so their allocations cannot be
told apart. The cells that ran each source are noted by a hash of it, which
is cheap, and a file that two or more cells ran names them all
(:meth:`CellFiles.same_code_cells`), so that the line says "one of N cells"
instead of naming the last one only.

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
# At most this many cells are named as having run one source.
MAX_SAME_CODE_CELLS = 16
MAX_SOURCE_LINE_CHARS = 200


class CellFiles:
    """Resolves a code file name to ``(execution_count, cell_id)``, or tells that it belongs to no cell."""

    def __init__(self, shell: Any = None):
        self.shell = shell
        # This maps an execution count to the notebook cell id run under it.
        self._cell_ids: dict[int, str] = {}
        # This maps a code file to the cell that ran it through run_cell,
        # because the shell's map names the wrong one.
        self._nested: dict[str, tuple[int | None, str | None]] = {}
        self._cache: dict[str, tuple[int | None, str | None] | None] = {}
        # This maps a code file to the cell's lines above its line 1; a file
        # with none noted has 0. A file name hashes its raw source, so its
        # offset never changes.
        self._line_offsets: dict[str, int] = {}
        # The hashes of the sources that run_cell ran. A cell of its own with
        # one of them takes its file back, and sets its offset again. Hashing
        # is cheap to repeat because str caches its hash.
        self._nested_sources: dict[int, None] = {}
        # The first maps the hash of a raw source to the cells that ran it, and
        # the second maps a code file to those cells, where two or more did.
        self._source_cells: dict[int, list[str]] = {}
        self._shared_files: dict[str, list[str]] = {}

    def note(self, execution_count: int | None, cell_id: str | None) -> None:
        """Remember which notebook cell runs under ``execution_count``, as ``pre_run_cell`` tells."""
        if isinstance(execution_count, int) and isinstance(cell_id, str) and cell_id:
            if execution_count not in self._cell_ids and len(self._cell_ids) >= MAX_NOTED_CELLS:
                self._drop_cell_ids()
            self._cell_ids[execution_count] = cell_id[:256]
            # A re-run moves a file name to its new count.
            self._cache.clear()

    def _drop_cell_ids(self) -> None:
        """Drop noted counts once there are more than the bound allows.

        The counts that no code file names any more go first (a cell run again
        compiles under its latest count), so that a cell run once long ago and
        still holding memory keeps its id. Then the oldest go, down to half the
        bound, so that this pass over the notes comes only once per thousands
        of cells.
        """
        named = set(self._read_filename_map().values())
        # With no map to read, every count may name a file
        # (<ipython-input-N-...>), so only the oldest is dropped.
        if not named:
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
        """Note that the running cell ``(execution_count, cell_id)``, whose source
        is ``outer_raw_cell``, runs ``raw_cell`` through ``run_cell``."""
        filename = self._code_name(raw_cell)
        if filename is not None:
            if len(self._nested) >= MAX_NOTED_CELLS:
                self._nested.pop(next(iter(self._nested)))
            self._nested[filename] = (execution_count, cell_id[:256] if isinstance(cell_id, str) and cell_id else None)
            self._cache.pop(filename, None)
            if len(self._nested_sources) >= MAX_NOTED_CELLS:
                self._nested_sources.pop(next(iter(self._nested_sources)))
            self._nested_sources[hash(raw_cell)] = None
            # A magic's body sits in the running cell below the magic's line,
            # while code from elsewhere (a string given to run_cell) keeps its
            # own numbering. IPython ends a cell with a newline before it
            # splits the body off, but the cell as sent may lack it, since
            # JupyterLab's cells end without one.
            body = raw_cell[:-1] if isinstance(raw_cell, str) and raw_cell.endswith("\n") else raw_cell
            at = outer_raw_cell.find(body) if isinstance(outer_raw_cell, str) and body else -1
            if at >= 0:
                self._note_offset(filename, outer_raw_cell.count("\n", 0, at) + leading_blank_lines(raw_cell))

    def note_own(self, raw_cell: Any, cell_id: str | None = None) -> None:
        """Note that a cell of its own (``cell_id``) runs ``raw_cell``, so its file
        is that cell's again, not a nested run's."""
        if isinstance(raw_cell, str) and isinstance(cell_id, str) and cell_id:
            self._note_source(raw_cell, cell_id[:256])
        blank = leading_blank_lines(raw_cell)
        # Hashing the source for its file name costs a pass in Python over every
        # byte. So it is done only where this source ran nested (so its file and
        # offset are to be taken back) or an offset is due, not on every cell
        # once one nested run was seen.
        if blank or (isinstance(raw_cell, str) and hash(raw_cell) in self._nested_sources):
            filename = self._code_name(raw_cell)
            if filename is not None and self._nested.pop(filename, None) is not None:
                self._cache.pop(filename, None)
            if filename is not None:
                # A cell of its own with the text that a magic's body had shares
                # that body's file, and its offset is its own blank lines, none
                # or some.
                self._note_offset(filename, blank)

    def _note_source(self, raw_cell: str, cell_id: str) -> None:
        # str caches its hash, so this costs one pass over a new source only.
        key = hash(raw_cell)
        cells = self._source_cells.get(key)
        if cells is None:
            if len(self._source_cells) >= MAX_NOTED_CELLS:
                self._source_cells.pop(next(iter(self._source_cells)))
            self._source_cells[key] = [cell_id]
            return
        if cell_id in cells or len(cells) >= MAX_SAME_CODE_CELLS:
            return
        cells.append(cell_id)
        # A second cell with this source is rare, so the file name is worked
        # out only here.
        filename = self._code_name(raw_cell)
        if filename is not None:
            if len(self._shared_files) >= MAX_NOTED_CELLS:
                self._shared_files.pop(next(iter(self._shared_files)))
            self._shared_files[filename] = cells

    def same_code_cells(self, filename: str) -> list[str] | None:
        """The cells that ran the source compiled under ``filename``, where two or
        more did, or None otherwise."""
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
        """The file name that the shell compiles ``raw_cell`` under.

        ipykernel's names hash the raw source alone. IPython's own names also
        hash the transformed code, which the hook does not see, so those names
        may not match, and then nothing useful is noted.
        """
        try:
            if not isinstance(raw_cell, str):
                return None
            name = self.shell.compile.get_code_name(raw_cell, raw_cell, self.shell.execution_count)
            return name if isinstance(name, str) else None
        except Exception:
            return None

    def raw_line(self, execution_count: int | None, line: int) -> str | None:
        """Line ``line`` of the cell run under ``execution_count`` as the user wrote
        it, from IPython's input history, or None."""
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
        """Prepare a listing. Call it once per listing, so that file names resolve
        against the shell's map as it is at that moment."""
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
        """The ``(execution_count, cell_id)`` of the cell compiled under ``filename``,
        or ``None`` when the file is not a cell."""
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
    """The number of blank lines that IPython drops from the top of a cell before
    compiling it, with its ``leading_empty_lines`` transform. Only those lines
    are read, so a long cell costs no more."""
    if not isinstance(raw_cell, str):
        return 0
    blank = _LEADING_BLANK_LINES.match(raw_cell)
    if blank is None or blank.end() == len(raw_cell):
        # IPython keeps a blank cell whole.
        return 0
    return raw_cell.count("\n", 0, blank.end())


def source_line(filename: str, line: int) -> str | None:
    """The text of ``line`` in ``filename`` as IPython cached it, since cells live
    in linecache, or None."""
    try:
        text = linecache.getline(filename, line)
    except Exception:
        return None
    text = text.strip()
    if not text:
        return None
    return text[:MAX_SOURCE_LINE_CHARS]
