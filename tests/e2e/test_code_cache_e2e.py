"""The bootstrap's code cache, in real kernels: compiled once, loaded after, never trusted blindly.

Each test points ``XDG_CACHE_HOME`` at its own folder and allows bytecode
writing (this environment may forbid it through ``PYTHONDONTWRITEBYTECODE``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import Kernel, attach_helper, snapshot_sample

pytestmark = pytest.mark.kernel

FINDER = "next(f for f in __import__('sys').meta_path if getattr(f, 'jupyterlab_vram_bundle_finder', False))"
HELPER_MODULES = "sorted(n for n in __import__('sys').modules if n.startswith('jupyterlab_vram_helper'))"


def cache_env(cache_home: Path, **extra: str) -> dict[str, str]:
    env = {"XDG_CACHE_HOME": str(cache_home), "PYTHONDONTWRITEBYTECODE": "", "JUPYTERLAB_VRAM_CODE_CACHE": ""}
    env.update(extra)
    return env


def code_files(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "jupyterlab-vram" / "code").glob("*/*.code"))


def boot(env: dict[str, str], bootstrap: str) -> dict[str, Any]:
    """Bootstrap a fresh kernel, check the helper works, and say what the loader did."""
    kernel = Kernel(env=env)
    try:
        comm_id = attach_helper(kernel, bootstrap)
        sample = snapshot_sample(kernel, comm_id, "cache")
        assert sample["host"]["rss_bytes"] > 0  # the helper really runs
        return {
            "loaded_compiled": kernel.eval(f"{FINDER}.loaded_compiled"),
            "modules": kernel.eval(HELPER_MODULES),
            "writable": kernel.eval(f"{FINDER}.code_cache_writable"),
        }
    finally:
        kernel.shutdown()


def test_the_first_kernel_compiles_and_keeps_the_code_the_next_loads_it(tmp_path: Path, bootstrap: str) -> None:
    first = boot(cache_env(tmp_path), bootstrap)
    assert first["loaded_compiled"] == []
    files = code_files(tmp_path)
    assert sorted(f.stem for f in files) == first["modules"]  # one file per module imported
    for f in files:
        assert f.stat().st_mode & 0o777 == 0o600  # this user's alone
    (folder,) = {f.parent for f in files}
    assert folder.stat().st_mode & 0o777 == 0o700
    second = boot(cache_env(tmp_path), bootstrap)
    assert sorted(second["loaded_compiled"]) == second["modules"] == first["modules"]


def test_a_damaged_or_foreign_writable_file_is_compiled_again_and_replaced(tmp_path: Path, bootstrap: str) -> None:
    boot(cache_env(tmp_path), bootstrap)
    files = {f.stem: f for f in code_files(tmp_path)}
    damaged = files["jupyterlab_vram_helper.comm.channel"]
    damaged.write_bytes(damaged.read_bytes()[:40])  # truncated
    writable = files["jupyterlab_vram_helper.sampling.sampler"]
    writable.chmod(0o666)  # anyone could have put code there
    again = boot(cache_env(tmp_path), bootstrap)
    assert "jupyterlab_vram_helper.comm.channel" not in again["loaded_compiled"]
    assert "jupyterlab_vram_helper.sampling.sampler" not in again["loaded_compiled"]
    assert len(again["loaded_compiled"]) == len(again["modules"]) - 2
    assert writable.stat().st_mode & 0o777 == 0o600  # replaced by a file of ours
    third = boot(cache_env(tmp_path), bootstrap)
    assert sorted(third["loaded_compiled"]) == third["modules"]  # and both load again


def test_no_bytecode_writing_writes_nothing_and_turned_off_reads_nothing(tmp_path: Path, bootstrap: str) -> None:
    quiet = boot(cache_env(tmp_path, PYTHONDONTWRITEBYTECODE="1"), bootstrap)
    assert quiet["writable"] is False and code_files(tmp_path) == []
    boot(cache_env(tmp_path), bootstrap)  # fill it
    assert code_files(tmp_path), "nothing cached: turned off, it would have had nothing to read anyway"
    off = boot(cache_env(tmp_path, JUPYTERLAB_VRAM_CODE_CACHE="0"), bootstrap)
    assert off["loaded_compiled"] == []


def test_a_cache_that_cannot_be_written_costs_only_the_compile(tmp_path: Path, bootstrap: str) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("the cache home is a file")
    result = boot(cache_env(not_a_folder), bootstrap)
    assert result["writable"] is False and result["loaded_compiled"] == []


def test_only_the_most_recent_cache_folders_are_kept(tmp_path: Path, bootstrap: str) -> None:
    code = tmp_path / "jupyterlab-vram" / "code"
    old = []
    for age in range(5):  # other bundles (other versions of the extension), oldest last
        folder = code / f"{age:016x}-cpython-311-00000000-o0"
        folder.mkdir(parents=True)
        (folder / "jupyterlab_vram_helper.code").write_bytes(b"")
        stamp = time.time() - 3600 * (age + 1)
        os.utime(folder, (stamp, stamp))
        old.append(folder.name)
    boot(cache_env(tmp_path), bootstrap)
    kept = sorted(p.name for p in code.iterdir())
    assert len(kept) == 4 and set(old[:3]) < set(kept)  # ours and the three most recent others
