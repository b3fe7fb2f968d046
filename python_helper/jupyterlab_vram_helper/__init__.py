"""The jupyterlab-vram kernel helper, which measures memory inside the kernel and reports it to the frontend.

The helper runs inside a notebook kernel and pushes memory samples (host RAM,
PyTorch's CUDA caching allocator, NVML, TensorFlow) to the JupyterLab frontend
over the ``jupyterlab-vram`` comm. The wire format is specified in
docs/protocol.md.

The frontend delivers this package itself (see python_helper/kernel_bootstrap.py)
and calls :func:`install`, and it calls :func:`uninstall` before a different
bundle replaces this one. Importing the package does nothing else, because
every side effect (the comm target, the sampler thread, NVML) starts in
:func:`install`.

The package has one subpackage per concern, and each one's ``__init__`` says
more. ``comm/`` talks to the frontend, ``sampling/`` reads the memory figures,
``cells/`` accounts for each cell, ``cleanup/`` answers inspect and delete,
``allocations/`` records allocation sites, ``oom/`` explains out-of-memory
errors, ``estimate/`` predicts a training step's peak before it runs, and
``cluster/`` reads the memory of a Dask or Ray cluster the notebook drives.
The root holds runtime.py, which wires them together at install, and what
they all share: the wire format (protocol.py, protocol_types.py), the
settings (config.py), forking.py and thread_warnings.py. No subpackage imports
one that depends on it, and tests/unit/test_layout.py keeps it so.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Bumped on any incompatible change of the wire format (docs/protocol.md).
# Kept here, not only in protocol.py, so that `jupyterlab_vram_helper.PROTOCOL_VERSION`
# can be read without importing anything else.
PROTOCOL_VERSION = 1

__all__ = ["PROTOCOL_VERSION", "__version__", "install", "uninstall", "get_runtime"]


def install() -> None:
    """Register the comm target and start the sampler.

    It is safe to call any number of times, since one comm target, one sampler
    thread and one set of hooks exist afterwards. It raises on failure, so that
    the frontend reads the error from the execute reply, and it prints nothing.
    """
    from .runtime import install as _install

    _install()


def uninstall() -> None:
    """Stop the sampler, close open comms and unregister the comm target.

    The bootstrap calls it before another bundle of the helper takes over, and
    it runs at interpreter exit. It is safe to call when nothing is installed.
    """
    from .runtime import uninstall as _uninstall

    _uninstall()


# This returns Optional[runtime.Runtime], but it is left unannotated so that
# the annotation does not import runtime.py and imports stay lazy.
def get_runtime():
    """The process-wide :class:`runtime.Runtime`, or ``None`` before install()."""
    from .runtime import current

    return current()
