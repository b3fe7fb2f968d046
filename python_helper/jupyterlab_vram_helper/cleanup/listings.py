"""Keeps the names that an ``inspect`` listed, by identity, because those are what a later ``delete`` may remove.

A listing keeps, per name, the object's ``id()``, a weakref where the type
allows one, its type name and its storage keys: no strong reference to a user
object. A name is deleted only if the listing has it and it is still bound to
that very object; IPython's own names and module attributes never are.

Lists, dicts, tuples and bytes take no weakref, and CPython hands a freed
list's address to the next list made: a cell run again rebinds ``batch`` to a
new list at the old ``id()`` more often than not. For those the name's object
must still hold live the leaves (tensors, arrays) it held when listed, and
reach exactly the storages it reached then (``reach`` walks it again);
otherwise it counts as rebound. Bytes and bytearrays hold no such leaves,
and their storage is known by their ``id()`` alone: a ``bytearray`` made
again by a cell lands at the old address as often. Those count as rebound
once a cell has run since the listing (the kernel's execution count moved).
"""

from __future__ import annotations

import re
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .hidden_references import OUTPUT_NAME
from .holder_summaries import plural
from .namespace_surgery import Part
from .referrers import describe_referrers_many
from .storages import StorageKey

# IPython's own names, which are never listed and never deleted.
IPYTHON_NAMES = frozenset(
    {
        "In",
        "Out",
        "get_ipython",
        "exit",
        "quit",
        "_ih",
        "_oh",
        "_dh",
        "_",
        "__",
        "___",
        "__builtins__",
        "__builtin__",
        "__name__",
        "__doc__",
        "__package__",
        "__loader__",
        "__spec__",
    }
)
_DUNDER = re.compile(r"__\w*__\Z")
# IPython's input history names: _i, _ii, _iii and _iN. A name such as _images or _ids
# belongs to the user and does not match.
_INPUT_NAME = re.compile(r"_i{1,3}\Z|_i\d+\Z")


def reserved_name_reason(name: str) -> str | None:
    """Return why ``name`` may never be deleted, or ``None`` when it may be."""
    if name in IPYTHON_NAMES or _INPUT_NAME.match(name) or OUTPUT_NAME.match(name):
        return "an IPython internal name"
    if _DUNDER.match(name):
        return "a Python module attribute"
    return None


# A function that takes an object and the items its listing's walk was allowed (None when
# the walk could take as many as it needed), and returns the storages that the object
# reaches when walked as the listing walked it.
Reach = Callable[[Any, int | None], frozenset[StorageKey]]

# How many survivors of a delete have their holders looked up with gc.get_referrers. The
# rest are only said to be alive, because a look at each could take seconds in a large
# session.
MAX_DESCRIBED = 20


@dataclass
class ListedName:
    """One name of a listing, kept by identity rather than by a strong reference to its object."""

    object_id: int
    ref: weakref.ref | None  # This is None when the object does not support weakrefs.
    type_name: str
    # What deleting the name frees: what it reached, and its graphs' saved tensors.
    storages: frozenset[StorageKey]
    # For an object without a weakref (see the module docstring), what the object itself
    # reached, and weakrefs to the first leaves (tensors, arrays) it held.
    reached: frozenset[StorageKey] = frozenset()
    leaves: tuple[weakref.ref, ...] = ()
    # What it refers to without holding it as its own, such as an optimizer's parameters.
    referenced: frozenset[StorageKey] = frozenset()
    # When its walk ran out of the listing's budget, the items it was allowed, so that
    # ``reach`` walks as far again and no further. It is None when it was walked whole.
    items: int | None = None

    def same_object(self, obj: Any, reach: Reach, cells_ran: bool = False) -> bool:
        """Tell whether ``obj`` is the object listed; ``cells_ran`` says whether a cell has run since the listing."""
        if id(obj) != self.object_id or type(obj).__name__ != self.type_name:
            return False
        if self.ref is not None:
            return self.ref() is obj
        if not self.leaves and cells_ran:
            # Nothing tells it apart from an object that a cell made at its address.
            return False
        # A leaf that died means that the contents changed, even where a new tensor took its
        # storage's address.
        return all(leaf() is not None for leaf in self.leaves) and reach(obj, self.items) == self.reached


@dataclass
class Listing:
    """One ``inspect`` listing: the names it found, which a later ``delete`` may remove."""

    listing_id: str
    # How deep the inspect walked containers; ``reach`` walks as deep.
    container_depth: int
    names: dict[str, ListedName] = field(default_factory=dict)
    # The kernel's execution count at the listing, or None where the shell has none.
    execution_count: int | None = None

    def cells_ran_since(self, shell: Any) -> bool:
        """Tell whether a cell ran since the listing; when that is unknown, a cell counts as having run."""
        count = getattr(shell, "execution_count", None)
        return self.execution_count is None or type(count) is not int or count != self.execution_count


def refusal(listing: Listing, user_ns: dict[str, Any], name: str, reach: Reach, cells_ran: bool = False) -> str | None:
    """Return why ``name`` of ``listing`` may not be deleted now, or ``None`` when it may.

    Only a name that the listing has, and that is still bound to the object
    listed, may be deleted.
    """
    reason = reserved_name_reason(name)
    if reason is not None:
        return f"refused: {reason}"
    if name in user_ns and issubclass(type(user_ns[name]), types.ModuleType):
        return "refused: a module"
    listed = listing.names.get(name)
    if listed is None:
        return "not in the listing"
    if name not in user_ns:
        return "no longer defined"
    if not listed.same_object(user_ns[name], reach, cells_ran):
        return "rebound since the listing"
    return None


def still_alive_after_delete(
    listing: Listing, user_ns: dict[str, Any], probes: dict[str, list[Callable[[], Any]]], shell: Any, reach: Reach
) -> list[dict[str, str]]:
    """Return the deleted names whose objects live on, with what holds them.

    ``probes`` come from namespace_surgery.py; each one, when called, gives its
    object while the object lives on elsewhere. The holders of the first
    MAX_DESCRIBED survivors are looked up in one pass over the heap; the others
    are listed without their holders.
    """
    # Each item is a name, the reasons found so far, and its object's index in ``objs`` or -1.
    found: list[tuple[str, list[str], int]] = []
    # What is still alive. This is the one list that holds those objects while their
    # holders are looked up.
    objs: list[Any] = []
    for name, refs in probes.items():
        reasons: list[str] = []
        whole = [r for r in refs if type(r) is not Part]
        parts = [r for r in refs if type(r) is Part and r() is not None]
        alive = next((o for o in (r() for r in whole) if o is not None), None)
        storages = listing.names[name].storages
        # Look for memory shared with names that are still bound to their listed objects,
        # and for parameters that an optimizer still refers to.
        sharing: list[str] = []
        referring: list[str] = []
        for other, listed in listing.names.items():
            if other == name or other in probes or other not in user_ns:
                continue
            shares, refers = bool(listed.storages & storages), bool(listed.referenced & storages)
            if (shares or refers) and listed.same_object(user_ns[other], reach):
                (sharing if shares else referring).append(other if shares else f"{other} ({listed.type_name})")
        sharing.sort()
        referring.sort()
        if alive is None and parts:
            if referring:
                reasons.append(f"{plural(len(parts), 'parameter')} still referenced by {_names(referring)}")
            else:
                reasons.append(f"{plural(len(parts), 'parameter or buffer', 'parameters or buffers')} still alive")
                alive = parts[0]()
        elif referring:
            reasons.append(f"its parameters are referenced by {_names(referring)}")
        if sharing:
            reasons.append("its memory is shared with " + _names(sharing))
        index = -1
        if alive is not None:
            index = len(objs)
            objs.append(alive)
        if index >= 0 or reasons:
            found.append((name, reasons, index))
        del alive, parts, whole

    described = describe_referrers_many(objs, shell, MAX_DESCRIBED) if objs else []
    objs.clear()
    out = []
    for name, reasons, index in found:
        if 0 <= index < len(described):
            reasons.insert(0, described[index])
        elif index >= 0:
            reasons.insert(0, f"still alive (what holds it is looked up for the first {MAX_DESCRIBED} such names only)")
        out.append({"name": name, "reason": "; ".join(dict.fromkeys(reasons))})
    return out


def _names(names: list[str]) -> str:
    return ", ".join(names[:5]) + (", …" if len(names) > 5 else "")


def interrupted_delete_text(
    accepted: list[str], gone: list[str], cleared: list[str], done: list[str], free: list[str], freed: bool
) -> str:
    """Return the ``interrupted`` error of a ``delete``, which says what it did before the interrupt."""
    parts = [f"deleted {', '.join(gone)}" if gone else "deleted no name"]
    kept = [name for name in accepted if name not in gone]
    if kept:
        parts.append(f"not deleted: {', '.join(kept)}")
    if cleared:
        parts.append(f"cleared {', '.join(done)}" if done else "cleared no hidden holder")
        if len(done) < len(cleared):
            parts.append(f"not cleared (or only in part): {', '.join(h for h in cleared if h not in done)}")
    if free and not freed:
        parts.append(f"{' and '.join(free)} may not have run")
    return "delete was interrupted: " + "; ".join(parts) + ". Inspect again to see what is left"
