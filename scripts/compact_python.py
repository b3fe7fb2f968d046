"""Strip docstrings and comments from Python sources, keeping every line where it was.

Used by scripts/bundle-helper.mjs to make the kernel helper travel compact
inside the labextension. Lines keep their numbers (a docstring becomes
``pass`` and blank lines, a comment disappears), so a traceback from the
helper in a kernel points at the same line of the repository's source.

    python scripts/compact_python.py < {"name": "source", ...} (JSON)  > {"name": "compact source", ...}

Each result is compiled before it is returned: a source that this would break
fails the build instead of a kernel.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import tokenize

Span = tuple[int, int, int, int]  # start line, start column, end line, end column (lines from 1)


def _docstrings(tree: ast.AST, lines: list[str]) -> list[tuple[Span, str]]:
    """Each docstring's span, and what replaces it: ``pass`` where it is a body's only statement."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            assert first.end_lineno is not None and first.end_col_offset is not None
            span = (
                first.lineno,
                _column(lines[first.lineno - 1], first.col_offset),
                first.end_lineno,
                _column(lines[first.end_lineno - 1], first.end_col_offset),
            )
            alone = len(node.body) == 1 and not isinstance(node, ast.Module)
            found.append((span, "pass" if alone else ""))
    return found


def _column(line: str, utf8_offset: int) -> int:
    """The character column of ``ast``'s column, which counts UTF-8 bytes (an
    "…" before it is three), where the lines are cut by characters."""
    return len(line.encode("utf-8")[:utf8_offset].decode("utf-8", "replace"))


def _comment_spans(source: str) -> list[Span]:
    spans = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            (line, start), (_, end) = token.start, token.end
            spans.append((line, start, line, end))
    return spans


def compact(source: str, name: str = "<source>") -> str:
    """``source`` without docstrings and comments, each line at its old number."""
    lines = source.splitlines(True)
    edits = _docstrings(ast.parse(source), lines) + [(span, "") for span in _comment_spans(source)]
    # From the end, so that earlier spans keep their coordinates.
    for (first, start, last, end), replacement in sorted(edits, reverse=True):
        merged = lines[first - 1][:start] + replacement + "\n" * (last - first) + lines[last - 1][end:]
        lines[first - 1 : last] = merged.splitlines(True)
    text = "".join(line.rstrip() + "\n" if line.endswith("\n") else line.rstrip() for line in lines)
    if text.count("\n") != source.count("\n"):
        raise ValueError(f"{name}: compacting moved lines")
    compile(text, name, "exec")
    return text


def main() -> None:
    sources: dict[str, str] = json.load(sys.stdin)
    json.dump({name: compact(text, name) for name, text in sources.items()}, sys.stdout)


if __name__ == "__main__":
    main()
