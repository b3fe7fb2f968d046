"""Deliver the kernel helper into a running kernel, from the frontend.

This file is not imported. `scripts/bundle-helper.mjs` embeds it, with the
sources of `jupyterlab_vram_helper`, into the code the frontend executes
silently in every Python kernel. It runs with two globals set by that code:

- `__name__` is `__jupyterlab_vram_bootstrap__`, which the classes defined
  here take as their module's name;
- `BUNDLE_HASH` names the bundle (its code cache folder, and whether a
  kernel already runs it);
- `BUNDLE_MODULES` is the JSON object `{dotted_name: {"package": bool,
  "start": int, "end": int}}`;
- `BUNDLE_Z64` is the base64 of the zlib-compressed text of every module's
  source, one after the other: a module's source is its slice
  `[start:end]`. It is inflated only when a source is needed: a module
  that is not in the code cache, or a traceback's lines. With the code
  cache filled, a kernel never inflates it (that took about 4 ms).

It must leave nothing behind in the user's namespace, which is why it runs in
a private globals dict, and it must raise, not print, on failure, because the
frontend reads the error from the execute reply.

Compiling the helper's modules is about half of the bootstrap's time in a
fresh kernel, while loading them compiled takes a small part of that. So each
module compiled here is also kept, like Python's own ``__pycache__``, in the
user's cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``, then
``jupyterlab-vram/code/<bundle hash>-<Python cache tag>-<bytecode
magic>-o<optimisation level>/``), and the next kernel of the same bundle and
Python loads it from there. Nothing is written where Python would not write
bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``) or with
``JUPYTERLAB_VRAM_CODE_CACHE=0``. A file is loaded only if it belongs to this
user and nobody else may write it, and a cache that cannot be read or written
costs the compile, never the bootstrap. The four most recent folders are kept.
The cache is used on POSIX systems only, because elsewhere a file's mode does
not say who may write it.
"""

import base64
import importlib.abc
import importlib.util
import json
import linecache
import marshal
import os
import shutil
import sys
import tempfile
import types
import zlib

PACKAGE = "jupyterlab_vram_helper"
CODE_CACHE_FOLDERS_KEPT = 4

# The code that executes this file sets BUNDLE_HASH, BUNDLE_MODULES and BUNDLE_Z64 in its
# globals (see scripts/bundle-helper.mjs).
bundle = {"hash": globals()["BUNDLE_HASH"], "modules": json.loads(globals()["BUNDLE_MODULES"])}


class BundleSources:
    """The modules' sources, inflated from BUNDLE_Z64 the first time one is needed."""

    def __init__(self, z64):
        self._z64 = z64
        self._text = None

    def source(self, entry):
        """The source of the module that ``entry`` (of BUNDLE_MODULES) describes."""
        if self._text is None:
            self._text = zlib.decompress(base64.b64decode(self._z64)).decode("utf-8")
        return self._text[entry["start"] : entry["end"]]


class InMemoryHelperFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `jupyterlab_vram_helper.*` from the bundle the frontend sent.

    It goes first on `sys.meta_path`, so the bundle wins over any installed copy
    of the package: the frontend and the helper then always speak the same
    protocol version.
    """

    jupyterlab_vram_bundle_finder = True

    def __init__(self, bundle_hash, modules, sources, code_cache):
        self.bundle_hash = bundle_hash
        self.modules = modules
        # The modules' sources (a BundleSources), inflated only when one is needed.
        self.sources = sources
        # The code cache's folder, or None where the cache is turned off.
        self.code_cache = code_cache
        self.code_cache_writable = code_cache is not None and not sys.dont_write_bytecode
        # The modules loaded from the code cache, in order.
        self.loaded_compiled = []

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
        filename = (
            "<jupyterlab-vram>/" + module.__name__.replace(".", "/") + ("/__init__.py" if entry["package"] else ".py")
        )
        # This lets tracebacks from the helper show their source lines. The entry is lazy (a
        # function that gives the source, as linecache.lazycache makes them): the source is
        # inflated and split only when a traceback needs it.
        linecache.cache[filename] = (lambda: self.sources.source(entry),)
        module.__file__ = filename
        if entry["package"]:
            module.__path__ = []
        code = self._compiled(module.__name__, filename)
        if code is None:
            code = compile(self.sources.source(entry), filename, "exec")
            self._keep_compiled(module.__name__, code)
        exec(code, module.__dict__)

    def _compiled(self, name, filename):
        """The module's code from the code cache, or None."""
        if self.code_cache is None:
            return None
        try:
            with open(os.path.join(self.code_cache, name + ".code"), "rb") as f:
                info = os.fstat(f.fileno())
                # Only this user's file that nobody else can write is loaded, so
                # that the cache cannot be a way into the kernel.
                if info.st_mode & 0o022 or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
                    return None
                code = marshal.loads(f.read())
        except Exception:
            # The file is absent, unreadable, truncated, or another Python's.
            return None
        if type(code) is not types.CodeType or code.co_filename != filename:
            return None
        self.loaded_compiled.append(name)
        return code

    def _keep_compiled(self, name, code):
        if not self.code_cache_writable:
            return
        try:
            if not os.path.isdir(self.code_cache):
                os.makedirs(self.code_cache, mode=0o700)
                _forget_old_code_caches(os.path.dirname(self.code_cache))
            fd, temporary = tempfile.mkstemp(prefix="." + name, suffix=".tmp", dir=self.code_cache)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(marshal.dumps(code))
                # The rename makes the file appear whole or not at all.
                os.replace(temporary, os.path.join(self.code_cache, name + ".code"))
            except BaseException:
                os.unlink(temporary)
                raise
        except Exception:
            # A read-only home, a full disk or a race with another kernel only
            # means that the next kernel compiles again.
            self.code_cache_writable = False


def _code_cache_folder(bundle_hash):
    """This bundle's code cache for this Python, or None where it is turned off."""
    if os.environ.get("JUPYTERLAB_VRAM_CODE_CACHE") == "0" or not sys.implementation.cache_tag:
        return None
    # Elsewhere than on POSIX, a file's mode does not say who may write it.
    if os.name != "posix":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(
        base,
        "jupyterlab-vram",
        "code",
        f"{bundle_hash}-{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}-o{sys.flags.optimize}",
    )


def _forget_old_code_caches(parent):
    """Keep only the most recent folders. The others belong to other bundles,
    which are other versions of the extension."""
    try:
        folders = sorted(
            (entry for entry in os.scandir(parent) if entry.is_dir(follow_symlinks=False)),
            key=lambda entry: entry.stat(follow_symlinks=False).st_mtime,
            reverse=True,
        )
        for entry in folders[CODE_CACHE_FOLDERS_KEPT:]:
            shutil.rmtree(entry.path, ignore_errors=True)
    except OSError:
        pass


def _same_bundle_running():
    helper = sys.modules.get(PACKAGE)
    return helper is not None and getattr(helper, "__bundle_hash__", None) == bundle["hash"]


def _remove_previous_helper():
    helper = sys.modules.get(PACKAGE)
    if helper is not None and hasattr(helper, "uninstall"):
        helper.uninstall()
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "jupyterlab_vram_bundle_finder", False)]


if not _same_bundle_running():
    _remove_previous_helper()
    sys.meta_path.insert(
        0,
        InMemoryHelperFinder(
            bundle["hash"],
            bundle["modules"],
            BundleSources(globals()["BUNDLE_Z64"]),
            _code_cache_folder(bundle["hash"]),
        ),
    )
    # This is the mark that _same_bundle_running reads, an attribute that the
    # bootstrap itself adds to the module.
    importlib.import_module(PACKAGE).__bundle_hash__ = bundle["hash"]  # type: ignore[attr-defined]

sys.modules[PACKAGE].install()
