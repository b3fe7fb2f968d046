"""What holds memory: tensors, modules, optimizers, arrays, byte buffers and containers of them.

Used by the ``inspect`` and ``delete`` requests (cleanup.py). Nothing here
imports torch or NumPy: the classes come from ``sys.modules`` (if the user never
imported torch, no object can be a tensor). Nothing here keeps a reference to a
user object after a call returns: results are numbers, names and strings.

Memory is counted per *storage* (storages.py), so bytes are counted once.

Every walk is bounded (items per container, items per request, container
depth), so an odd namespace costs milliseconds, not a hang.
"""

from __future__ import annotations

import array
import collections
import sys
import types
from typing import Any, Dict, Iterable, List, Optional, Tuple

from .autograd_graph import MAX_GRAPH_ROOTS, graph_root
from .storages import Storages, tensor_storage

# Bounds of one walk.
ITEMS_PER_CONTAINER = 1000  # items of one list/dict/... looked at
ITEMS_PER_REQUEST = 200_000  # items looked at in one inspect, over everything

_SKIPPED_TYPES = frozenset(
    {
        int, float, complex, bool, str, type(None), range, slice,
        types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
        type, property, staticmethod, classmethod, type(Ellipsis), type(NotImplemented),
    }
)
_CONTAINER_TYPES = (list, tuple, dict, set, frozenset, collections.deque)
# Raw bytes in Python objects (file contents, decoded images, buffers for
# NumPy or torch.frombuffer): listed from this size on, so that the short
# bytes constants of every namespace do not crowd the list.
_BYTES_TYPES = (bytes, bytearray, memoryview, array.array)
MIN_BYTES_LISTED = 64 * 1024

# "other" objects: attributes are looked at, except of objects from these
# packages (the shell itself reaches the whole user namespace).
_OPAQUE_MODULE_PREFIXES = (
    "IPython", "ipykernel", "traitlets", "zmq", "tornado", "jupyter_client", "comm",
    "asyncio", "threading", "logging", "builtins", "jupyterlab_vram_helper", "_pytest",
    "pytest", "torch", "numpy", "tensorflow", "keras", "pandas", "matplotlib",
)


class Budget:
    def __init__(self, items: int = ITEMS_PER_REQUEST):
        self.left = items
        self.exhausted = False

    def take(self, n: int = 1) -> bool:
        if self.left < n:
            self.exhausted = True
            return False
        self.left -= n
        return True


class Classes:
    """The user's torch/NumPy classes, looked up once per request (never imported)."""

    def __init__(self, modules: Optional[Dict[str, Any]] = None):
        modules = sys.modules if modules is None else modules
        torch = modules.get("torch")
        self.tensor = _cls(torch, "Tensor")
        self.module = _cls(modules.get("torch.nn.modules.module"), "Module") or _cls(
            getattr(torch, "nn", None) if "torch.nn" in modules else None, "Module"
        )
        self.optimizer = _cls(modules.get("torch.optim.optimizer"), "Optimizer") or _cls(
            getattr(torch, "optim", None) if "torch.optim" in modules else None, "Optimizer"
        )
        self.ndarray = _cls(modules.get("numpy"), "ndarray")
        self._kinds: Dict[type, str] = {}

    def kind(self, obj: Any) -> str:
        """'tensor', 'module', 'optimizer', 'ndarray', 'bytes', 'container', 'object' or 'skip'."""
        t = type(obj)
        try:
            return self._kinds[t]
        except KeyError:
            pass
        except Exception:  # a metatype that cannot be hashed (or raises when it is)
            return "skip"
        kind = self._classify(t)
        self._kinds[t] = kind
        return kind

    def _classify(self, t: type) -> str:
        try:
            if t in _SKIPPED_TYPES:
                return "skip"
            if self.tensor is not None and issubclass(t, self.tensor):
                return "tensor"
            if self.module is not None and issubclass(t, self.module):
                return "module"
            if self.optimizer is not None and issubclass(t, self.optimizer):
                return "optimizer"
            if self.ndarray is not None and issubclass(t, self.ndarray):
                return "ndarray"
            if issubclass(t, _BYTES_TYPES):
                return "bytes"
            if issubclass(t, _CONTAINER_TYPES):
                return "container"
            if issubclass(t, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
                return "skip"
            module = getattr(t, "__module__", None) or ""
            if type(module) is not str or module.startswith(_OPAQUE_MODULE_PREFIXES):
                return "skip"
            if "__dict__" not in _mro_dicts(t) and not _slot_descriptors(t):
                return "skip"
        except Exception:  # a metaclass that raises when its classes are looked at
            return "skip"
        return "object"


def _mro_dicts(t: type) -> Iterable[str]:
    for base in getattr(t, "__mro__", ()):
        yield from getattr(base, "__dict__", {})


def _cls(module: Any, name: str) -> Optional[type]:
    if module is None:
        return None
    try:
        value = getattr(module, name, None)
    except Exception:
        return None
    return value if isinstance(value, type) else None


# --- sizing -----------------------------------------------------------------


class Found:
    """What one walk found: storages, and counts for the summary."""

    __slots__ = ("storages", "tensors", "arrays", "byte_objects", "modules", "optimizers", "params", "buffers",
                 "grads", "state_tensors", "probes", "graph_tensors", "graph_roots", "referenced")

    def __init__(self) -> None:
        self.storages: Storages = {}
        self.tensors = 0
        self.arrays = 0
        self.byte_objects = 0  # bytes, bytearray, memoryview, array.array of MIN_BYTES_LISTED or more
        self.modules = 0
        self.optimizers = 0
        self.params = 0
        self.buffers = 0
        self.grads = 0
        self.state_tensors = 0
        self.probes: Optional[List[Any]] = None  # when set: weakrefable leaves are appended
        # Tensors that keep an autograd graph alive, and their graph's roots (grad_fn
        # nodes): held only until autograd_graph.walk_graphs() has walked them.
        self.graph_tensors = 0
        self.graph_roots: List[Any] = []
        # Storages it refers to without counting them (an optimizer's parameters:
        # the model's to count), so that no graph is said to hold them alone.
        self.referenced: Storages = {}

    @property
    def total(self) -> int:
        return sum(self.storages.values())

    def leaves(self) -> int:
        return self.tensors + self.arrays + self.byte_objects


class Sizer:
    def __init__(self, classes: Classes, budget: Optional[Budget] = None):
        self.classes = classes
        self.budget = budget if budget is not None else Budget()

    # One object, any kind. ``depth``: how many container levels to open.
    def walk(self, obj: Any, found: Found, depth: int, seen: Optional[set] = None, objects: bool = False) -> None:
        kind = self.classes.kind(obj)
        if kind == "skip":
            return
        if seen is None:
            seen = set()
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if not self.budget.take():
            return
        try:
            if kind == "tensor":
                self.tensor(obj, found)
            elif kind == "ndarray":
                self.array(obj, found)
            elif kind == "bytes":
                self.byte_object(obj, found)
            elif kind == "module":
                self.module(obj, found)
            elif kind == "optimizer":
                self.optimizer(obj, found)
            elif kind == "container" and depth > 0:
                for item in _items(obj):
                    if not self.budget.take():
                        break
                    self.walk(item, found, depth - 1, seen)
            elif kind == "object" and objects and depth > 0:
                attrs = _instance_dict(obj)
                for item in (_items(attrs) if attrs is not None else []) + _slot_values(obj):
                    if not self.budget.take():
                        break
                    self.walk(item, found, depth - 1, seen)
        except Exception:
            pass  # an exotic object: count what was found so far

    def tensor(self, t: Any, found: Found, grad: bool = True) -> None:
        found.tensors += 1
        _probe(found, t)
        tensor_storage(t, found.storages)
        root = graph_root(t)
        if root is not None:
            found.graph_tensors += 1
            if len(found.graph_roots) < MAX_GRAPH_ROOTS:
                found.graph_roots.append(root)
        if grad:
            g = _leaf_grad(t)
            if g is not None:
                found.grads += 1
                tensor_storage(g, found.storages)

    def array(self, a: Any, found: Found) -> None:
        found.arrays += 1
        _probe(found, a)
        root = a
        ndarray, tensor = self.classes.ndarray, self.classes.tensor
        for _ in range(64):
            base = getattr(root, "base", None)
            if base is None:
                break
            kind = type(base)
            if ndarray is not None and issubclass(kind, ndarray):
                root = base
                continue
            if tensor is not None and issubclass(kind, tensor):
                tensor_storage(base, found.storages)  # t.numpy(): the tensor owns the memory
                return
            if issubclass(kind, _BYTES_TYPES):
                # np.frombuffer(raw): the bytes object's memory, under its key
                key, size = bytes_storage(base)
                found.storages[key] = max(size, found.storages.get(key, 0))
                return
            inner = getattr(base, "base", None) if kind.__name__ == "DummyArray" else None
            if ndarray is not None and inner is not None and issubclass(type(inner), ndarray):
                # as_strided, sliding_window_view: NumPy puts a DummyArray between
                # the view and its array, and the view's nbytes is its virtual size
                root = inner
                continue
            break
        nbytes = int(root.nbytes)
        if nbytes <= 0:
            return
        try:
            ptr = root.__array_interface__["data"][0]
        except Exception:
            ptr = ("id", id(root))
        found.storages[("cpu", ptr)] = nbytes

    def byte_object(self, b: Any, found: Found) -> None:
        key, size = bytes_storage(b)
        if size < MIN_BYTES_LISTED:
            return
        found.byte_objects += 1
        _probe(found, b)
        found.storages[key] = size

    def module(self, m: Any, found: Found) -> None:
        found.modules += 1
        _probe(found, m)
        for p in m.parameters():
            if not self.budget.take():
                return
            found.params += 1
            self.tensor(p, found)
            found.tensors -= 1
        for b in m.buffers():
            if not self.budget.take():
                return
            found.buffers += 1
            self.tensor(b, found, grad=False)
            found.tensors -= 1

    def optimizer(self, opt: Any, found: Found) -> None:
        found.optimizers += 1
        _probe(found, opt)
        state = getattr(opt, "state", None)
        if not isinstance(state, dict):
            return
        for group in list(getattr(opt, "param_groups", None) or ())[:ITEMS_PER_CONTAINER]:
            params = group.get("params") if type(group) is dict else None
            for p in list(params)[:ITEMS_PER_CONTAINER * 10] if type(params) in (list, tuple) else ():
                if not self.budget.take():
                    return
                if self.classes.kind(p) == "tensor":
                    tensor_storage(p, found.referenced)
                    g = _leaf_grad(p)  # a parameter keeps its grad: the optimizer keeps both alive
                    if g is not None:
                        tensor_storage(g, found.referenced)
        for per_param in list(state.values())[:ITEMS_PER_CONTAINER * 10]:
            if not isinstance(per_param, dict):
                continue
            for value in per_param.values():
                if not self.budget.take():
                    return
                if self.classes.kind(value) == "tensor":
                    found.state_tensors += 1
                    tensor_storage(value, found.storages)


def _probe(found: Found, obj: Any) -> None:
    if found.probes is not None and len(found.probes) < 64:
        found.probes.append(obj)


def _items(obj: Any) -> List[Any]:
    """At most ITEMS_PER_CONTAINER items (dict: values), without running user code."""
    if isinstance(obj, dict):
        out: List[Any] = []
        for value in dict.values(obj):
            out.append(value)
            if len(out) >= ITEMS_PER_CONTAINER:
                break
        return out
    if isinstance(obj, (list, tuple)):
        return list(obj[:ITEMS_PER_CONTAINER]) if type(obj) in (list, tuple) else list(
            (list.__getitem__ if isinstance(obj, list) else tuple.__getitem__)(obj, slice(0, ITEMS_PER_CONTAINER))
        )
    if isinstance(obj, (set, frozenset)):
        out = []
        for value in obj:
            out.append(value)
            if len(out) >= ITEMS_PER_CONTAINER:
                break
        return out
    if isinstance(obj, collections.deque):  # a history kept with maxlen, often
        out = []
        for value in collections.deque.__iter__(obj):
            out.append(value)
            if len(out) >= ITEMS_PER_CONTAINER:
                break
        return out
    return []


def _slot_descriptors(t: type) -> List[Any]:
    """The member descriptors of the ``__slots__`` of ``t`` and its bases (a slotted
    class or ``@dataclass(slots=True)`` keeps its attributes there, not in a __dict__)."""
    out: List[Any] = []
    for cls in getattr(t, "__mro__", ()):
        namespace = type.__getattribute__(cls, "__dict__")
        slots = namespace.get("__slots__", ())
        for name in (slots,) if type(slots) is str else slots if type(slots) in (tuple, list) else ():
            if type(name) is not str or name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{cls.__name__.lstrip('_')}{name}"  # a private slot is stored mangled
            descriptor = namespace.get(name)
            if type(descriptor) is types.MemberDescriptorType:
                out.append(descriptor)
    return out


def _slot_values(obj: Any) -> List[Any]:
    """What ``obj``'s slots hold (unset ones left out), read without running user code."""
    out: List[Any] = []
    for descriptor in _slot_descriptors(type(obj))[:ITEMS_PER_CONTAINER]:
        try:
            out.append(descriptor.__get__(obj))
        except AttributeError:
            pass
    return out


def _instance_dict(obj: Any) -> Optional[dict]:
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except Exception:
        return None
    return attrs if type(attrs) is dict else None


def _leaf_grad(t: Any) -> Any:
    # .grad of a non-leaf tensor warns; only leaves that require grad have one.
    try:
        if t.requires_grad and t.is_leaf:
            return t.grad
    except Exception:
        pass
    return None


# --- summaries ----------------------------------------------------------------


def tensor_summary(t: Any) -> str:
    try:
        dtype = str(t.dtype).replace("torch.", "")
        shape = ", ".join(str(int(d)) for d in t.shape)
        return f"{dtype}[{shape}] {t.device}"
    except Exception:
        return type(t).__name__


def array_summary(a: Any) -> str:
    try:
        shape = ", ".join(str(int(d)) for d in a.shape)
        view = " (view)" if a.base is not None else ""
        return f"{a.dtype}[{shape}] cpu{view}"
    except Exception:
        return type(a).__name__


def bytes_storage(b: Any) -> Tuple[Any, int]:
    """A bytes-like object's storage key and size: a memoryview counts the object it
    views (once, however many views), an array.array its buffer, bytes and bytearray
    themselves (a bytearray with the room it has grown)."""
    if isinstance(b, memoryview):
        owner = b.obj
        if isinstance(owner, (bytes, bytearray, array.array)):
            return bytes_storage(owner)
        return ("cpu", ("id", id(owner))), int(b.nbytes)
    if isinstance(b, array.array):
        address, length = b.buffer_info()
        return ("cpu", address), length * b.itemsize
    return ("cpu", ("id", id(b))), sys.getsizeof(b)


def bytes_summary(b: Any) -> str:
    try:
        return f"{type(b).__name__}[{len(b):,}]"
    except Exception:
        return type(b).__name__


def plural(n: int, word: str, words: Optional[str] = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"


def module_summary(m: Any, found: Found) -> str:
    return f"{type(m).__name__}: {plural(found.params, 'param')}, {plural(found.buffers, 'buffer')}, {plural(found.grads, 'grad')}"


def optimizer_summary(opt: Any, found: Found) -> str:
    return f"{type(opt).__name__}: {plural(found.state_tensors, 'state tensor')}"


def contents_summary(found: Found) -> str:
    parts = []
    if found.tensors:
        parts.append(plural(found.tensors, "tensor"))
    if found.arrays:
        parts.append(plural(found.arrays, "array"))
    if found.byte_objects:
        parts.append(plural(found.byte_objects, "bytes object"))
    if found.modules:
        parts.append(plural(found.modules, "module"))
    if found.optimizers:
        parts.append(plural(found.optimizers, "optimizer"))
    return ", ".join(parts) if parts else "nothing that holds memory"
