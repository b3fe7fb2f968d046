"""The helper travels compacted (scripts/compact_python.py): every line at its number, still Python."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parents[2]
HELPER = ROOT / "python_helper" / "jupyterlab_vram_helper"


def _compactor() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compact_python", ROOT / "scripts" / "compact_python.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docstrings_after_and_holding_non_ascii_text_go_whole() -> None:
    source = (
        "def f() -> str:\n"
        '    """Looked up for the first 20 only… then “N more”."""\n'
        "\n"
        "def g():\n"
        '    text = "é"; """not a docstring"""  # a comment after “quotes”\n'
        "    return text\n"
    )
    compacted = _compactor().compact(source)
    assert compacted.splitlines() == [
        "def f() -> str:",
        "    pass",
        "",
        "def g():",
        '    text = "é"; """not a docstring"""',
        "    return text",
    ]


def test_every_helper_module_compacts_to_the_same_lines() -> None:
    compact = _compactor().compact
    paths = sorted(HELPER.rglob("*.py"))
    assert len(paths) > 10, HELPER  # the helper's modules were found: the loop below checks something
    for path in paths:
        source = path.read_text(encoding="utf-8")
        compacted = compact(source, str(path))  # compiles it, and checks the line count
        assert compacted.count("\n") == source.count("\n"), path
