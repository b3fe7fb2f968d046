"""jupyterlab-vram: the JupyterLab side of the package.

This package only tells Jupyter where the prebuilt labextension lives. The code
that runs inside kernels is `jupyterlab_vram_helper`, which the frontend
delivers itself (see docs/protocol.md).
"""

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "dev"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyterlab-vram"}]
