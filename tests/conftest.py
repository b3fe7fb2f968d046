"""Fixtures shared by the tests. The markers `kernel` and `cuda` are declared in pyproject.toml."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The frontend delivers the helper into kernels, so it is not pip-installed, and
# the unit tests import it straight from the source tree.
sys.path.insert(0, str(ROOT / "python_helper"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_harness import Kernel, bootstrap_code  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def code_cache_out_of_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Kernels started by tests keep the helper's compiled code (kernel_bootstrap.py) in a
    temporary folder, not in the user's cache directory."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(scope="session")
def bootstrap() -> str:
    if shutil.which("node") is None and not os.environ.get("VRAM_BOOTSTRAP_FILE"):
        pytest.skip("node is needed to generate the bootstrap code (scripts/bundle-helper.mjs)")
    return bootstrap_code()


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    """A fresh ipykernel running this interpreter, shut down after the test."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    k = Kernel()
    try:
        yield k
    finally:
        k.shutdown()
