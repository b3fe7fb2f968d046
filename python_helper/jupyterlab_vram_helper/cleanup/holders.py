"""Finds what holds memory: tensors, modules, optimizers, arrays, byte buffers, and containers of them.

Used by the ``inspect`` and ``delete`` requests (cleanup.py). Nothing here
imports torch or NumPy: the classes come from ``sys.modules`` (if the user never
imported torch, no object can be a tensor). Nothing here keeps a reference to a
user object after a call returns: results are numbers, names and strings.

Memory is counted per *storage* (storages.py), so bytes are counted once.

Every walk is bounded (items per container, items per request, container
depth), so an odd namespace costs milliseconds, not a hang.

No user code runs while objects are looked at (safe_reads.py, torch_reads.py):
no property, no overridden ``__sizeof__``/``__len__``/``__iter__``/
``parameters()``, no ``__torch_function__``, no lazy proxy's factory.
"""

from __future__ import annotations

import array
import collections
import sys
import types
from typing import Any

from ..sampling.safe_reads import (
    c_call,
    c_get,
    container_items,
    dict_descriptor,
    getsizeof,
    inline_attributes,
    instance_dict,
    mro,
    own_namespace,
    referents,
    type_module,
    type_name,
)
from ..sampling.torch_reads import TorchReads, current, module_members
from .autograd_graph import MAX_GRAPH_ROOTS, graph_root
from .storages import Storages, add_tensor_storage, tensor_storage

# The bounds of one walk: how many items of one list, dict or other container are looked
# at, and how many items one inspect looks at in all.
ITEMS_PER_CONTAINER = 1000
ITEMS_PER_REQUEST = 200_000

# The skipped types are kept by id, because ``t in a_set`` would hash ``t``, and a
# metaclass's __hash__ is user code.
_SKIPPED_TYPE_IDS = frozenset(
    id(t)
    for t in (
        int,
        float,
        complex,
        bool,
        str,
        type(None),
        range,
        slice,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.MethodType,
        types.ModuleType,
        type,
        property,
        staticmethod,
        classmethod,
        type(Ellipsis),
        type(NotImplemented),
    )
)
_CONTAINER_TYPES = (list, tuple, dict, set, frozenset, collections.deque)
# Raw bytes in Python objects (file contents, decoded images, buffers for
# NumPy or torch.frombuffer) are listed from this size on, so that the short
# bytes constants of every namespace do not crowd the list.
_BYTES_TYPES = (bytes, bytearray, memoryview, array.array)
MIN_BYTES_LISTED = 64 * 1024

# The attributes of "other" objects are looked at, except for objects from these
# packages. The shell itself, for example, reaches the whole user namespace.
_OPAQUE_MODULE_PREFIXES = (
    "IPython",
    "ipykernel",
    "traitlets",
    "zmq",
    "tornado",
    "jupyter_client",
    "comm",
    "asyncio",
    "threading",
    "logging",
    "builtins",
    "jupyterlab_vram_helper",
    "_pytest",
    "pytest",
    "torch",
    "numpy",
    "tensorflow",
    "keras",
    "pandas",
    "matplotlib",
)


class Budget:
    """How many more items one ``inspect`` may look at, so that a huge namespace cannot stall the kernel."""

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
    """The user's torch and NumPy classes, looked up once per request and never imported."""

    def __init__(self, modules: dict[str, Any] | None = None):
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
        # Maps id(type) to the type, its kind, and for an "object" how its attributes are
        # read. The type is kept so that its id is not reused while this map lives. The map
        # is keyed by id because a type as a key would be hashed and compared by its
        # metaclass, which is user code.
        self._kinds: dict[int, tuple[type, str, str]] = {}

    def kind(self, obj: Any) -> str:
        """Return the kind of ``obj``.

        The kind is 'tensor', 'module', 'optimizer', 'ndarray', 'bytes', 'container', 'object' or 'skip'.
        """
        return self._entry(type(obj))[1]

    def attribute_values(self, obj: Any) -> tuple[list[Any], bool]:
        """Return what an "object" holds in its attributes, and whether those may be what it wraps.

        The values are at most ITEMS_PER_CONTAINER of its ``__dict__``, and its
        slots, read without running its code (see safe_reads.py). They may be
        what the object wraps when it is a proxy.
        """
        if self._entry(type(obj))[2] == _REFERENTS:
            # Only the object's own code can read its __dict__, and a lazy proxy's code runs
            # the factory. What its C traversal reports is used instead: its slots and dict,
            # and among them the object it wraps once that is made. It is never made here.
            return referents(obj, ITEMS_PER_CONTAINER), True
        # On Python 3.11 and later, this reads inline attributes without making a __dict__.
        inline = inline_attributes(obj, ITEMS_PER_CONTAINER)
        if inline is not None:
            return inline, False
        attrs = instance_dict(obj)
        return (container_items(attrs, ITEMS_PER_CONTAINER) if attrs is not None else []) + _slot_values(obj), False

    def _entry(self, t: type) -> tuple[type, str, str]:
        entry = self._kinds.get(id(t))
        if entry is None:
            entry = (t, *self._classify(t))
            self._kinds[id(t)] = entry
        return entry

    def _classify(self, t: type) -> tuple[str, str]:
        """Return the kind of ``t``, and for an "object" how its attributes are read (_INSTANCE_DICT or _REFERENTS)."""
        try:
            if id(t) in _SKIPPED_TYPE_IDS:
                return "skip", ""
            if self.tensor is not None and issubclass(t, self.tensor):
                return "tensor", ""
            if self.module is not None and issubclass(t, self.module):
                return "module", ""
            if self.optimizer is not None and issubclass(t, self.optimizer):
                return "optimizer", ""
            if self.ndarray is not None and issubclass(t, self.ndarray):
                return "ndarray", ""
            if issubclass(t, _BYTES_TYPES):
                return "bytes", ""
            if issubclass(t, _CONTAINER_TYPES):
                return "container", ""
            if issubclass(t, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
                return "skip", ""
            module = type_module(t) or ""
            if type(module) is not str or module.startswith(_OPAQUE_MODULE_PREFIXES):
                return "skip", ""
            has_dict, descriptor = dict_descriptor(t)
            if has_dict and descriptor is None:
                # wrapt's proxies, for example, have a C __dict__ that makes the wrapped object.
                return "object", _REFERENTS
            if not has_dict and not _slot_descriptors(t):
                return "skip", ""
        except Exception:  # A metaclass may raise when its classes are looked at.
            return "skip", ""
        return "object", _INSTANCE_DICT


_INSTANCE_DICT = "instance_dict"
_REFERENTS = "referents"


def _cls(module: Any, name: str) -> type | None:
    if module is None:
        return None
    try:
        value = getattr(module, name, None)
    except Exception:
        return None
    return value if isinstance(value, type) else None


# --- sizing -----------------------------------------------------------------


class Found:
    """What one walk found: the storages, and the counts that the summary gives."""

    __slots__ = (
        "storages",
        "tensors",
        "arrays",
        "byte_objects",
        "modules",
        "optimizers",
        "params",
        "buffers",
        "grads",
        "state_tensors",
        "probes",
        "graph_tensors",
        "graph_roots",
        "referenced",
    )

    def __init__(self) -> None:
        self.storages: Storages = {}
        self.tensors = 0
        self.arrays = 0
        # The bytes, bytearray, memoryview and array.array objects of MIN_BYTES_LISTED or more.
        self.byte_objects = 0
        self.modules = 0
        self.optimizers = 0
        self.params = 0
        self.buffers = 0
        self.grads = 0
        self.state_tensors = 0
        # When this is a list, the leaves that take weak references are appended to it.
        self.probes: list[Any] | None = None
        # The tensors that keep an autograd graph alive, and their graph's roots (grad_fn
        # nodes). The roots are held only until autograd_graph.walk_graphs() has walked them.
        self.graph_tensors = 0
        self.graph_roots: list[Any] = []
        # The storages that the object refers to without counting them, such as an
        # optimizer's parameters, which are the model's to count. They are kept so that no
        # graph is said to hold them alone.
        self.referenced: Storages = {}

    @property
    def total(self) -> int:
        return sum(self.storages.values())

    def leaves(self) -> int:
        return self.tensors + self.arrays + self.byte_objects


class Sizer:
    """Walks objects and containers and adds up the storages they reach."""

    def __init__(self, classes: Classes, budget: Budget | None = None):
        self.classes = classes
        self.budget = budget if budget is not None else Budget()

    # Walks one object of any kind; ``depth`` is how many container levels to open.
    def walk(self, obj: Any, found: Found, depth: int, seen: set | None = None, objects: bool = False) -> None:
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
                for item in container_items(obj, ITEMS_PER_CONTAINER):
                    if not self.budget.take():
                        break
                    self.walk(item, found, depth - 1, seen)
            elif kind == "object" and objects and depth > 0:
                values, wrapped = self.classes.attribute_values(obj)
                for item in values:
                    if not self.budget.take():
                        break
                    # A proxy's wrapped object is looked into as the proxy itself would be.
                    self.walk(item, found, depth - 1, seen, objects=wrapped)
        except KeyboardInterrupt:
            raise
        except BaseException:
            # An exotic object, even one whose code would raise SystemExit if any of it ran,
            # costs only its own count, not the request or the kernel.
            pass

    def tensor(self, t: Any, found: Found, grad: bool = True) -> None:
        found.tensors += 1
        _probe(found, t)
        torch = current()
        if torch is None or not torch.is_tensor(t):
            return
        # TensorBase's C getters are used with torch function handling off, so that a
        # subclass's __torch_function__, or a TorchFunctionMode, never runs.
        with torch.off():
            add_tensor_storage(torch, t, found.storages)
            root = graph_root(t, torch)
            if root is not None:
                found.graph_tensors += 1
                if len(found.graph_roots) < MAX_GRAPH_ROOTS:
                    found.graph_roots.append(root)
            g = _leaf_grad(torch, t) if grad else None
            if g is not None:
                found.grads += 1
                add_tensor_storage(torch, g, found.storages)

    def array(self, a: Any, found: Found) -> None:
        # ndarray's own C getters (c_get) are used, so that an ndarray subclass's properties
        # never run.
        found.arrays += 1
        _probe(found, a)
        root = a
        ndarray, tensor = self.classes.ndarray, self.classes.tensor
        for _ in range(64):
            base = c_get(root, "base", ndarray)
            if base is None:
                break
            kind = type(base)
            if ndarray is not None and issubclass(kind, ndarray):
                root = base
                continue
            if tensor is not None and issubclass(kind, tensor):
                # The array came from t.numpy(), so the tensor owns the memory.
                tensor_storage(base, found.storages)
                return
            if issubclass(kind, _BYTES_TYPES):
                # The array came from np.frombuffer(raw), so the memory is the bytes object's,
                # counted under its key.
                key, size = bytes_storage(base)
                found.storages[key] = max(size, found.storages.get(key, 0))
                return
            # NumPy's DummyArray keeps its array as a plain instance attribute.
            attrs = instance_dict(base) if type_name(kind) == "DummyArray" else None
            inner = attrs.get("base") if attrs is not None else None
            if ndarray is not None and inner is not None and issubclass(type(inner), ndarray):
                # For as_strided and sliding_window_view, NumPy puts a DummyArray between the
                # view and its array, and the view's nbytes is its virtual size, so the walk
                # goes on to the array itself.
                root = inner
                continue
            break
        nbytes = int(c_get(root, "nbytes", ndarray))
        if nbytes <= 0:
            return
        try:
            ptr = c_get(root, "__array_interface__", ndarray)["data"][0]
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
        # What m.parameters() and m.buffers() give, read from the modules' dicts:
        # an override of either (or of named_modules) is the user's code.
        found.modules += 1
        _probe(found, m)
        for p in module_members(m, "_parameters", self.budget.left + 1):
            if not self.budget.take():
                return
            found.params += 1
            self.tensor(p, found)
            found.tensors -= 1
        for b in module_members(m, "_buffers", self.budget.left + 1):
            if not self.budget.take():
                return
            found.buffers += 1
            self.tensor(b, found, grad=False)
            found.tensors -= 1

    def optimizer(self, opt: Any, found: Found) -> None:
        # state and param_groups are instance attributes: read from the instance
        # dict, not through a subclass's __getattr__ or properties.
        found.optimizers += 1
        _probe(found, opt)
        attrs = instance_dict(opt) or {}
        state = attrs.get("state")
        if state is None or not issubclass(type(state), dict):
            return
        groups = attrs.get("param_groups")
        for group in groups[:ITEMS_PER_CONTAINER] if type(groups) is list else ():
            params = group.get("params") if type(group) is dict else None
            for p in params[: ITEMS_PER_CONTAINER * 10] if type(params) is list or type(params) is tuple else ():
                if not self.budget.take():
                    return
                if self.classes.kind(p) == "tensor":
                    tensor_storage(p, found.referenced)
                    # A parameter keeps its grad, so the optimizer keeps both alive.
                    g = leaf_grad(p)
                    if g is not None:
                        tensor_storage(g, found.referenced)
        for per_param in container_items(state, ITEMS_PER_CONTAINER * 10):
            if not issubclass(type(per_param), dict):
                continue
            for value in container_items(per_param, ITEMS_PER_CONTAINER):
                if not self.budget.take():
                    return
                if self.classes.kind(value) == "tensor":
                    found.state_tensors += 1
                    tensor_storage(value, found.storages)


def _probe(found: Found, obj: Any) -> None:
    if found.probes is not None and len(found.probes) < 64:
        found.probes.append(obj)


def _slot_descriptors(t: type) -> list[Any]:
    """Return the member descriptors of the ``__slots__`` of ``t`` and its bases.

    A slotted class, or a ``@dataclass(slots=True)``, keeps its attributes
    there rather than in a __dict__.
    """
    out: list[Any] = []
    for cls in mro(t):
        # type.__getattribute__ is not used, because a metaclass's __dict__ property would run.
        namespace = own_namespace(cls)
        slots = namespace.get("__slots__", ())
        for name in (slots,) if type(slots) is str else slots if type(slots) is tuple or type(slots) is list else ():
            if type(name) is not str or name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{type_name(cls).lstrip('_')}{name}"  # A private slot is stored mangled.
            descriptor = namespace.get(name)
            if type(descriptor) is types.MemberDescriptorType:
                out.append(descriptor)
    return out


def _slot_values(obj: Any) -> list[Any]:
    """Return what ``obj``'s set slots hold, read without running user code."""
    out: list[Any] = []
    for descriptor in _slot_descriptors(type(obj))[:ITEMS_PER_CONTAINER]:
        try:
            out.append(descriptor.__get__(obj))
        except AttributeError:
            pass
    return out


# referrers.py imports it under this name. It returns the instance dict that CPython's own
# getter reads, or None.
_instance_dict = instance_dict


def leaf_grad(t: Any) -> Any:
    """Return the ``.grad`` of a leaf tensor that requires grad, else None."""
    torch = current()
    if torch is None:
        return None
    with torch.off():
        return _leaf_grad(torch, t)


def _leaf_grad(torch: TorchReads, t: Any) -> Any:
    # Reading .grad of a non-leaf tensor warns, and only leaves that require grad have one.
    try:
        if torch.get(t, "requires_grad") and torch.get(t, "is_leaf"):
            return torch.get(t, "grad")
    except Exception:
        pass
    return None


def bytes_storage(b: Any) -> tuple[Any, int]:
    """Return a bytes-like object's storage key and size.

    A memoryview counts the object it views, once however many views there
    are; an array.array counts its buffer; bytes and bytearray count
    themselves, a bytearray with the room it has grown. The figures are read by
    the builtins' C code, so that a subclass's ``__sizeof__``, ``buffer_info``
    or ``itemsize`` never runs.
    """
    base = _bytes_base(type(b))
    if base is memoryview:  # memoryview cannot be subclassed, so its own attributes are safe.
        owner = b.obj
        if _bytes_base(type(owner)) in (bytes, bytearray, array.array):
            return bytes_storage(owner)
        return ("cpu", ("id", id(owner))), int(b.nbytes)
    if base is array.array:
        address, length = c_call(b, "buffer_info", base=base)
        return ("cpu", address), length * c_get(b, "itemsize", base)
    return ("cpu", ("id", id(b))), getsizeof(b, base)


def _bytes_base(t: type) -> type | None:
    """Return the one of _BYTES_TYPES that ``t`` is or subclasses, whose methods are the ones to call."""
    for base in _BYTES_TYPES:
        if issubclass(t, base):
            return base
    return None
