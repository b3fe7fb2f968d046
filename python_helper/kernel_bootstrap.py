"""Deliver the kernel helper into a running kernel, from the frontend.

This file is not imported. `scripts/bundle-helper.mjs` embeds it, with the
sources of `jupyterlab_vram_helper`, into the code the frontend executes
silently in every Python kernel. It runs with two globals set by that code:

- `BUNDLE_Z64`: base64 of the zlib-compressed JSON object
  `{"hash": str, "modules": {dotted_name: {"source": str, "package": bool}}}`.

It must leave nothing behind in the user's namespace (it runs in a private
globals dict) and must raise, not print, on failure: the frontend reads the
error from the execute reply.
"""

import base64
import importlib.abc
import importlib.util
import json
import linecache
import sys
import zlib

PACKAGE = "jupyterlab_vram_helper"

bundle = json.loads(zlib.decompress(base64.b64decode(BUNDLE_Z64)).decode("utf-8"))  # noqa: F821


class InMemoryHelperFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `jupyterlab_vram_helper.*` from the bundle the frontend sent.

    It goes first on `sys.meta_path`, so the bundle wins over any installed copy
    of the package: the frontend and the helper then always speak the same
    protocol version.
    """

    jupyterlab_vram_bundle_finder = True

    def __init__(self, bundle_hash, modules):
        self.bundle_hash = bundle_hash
        self.modules = modules

    def find_spec(self, fullname, path=None, target=None):
        entry = self.modules.get(fullname)
        if entry is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, is_package=entry["package"])
        spec.has_location = False
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        entry = self.modules[module.__name__]
        filename = "<jupyterlab-vram>/" + module.__name__.replace(".", "/") + (
            "/__init__.py" if entry["package"] else ".py"
        )
        # Lets tracebacks from the helper show their source lines.
        linecache.cache[filename] = (
            len(entry["source"]),
            None,
            entry["source"].splitlines(True),
            filename,
        )
        module.__file__ = filename
        if entry["package"]:
            module.__path__ = []
        exec(compile(entry["source"], filename, "exec"), module.__dict__)


def _same_bundle_running():
    helper = sys.modules.get(PACKAGE)
    return helper is not None and getattr(helper, "__bundle_hash__", None) == bundle["hash"]


def _remove_previous_helper():
    helper = sys.modules.get(PACKAGE)
    if helper is not None and hasattr(helper, "uninstall"):
        helper.uninstall()
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    sys.meta_path[:] = [
        f for f in sys.meta_path if not getattr(f, "jupyterlab_vram_bundle_finder", False)
    ]


if not _same_bundle_running():
    _remove_previous_helper()
    sys.meta_path.insert(0, InMemoryHelperFinder(bundle["hash"], bundle["modules"]))
    importlib.import_module(PACKAGE).__bundle_hash__ = bundle["hash"]

sys.modules[PACKAGE].install()
