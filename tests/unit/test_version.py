"""The version has one source, package.json: what else states it must agree."""

from __future__ import annotations

import json
from pathlib import Path

import jupyterlab_vram_helper

ROOT = Path(__file__).resolve().parents[2]


def test_the_kernel_helper_states_package_json_s_version() -> None:
    # The wheel takes its version from package.json (hatch-nodejs-version); the
    # helper, delivered into kernels without our package, states its own.
    version = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["version"]
    assert jupyterlab_vram_helper.__version__ == version


def test_the_changelog_has_an_entry_for_this_version() -> None:
    version = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["version"]
    assert f"## [{version}]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
