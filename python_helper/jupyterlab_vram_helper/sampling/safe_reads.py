"""Reads the user's objects without running the user's code.

The helper never changes what it measures: looking at an object must not run
a property, an overridden dunder method, a metaclass hook or a lazy proxy's
factory (which may build a model, allocate memory and print into the
notebook). Ordinary attribute access, ``len()``, ``sys.getsizeof()``,
iteration and ``isinstance()`` may all run such code, so this module reads
objects through what CPython itself implements in C:

* class attributes through ``type``'s own descriptors, so that a metaclass's
  ``__getattribute__`` or ``__dict__`` property is never consulted;
* an instance's ``__dict__`` only through the descriptor that ``type.__new__``
  made for it, because wrapt's ``LazyObjectProxy`` has a C ``__dict__`` that
  creates the wrapped object first; otherwise through ``gc.get_referents``,
  which runs the object's C traversal and no Python code;
* sizes, lengths and attributes through the first C (non-heap) class of the
  object's MRO, never through a subclass's override.

Nothing here keeps a reference to what it reads.
"""

from __future__ import annotations

import collections
import functools
import gc
import sys
import types
from typing import Any

# These are type's own descriptors. Reading a class through them bypasses its
# metaclass.
_TYPE_NAMESPACE = type.__dict__["__dict__"]
_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_FLAGS = type.__dict__["__flags__"]
_TYPE_NAME = type.__dict__["__name__"]
_TYPE_QUALNAME = type.__dict__["__qualname__"]
_TYPE_MODULE = type.__dict__["__module__"]
_TYPE_DICTOFFSET = type.__dict__["__dictoffset__"]

# Py_TPFLAGS_HEAPTYPE marks a class made at run time, by a class statement or
# PyType_FromSpec.
_HEAPTYPE = 1 << 9
# Py_TPFLAGS_HAVE_GC means that instances carry the collector's header.
_HAVE_GC = 1 << 14
# Py_TPFLAGS_MANAGED_WEAKREF (Python 3.12 and later) and
# Py_TPFLAGS_MANAGED_DICT (3.11 and later) put pointers before the object.
_PREHEADER = (1 << 3) | (1 << 4)
# With Py_TPFLAGS_MANAGED_DICT, an object's attributes may be kept inline,
# without a dict.
_MANAGED_DICT = (1 << 4) if sys.version_info >= (3, 11) else 0

_MISSING = object()


def mro(t: type) -> tuple[type, ...]:
    """``t.__mro__`` without asking ``t``'s metaclass."""
    found = _TYPE_MRO.__get__(t)
    return found if type(found) is tuple else (t,)


def own_namespace(klass: type) -> Any:
    """``klass.__dict__``, a mappingproxy, read without asking ``klass``'s metaclass."""
    return _TYPE_NAMESPACE.__get__(klass)


def type_flags(t: type) -> int:
    """Return a type's ``__flags__`` without asking its metaclass."""
    return int(_TYPE_FLAGS.__get__(t))


def type_name(t: type) -> str:
    """``t.__name__``, without asking ``t``'s metaclass."""
    return str(_TYPE_NAME.__get__(t))


def type_qualname(t: type) -> str:
    """``t.__qualname__``, without asking ``t``'s metaclass."""
    return str(_TYPE_QUALNAME.__get__(t))


def type_module(t: type) -> Any:
    """``t.__module__`` as stored, which may be any object for a heap type, read
    without asking ``t``'s metaclass."""
    return _TYPE_MODULE.__get__(t)


# --- an instance's __dict__ ----------------------------------------------------


class _Plain:
    pass


# This is the doc of the getset descriptor that ``type.__new__`` gives a class
# that adds an instance dict ("dictionary for instance variables"). Its wording
# varies by Python version, so it is read from a class of the helper's own. A C
# extension's own ``__dict__`` getset, such as wrapt's proxies have, has
# another doc, or none, which tells the two apart.
_INSTANCE_DICT_DOC = own_namespace(_Plain)["__dict__"].__doc__

# These are CPython's own C ``__dict__`` getters, which only read the dict or
# make an empty one. They are found on the builtin classes, and serve every
# subclass of them.
_C_DICT_GETTERS = frozenset(
    id(own_namespace(klass)["__dict__"])
    for klass in (BaseException, functools.partial, types.SimpleNamespace)
    if type(own_namespace(klass).get("__dict__")) is types.GetSetDescriptorType
)


def dict_descriptor(t: type) -> tuple[bool, Any]:
    """Whether instances of ``t`` have a ``__dict__`` attribute, and the descriptor
    to read it with. The descriptor is None where only running code other than
    CPython's would read the dict.

    It is looked up as attribute lookup does, in the first class of the MRO
    whose own namespace has it, and each namespace is read through ``type``'s
    own descriptor.
    """
    classes = mro(t)
    for klass in classes:
        descriptor = own_namespace(klass).get("__dict__", _MISSING)
        if descriptor is _MISSING:
            continue
        if type(descriptor) is types.MemberDescriptorType:
            # A member descriptor reads a pointer at a fixed offset, so it runs
            # nothing.
            return True, descriptor
        if type(descriptor) is not types.GetSetDescriptorType:
            # This is a property, or an object of the user's with __get__.
            return True, None
        if id(descriptor) in _C_DICT_GETTERS:
            return True, descriptor
        if (
            descriptor.__objclass__ is klass
            and type_flags(klass) & _HEAPTYPE
            and descriptor.__doc__ == _INSTANCE_DICT_DOC
            and not _c_base_with_dict(classes)
        ):
            return True, descriptor
        return True, None
    return False, None


def _c_base_with_dict(classes: tuple[type, ...]) -> bool:
    """Whether a C (non-heap) class of the MRO has an instance dict of its own.

    If one has, the getter that ``type.__new__`` made hands the read to that
    class's getter (CPython's ``subtype_dict``), which is the extension's code,
    not CPython's.
    """
    for klass in classes:
        if not type_flags(klass) & _HEAPTYPE and _TYPE_DICTOFFSET.__get__(klass):
            namespace = own_namespace(klass)
            if id(namespace.get("__dict__")) not in _C_DICT_GETTERS:
                return True
    return False


def instance_dict(obj: Any) -> dict | None:
    """``obj.__dict__`` where CPython's own getter reads it, or None otherwise.

    On Python 3.11 and later this makes the dict of an object that kept its
    attributes inline, as ``vars()`` does, whereas ``referents`` reads them
    without making one.
    """
    _, descriptor = dict_descriptor(type(obj))
    if descriptor is None:
        return None
    try:
        attrs = descriptor.__get__(obj, type(obj))
    except Exception:
        return None
    return attrs if type(attrs) is dict else None


def inline_attributes(obj: Any, limit: int) -> list[Any] | None:
    """The values of ``obj``'s attributes, its slots' too, where Python 3.11 and
    later keep them inline without a ``__dict__``, as its C traversal reports
    them.

    The result is None where the object has a dict already, or may have one
    because a dict is among the values, or where its class keeps no managed
    dict. Reading ``__dict__`` (with ``vars()`` or CPython's own getter) would
    make that dict and keep it, which costs about 100 bytes more per object and
    makes its attribute reads slower ever after.
    """
    if not (_MANAGED_DICT and type_flags(type(obj)) & _MANAGED_DICT):
        return None
    values = referents(obj, limit)
    for value in values:
        if type(value) is dict:
            return None
    return values


def referents(obj: Any, limit: int) -> list[Any]:
    """What ``obj`` refers to, as its C traversal reports it to the collector,
    leaving out its class.

    This gives the attributes of an object whose ``__dict__`` only its own code
    reads, such as the object that a proxy wraps once it is made, and never
    runs a factory to make it.
    """
    t = type(obj)
    out: list[Any] = []
    for ref in gc.get_referents(obj):
        if ref is not t:
            out.append(ref)
            if len(out) >= limit:
                break
    return out


# --- C implementations -------------------------------------------------------------------------

# This maps (id of a trusted class, name) to (the class, what its MRO gives for
# the name). The class is kept so that its id stays its own. Only the helper's
# trusted classes (builtins, ndarray, TensorBase) and C classes are keys, never
# a user's class, so the cache stays small and never keeps the user's classes
# alive.
_c_attributes: dict[tuple[int, str], tuple[type, Any]] = {}


def c_base(t: type) -> type:
    """The first C (non-heap) class of ``t``'s MRO.

    For a class of the user's over a static C class (bytes, ndarray,
    TensorBase), it is the class whose layout ``t``'s instances have. C classes
    made at run time (``array.array``, wrapt's proxies) are heap classes too,
    so callers name those as ``base`` instead.
    """
    for klass in mro(t):
        if not type_flags(klass) & _HEAPTYPE:
            return klass
    return object


def c_attribute(t: type, name: str, base: type | None = None) -> Any:
    """What ``base``, by default the C part of ``t``, defines as ``name``, leaving
    out a subclass's override.

    This is safe to apply to ``t``'s instances because a C descriptor checks by
    type, never by ``__class__``, that what it is given is an instance of its
    class, and raises TypeError otherwise.
    """
    if base is None:
        base = c_base(t)
    key = (id(base), name)
    cached = _c_attributes.get(key)
    if cached is None:
        found = None
        for klass in mro(base):
            value = own_namespace(klass).get(name, _MISSING)
            if value is not _MISSING:
                found = value
                break
        cached = _c_attributes[key] = (base, found)
    if cached[1] is None:
        raise AttributeError(name)
    return cached[1]


def c_get(obj: Any, name: str, base: type | None = None) -> Any:
    """``obj.<name>`` for a C getset or member, as ``base`` (by default the C class) defines it."""
    descriptor = c_attribute(type(obj), name, base)
    if type(descriptor) is not types.GetSetDescriptorType and type(descriptor) is not types.MemberDescriptorType:
        raise AttributeError(name)
    return descriptor.__get__(obj, type(obj))


def c_call(obj: Any, name: str, *args: Any, base: type | None = None) -> Any:
    """``obj.<name>(*args)`` for a C method, as ``base`` (by default the C class) defines it."""
    method = c_attribute(type(obj), name, base)
    if type(method) is not types.MethodDescriptorType and type(method) is not types.WrapperDescriptorType:
        raise AttributeError(name)
    return method(obj, *args)


def c_len(obj: Any, base: type | None = None) -> int:
    """``len(obj)`` as the C class computes it (a subclass's ``__len__`` is not run)."""
    return int(c_call(obj, "__len__", base=base))


_GC_HEAD = sys.getsizeof([]) - [].__sizeof__()
_plain = _Plain()
# This is what a managed dict, and from Python 3.12 a managed weakref list, add
# before the object. It is measured on a class of the helper's own, since it
# varies by Python version.
_PREHEADER_SIZE = (
    sys.getsizeof(_plain) - object.__sizeof__(_plain) - (_GC_HEAD if type_flags(_Plain) & _HAVE_GC else 0)
    if type_flags(_Plain) & _PREHEADER
    else 0
)
del _plain


def getsizeof(obj: Any, base: type | None = None) -> int:
    """``sys.getsizeof(obj)`` as for a class that does not override ``__sizeof__``.

    It is the C class's ``__sizeof__``, plus what CPython puts before the
    object (the collector's header and a managed dict's pointers), which the
    class's flags tell.
    """
    t = type(obj)
    size = int(c_call(obj, "__sizeof__", base=base))
    flags = type_flags(t)
    if flags & _HAVE_GC:
        size += _GC_HEAD
    if flags & _PREHEADER:
        size += _PREHEADER_SIZE
    return size


# --- containers --------------------------------------------------------------------


def container_items(obj: Any, limit: int) -> list[Any]:
    """At most ``limit`` items of a list, tuple, dict, set, frozenset or deque, or
    of a subclass of one. For a dict, the items are its values.

    They are read by the builtin's own C code, never by the subclass's
    ``__iter__``, ``__getitem__`` or ``values``.
    """
    t = type(obj)
    if issubclass(t, dict):
        iterator: Any = dict.values(obj)
    elif issubclass(t, list):
        return list.__getitem__(obj, slice(0, limit))
    elif issubclass(t, tuple):
        return list(tuple.__getitem__(obj, slice(0, limit)))
    elif issubclass(t, set):
        iterator = set.__iter__(obj)
    elif issubclass(t, frozenset):
        iterator = frozenset.__iter__(obj)
    # A deque is often a history kept with maxlen.
    elif issubclass(t, collections.deque):
        iterator = collections.deque.__iter__(obj)
    else:
        return []
    out: list[Any] = []
    for value in iterator:
        out.append(value)
        if len(out) >= limit:
            break
    return out
