"""One-click cleanup: ``free_memory``, ``inspect`` and ``delete`` (docs/protocol.md).

Runs on the shell thread, between cells (comm requests wait for the running
cell). Never imports torch, never initialises CUDA, never prints, and never
keeps a strong reference to a user object once a request is answered: a
listing keeps names, ``id()``s, weakrefs and storage keys only.

Deleting is by name and identity: a name is deleted only if the listing the
frontend shows has it AND it still points to the same object. Names are data;
nothing is ever compiled or executed.
"""

from __future__ import annotations

import gc
import re
import sys
import time
import traceback
import types
import uuid
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from . import autograd_graph, holders
from .holders import Budget, Classes, Found, Sizer
from .storages import StorageKey, bytes_by_device
from .protocol import HIDDEN_HOLDER_KINDS, INSPECT_CONTAINER_DEPTH, INSPECT_MAX_ENTRIES
from .readers import torch_cuda

KEPT_LISTINGS = 4
MAX_REFERRER_KINDS = 3

# IPython's own names: never listed, never deleted.
IPYTHON_NAMES = frozenset(
    {"In", "Out", "get_ipython", "exit", "quit", "_ih", "_oh", "_dh", "_", "__", "___", "__builtins__",
     "__builtin__", "__name__", "__doc__", "__package__", "__loader__", "__spec__"}
)
_OUTPUT_NAME = re.compile(r"_\d+\Z")
_DUNDER = re.compile(r"__\w*__\Z")

TRACEBACK_WARNING = "Clearing the traceback disables %debug for that error"
OUTPUT_CACHE_WARNING = "Clearing empties Out, _, __, ___ and every _N"


def reserved_name_reason(name: str) -> Optional[str]:
    """Why ``name`` may never be deleted, or ``None``."""
    if name in IPYTHON_NAMES or name.startswith("_i") or _OUTPUT_NAME.match(name):
        return "an IPython internal name"
    if _DUNDER.match(name):
        return "a Python module attribute"
    return None


@dataclass
class ListedName:
    object_id: int
    ref: Optional[weakref.ref]  # None when the object does not support weakrefs
    type_name: str
    storages: FrozenSet[StorageKey]

    def same_object(self, obj: Any) -> bool:
        if id(obj) != self.object_id or type(obj).__name__ != self.type_name:
            return False
        return self.ref is None or self.ref() is obj


@dataclass
class Listing:
    listing_id: str
    names: Dict[str, ListedName] = field(default_factory=dict)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


class Cleanup:
    def __init__(self, source: Any, shell: Callable[[], Any], read_figures: Optional[Callable[[], Any]] = None):
        """``shell()``: the IPython shell (or None); ``read_figures()``: a SampleSource reading
        (the sampler's lock-protected one in the kernel)."""
        self._source = source
        self._shell = shell
        self._read_figures = read_figures if read_figures is not None else source.read
        self._listings: "OrderedDict[str, Listing]" = OrderedDict()
        self._counter = 0

    # -- snapshot ---------------------------------------------------------

    def snapshot(self) -> Dict[str, Any]:
        figures = self._read_figures()
        gpus = []
        for gpu in figures.get("gpus", []):
            t = gpu.get("torch") or {}
            n = gpu.get("nvml") or {}
            gpus.append(
                {
                    "index": gpu["index"],
                    "allocated_bytes": t.get("allocated_bytes"),
                    "reserved_bytes": t.get("reserved_bytes"),
                    "nvml_used_bytes": n.get("used_bytes"),
                }
            )
        return {"host": {"rss_bytes": figures.get("host", {}).get("rss_bytes")}, "gpus": gpus}

    # -- free_memory --------------------------------------------------------

    def free_memory(self, actions: List[str]) -> Dict[str, Any]:
        start = time.perf_counter()
        before = self.snapshot()
        ran, collected, empty = self._free(actions)
        return {
            "actions_run": ran,
            "gc_collected": collected,
            "empty_cache": empty,
            "before": before,
            "after": self.snapshot(),
            "elapsed_ms": _ms(start),
        }

    def _free(self, actions: List[str]) -> Tuple[List[str], Optional[int], Optional[str]]:
        ran: List[str] = []
        collected: Optional[int] = None
        empty: Optional[str] = None  # not requested
        if "gc" in actions:  # first: what gc frees, empty_cache can return
            collected = int(gc.collect())
            ran.append("gc")
        if "empty_cache" in actions:
            empty = empty_cuda_cache()
            ran.append("empty_cache")
        return ran, collected, empty

    # -- inspect --------------------------------------------------------------

    def inspect(
        self,
        max_entries: int = INSPECT_MAX_ENTRIES[2],
        container_depth: int = INSPECT_CONTAINER_DEPTH[2],
        keep_listing: bool = True,
    ) -> Dict[str, Any]:
        """``keep_listing=False``: for a caller that never deletes from it (the OOM
        diagnosis), so that it does not push a frontend's listing out."""
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, listing = self._inspect(max_entries, container_depth)
        if keep_listing:
            self._keep(listing)
        result["elapsed_ms"] = _ms(start)
        return result

    def _inspect(self, max_entries: int, depth: int) -> Tuple[Dict[str, Any], Listing]:
        shell = self._shell()
        classes = Classes()
        budget = Budget()
        sizer = Sizer(classes, budget)
        user_ns: Dict[str, Any] = getattr(shell, "user_ns", None) or {}
        hidden_ns: Dict[str, Any] = getattr(shell, "user_ns_hidden", None) or {}

        cache_labels = output_cache_labels(shell)  # id -> labels

        # 1. size every candidate name
        raw: List[Tuple[str, Any, str, Found]] = []
        obj: Any = None
        for name, obj in list(user_ns.items()):
            if not isinstance(name, str) or reserved_name_reason(name) is not None:
                continue
            if name in hidden_ns and hidden_ns[name] is obj:
                continue  # put there by IPython, not by the user
            kind = classes.kind(obj)
            if kind == "skip":
                continue
            found = Found()
            sizer.walk(obj, found, depth, objects=True)
            if kind in ("container", "object") and not found.leaves() and not found.modules and not found.optimizers:
                continue
            raw.append((name, obj, kind, found))

        # 2. the memory graph-holding tensors keep alive: what their graphs saved
        # that no name holds directly (a weight saved for backward is the model's)
        graphs: Dict[str, autograd_graph.GraphWalk] = {}
        for name, _obj, _kind, found in raw:
            if found.graph_tensors:
                graphs[name] = autograd_graph.walk_graphs(found.graph_roots, found.graph_tensors)
        graph_only: Dict[str, Dict[StorageKey, int]] = {}
        if graphs:
            held = {key for *_, found in raw for key in found.storages}
            for name, _obj, _kind, found in raw:
                only = autograd_graph.only_in_graph(graphs.get(name), held)
                graph_only[name] = only
                found.storages.update(only)  # deleting the name frees them too

        # 3. count each storage once, on the largest holder
        raw.sort(key=lambda r: (-r[3].total, r[0]))
        owner: Dict[StorageKey, str] = {}
        sharers: Dict[StorageKey, List[str]] = {}
        for name, _obj, _kind, found in raw:
            for key in found.storages:
                owner.setdefault(key, name)
                sharers.setdefault(key, []).append(name)

        listing = Listing(self._new_id())
        entries = []
        for name, obj, kind, found in raw:
            own = [k for k in found.storages if owner[k] == name]
            shared = sorted({n for k in found.storages for n in sharers[k] if n != name})
            counted = bytes_by_device(found.storages, own)
            entries.append(
                {
                    "name": name,
                    "kind": "other" if kind == "object" else kind,
                    "type_name": _type_name(obj),
                    "summary": _summary(obj, kind, found),
                    "bytes_by_device": counted,
                    "total_bytes": sum(counted.values()),
                    "shared_with": shared,
                    "output_cache_refs": cache_labels.get(id(obj), []),
                    "deletable": True,
                    "refusal": None,
                    "graph_holding": graphs[name].summary(graph_only[name]) if name in graphs else None,
                }
            )
            listing.names[name] = ListedName(id(obj), _weakref(obj), type(obj).__name__, frozenset(found.storages))
        del raw, obj  # no reference to user objects beyond this point
        entries.sort(key=lambda e: (-e["total_bytes"], e["name"]))
        truncated = len(entries) > max_entries or budget.exhausted

        hidden = [
            h for h in self._hidden_holders(shell, classes, depth, set(owner), cache_labels) if h["total_bytes"] > 0
        ]
        return (
            {
                "listing_id": listing.listing_id,
                "elapsed_ms": 0.0,
                "truncated": truncated,
                "entries": entries[:max_entries],
                "hidden": hidden,
            },
            listing,
        )

    def _hidden_holders(
        self, shell: Any, classes: Classes, depth: int, named: set, labels: Dict[int, List[str]]
    ) -> List[Dict[str, Any]]:
        """``labels``: the output cache's labels (:func:`output_cache_labels`), already read by the caller."""
        out = []
        sizer = Sizer(classes, Budget())
        # output cache
        objects = output_cache_objects(shell)
        found = Found()
        seen: set = set()
        holding: List[str] = []
        for obj in objects:
            before = len(found.storages)
            sizer.walk(obj, found, depth, seen)
            if len(found.storages) > before:
                holding.extend(labels.get(id(obj), [])[:1])
        del objects
        out.append(
            _hidden(
                "output_cache",
                "Output cache (Out, _, __, ___, _N)",
                found,
                named,
                (f"{holders.plural(len(holding), 'output')} holding memory: {', '.join(holding[:8])}"
                 + (", …" if len(holding) > 8 else "")),
                OUTPUT_CACHE_WARNING,
            )
        )
        # last traceback
        excs = last_exceptions(shell)
        found = Found()
        held_by: List[str] = []
        title = ""
        if excs:
            title = f"{type(excs[0]).__name__}: {_head(excs[0])}"
        seen = set()
        for frame in holders.traceback_frames(_tracebacks(excs, shell)):
            if not holders.is_user_function_frame(frame):
                continue
            for local_name, value in holders.frame_locals(frame):
                before = sum(found.storages.values())
                sizer.walk(value, found, depth, seen)
                if sum(found.storages.values()) > before and len(held_by) < 8:
                    held_by.append(f"{frame.f_code.co_name}(): {local_name}")
            del frame
        del excs
        out.append(
            _hidden(
                "last_traceback",
                f"Traceback of the last error ({title})" if title else "Traceback of the last error",
                found,
                named,
                "frame locals: " + ", ".join(held_by) if held_by else "no frame locals hold memory",
                TRACEBACK_WARNING,
            )
        )
        # last execution result
        found = Found()
        last = getattr(shell, "last_execution_result", None)
        result = getattr(last, "result", None)
        count = getattr(last, "execution_count", None)
        if result is not None:
            sizer.walk(result, found, depth, objects=True)
            summary = _summary(result, classes.kind(result), found)
        else:
            summary = "no result"
        del result, last
        out.append(
            _hidden(
                "last_execution_result",
                f"Result of the last cell (In[{count}])" if isinstance(count, int) else "Result of the last cell",
                found,
                named,
                summary,
                None,
            )
        )
        return out

    def _new_id(self) -> str:
        self._counter += 1
        return f"{self._counter}-{uuid.uuid4().hex[:8]}"

    def _keep(self, listing: Listing) -> None:
        self._listings[listing.listing_id] = listing
        while len(self._listings) > KEPT_LISTINGS:
            self._listings.popitem(last=False)

    def has_listing(self, listing_id: str) -> bool:
        return listing_id in self._listings

    # -- delete -----------------------------------------------------------------

    def delete(self, listing_id: str, names: List[str], hidden: List[str], free: List[str]) -> Dict[str, Any]:
        """Caller checked: listing exists, names are strings, at most protocol.MAX_DELETE_NAMES."""
        start = time.perf_counter()
        listing = self._listings[listing_id]
        shell = self._shell()
        user_ns: Dict[str, Any] = getattr(shell, "user_ns", None)
        if user_ns is None:
            user_ns = {}
        before = self.snapshot()

        refused: List[Dict[str, str]] = []
        accepted: List[str] = []
        for name in dict.fromkeys(names):  # de-duplicated, in order
            reason = self._refusal(listing, user_ns, name)
            if reason is None:
                accepted.append(name)
            else:
                refused.append({"name": name, "reason": reason})

        probes: Dict[str, List[weakref.ref]] = {}
        deleted: List[str] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in accepted:
                probes[name] = detach(shell, user_ns, name)
                deleted.append(name)
            cleared = [h for h in HIDDEN_HOLDER_KINDS if h in hidden]
            for holder in cleared:
                CLEARERS[holder](shell)
            ran, _collected, _empty = self._free(free)

        still_alive = self._still_alive(listing, user_ns, probes, shell, "gc" in ran)
        return {
            "deleted": deleted,
            "refused": refused,
            "cleared": cleared,
            "still_alive": still_alive,
            "before": before,
            "after": self.snapshot(),
            "elapsed_ms": _ms(start),
        }

    def _refusal(self, listing: Listing, user_ns: Dict[str, Any], name: str) -> Optional[str]:
        reason = reserved_name_reason(name)
        if reason is not None:
            return f"refused: {reason}"
        if name in user_ns and isinstance(user_ns[name], types.ModuleType):
            return "refused: a module"
        listed = listing.names.get(name)
        if listed is None:
            return "not in the listing"
        if name not in user_ns:
            return "no longer defined"
        if not listed.same_object(user_ns[name]):
            return "rebound since the listing"
        return None

    def _still_alive(
        self, listing: Listing, user_ns: Dict[str, Any], probes: Dict[str, List[weakref.ref]], shell: Any, collected: bool
    ) -> List[Dict[str, str]]:
        out = []
        for name, refs in probes.items():
            reasons: List[str] = []
            alive = [r for r in refs if r() is not None]
            if alive:
                reasons.append(describe_referrers(alive[0](), shell))
            # memory shared with names that are still bound to their listed objects
            storages = listing.names[name].storages
            sharing = sorted(
                other
                for other, listed in listing.names.items()
                if other != name
                and other not in probes
                and other in user_ns
                and listed.storages & storages
                and listed.same_object(user_ns[other])
            )
            if sharing:
                reasons.append("its memory is shared with " + ", ".join(sharing[:5]) + (", …" if len(sharing) > 5 else ""))
            if reasons:
                out.append({"name": name, "reason": "; ".join(dict.fromkeys(reasons))})
        return out


# --- namespace surgery -------------------------------------------------------


def detach(shell: Any, user_ns: Dict[str, Any], name: str) -> List[weakref.ref]:
    """Delete ``name`` and its hidden copies; return weakrefs telling whether its memory died.

    Like IPython's ``shell.del_var(name)``: copies of the object in the output
    cache (Out/_oh, _, __, ___, _N), in ``user_ns_hidden`` and in the last
    execution result go too. Unlike it, other *user* names bound to the same
    object (``b = a``) stay: the user chose ``a`` only; the reply says that
    ``b`` still holds it.
    """
    obj = user_ns[name]
    probes = _probes(obj)
    del user_ns[name]
    for key in [k for k, v in user_ns.items() if v is obj and isinstance(k, str) and _is_cache_name(k)]:
        del user_ns[key]
    for ns in _other_namespaces(shell, user_ns):
        for key in [k for k, v in ns.items() if v is obj]:
            del ns[key]
    displayhook = getattr(shell, "displayhook", None)
    for attr in ("_", "__", "___"):
        try:
            if getattr(displayhook, attr, None) is obj:
                setattr(displayhook, attr, None)
        except Exception:
            pass
    last = getattr(shell, "last_execution_result", None)
    if last is not None and getattr(last, "result", None) is obj:
        _replace_last_result(shell, keep_result=False, keep_error=True)
    del obj
    return probes


def _is_cache_name(name: str) -> bool:
    return name in ("_", "__", "___") or bool(_OUTPUT_NAME.match(name))


def _other_namespaces(shell: Any, user_ns: Dict[str, Any]) -> List[Dict[Any, Any]]:
    out: List[Dict[Any, Any]] = []
    for ns in [getattr(shell, "user_global_ns", None), getattr(shell, "user_ns_hidden", None), _output_hist(shell)]:
        if isinstance(ns, dict) and ns is not user_ns and not any(ns is o for o in out):
            out.append(ns)
    try:
        for module in getattr(shell, "_main_mod_cache", {}).values():
            d = getattr(module, "__dict__", None)
            if isinstance(d, dict) and d is not user_ns and not any(d is o for o in out):
                out.append(d)
    except Exception:
        pass
    return out


def _output_hist(shell: Any) -> Optional[Dict[Any, Any]]:
    oh = getattr(getattr(shell, "history_manager", None), "output_hist", None)
    if isinstance(oh, dict):
        return oh
    oh = getattr(shell, "user_ns", {}).get("_oh")
    return oh if isinstance(oh, dict) else None


def _probes(obj: Any) -> List[weakref.ref]:
    ref = _weakref(obj)
    if ref is not None:
        return [ref]
    # lists, dicts, tuples: watch what they hold instead
    found = Found()
    found.probes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Sizer(Classes()).walk(obj, found, 5, objects=True)
    refs = [r for r in (_weakref(o) for o in found.probes) if r is not None]
    found.probes = None
    return refs


def _weakref(obj: Any) -> Optional[weakref.ref]:
    try:
        return weakref.ref(obj)
    except TypeError:
        return None


def _replace_last_result(shell: Any, keep_result: bool, keep_error: bool) -> None:
    """Swap in a fresh ExecutionResult (None would break IPython's own del_var)."""
    last = getattr(shell, "last_execution_result", None)
    if last is None:
        return
    try:
        fresh = type(last)(getattr(last, "info", None))
        fresh.execution_count = getattr(last, "execution_count", None)
        if keep_result:
            fresh.result = last.result
        if keep_error:
            fresh.error_before_exec = last.error_before_exec
            fresh.error_in_exec = last.error_in_exec
        shell.last_execution_result = fresh
    except Exception:
        try:
            last.result = last.result if keep_result else None
            if not keep_error:
                last.error_in_exec = None
                last.error_before_exec = None
        except Exception:
            pass


def clear_output_cache(shell: Any) -> None:
    """``%reset -f out``, plus the copies of _, __, ___ that IPython leaves in user_ns_hidden."""
    displayhook = getattr(shell, "displayhook", None)
    try:
        displayhook.flush()
    except Exception:
        oh = _output_hist(shell)
        if oh is not None:
            oh.clear()
        for attr in ("_", "__", "___"):
            try:
                setattr(displayhook, attr, "")
            except Exception:
                pass
    user_ns = getattr(shell, "user_ns", {})
    hidden = getattr(shell, "user_ns_hidden", {})
    for key in [k for k in list(user_ns) if isinstance(k, str) and _OUTPUT_NAME.match(k)]:
        del user_ns[key]
    for key in [k for k in list(hidden) if isinstance(k, str) and _is_cache_name(k)]:
        if key in ("_", "__", "___"):
            # flush() reset the visible ones to '': keep the hidden copies equal, so that
            # IPython still tells its own _ from a user's assignment.
            hidden[key] = user_ns.get(key, "")
        else:
            del hidden[key]


def clear_last_traceback(shell: Any) -> None:
    """Free the frames of the last error: %debug no longer works for it."""
    excs = last_exceptions(shell)
    for tb in _tracebacks(excs, shell):
        try:
            traceback.clear_frames(tb)
        except Exception:
            pass
    for attr in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, attr):
            setattr(sys, attr, None)
    for e in excs:
        try:
            e.__traceback__ = None
        except Exception:
            pass
    del excs
    _replace_last_result(shell, keep_result=True, keep_error=False)
    itb = getattr(shell, "InteractiveTB", None)
    if itb is not None and hasattr(itb, "tb"):
        try:
            del itb.tb
        except Exception:
            pass
    if hasattr(shell, "_last_traceback"):
        try:
            shell._last_traceback = None  # ipykernel's formatted copy (text only)
        except Exception:
            pass


def clear_last_execution_result(shell: Any) -> None:
    _replace_last_result(shell, keep_result=False, keep_error=False)


CLEARERS: Dict[str, Callable[[Any], None]] = {
    "output_cache": clear_output_cache,
    "last_traceback": clear_last_traceback,
    "last_execution_result": clear_last_execution_result,
}


# --- hidden holders: what they are -----------------------------------------------


def output_cache_objects(shell: Any) -> List[Any]:
    out: List[Any] = []
    ids = set()

    def add(obj: Any) -> None:
        if obj is not None and id(obj) not in ids:
            ids.add(id(obj))
            out.append(obj)

    oh = _output_hist(shell) or {}
    for value in list(oh.values()):
        add(value)
    displayhook = getattr(shell, "displayhook", None)
    for attr in ("_", "__", "___"):
        add(getattr(displayhook, attr, None))
    for ns in (getattr(shell, "user_ns", None) or {}, getattr(shell, "user_ns_hidden", None) or {}):
        for key, value in list(ns.items()):
            if isinstance(key, str) and _is_cache_name(key):
                add(value)
    return out


def output_cache_labels(shell: Any) -> Dict[int, List[str]]:
    """id(object) -> its names in the output cache: "Out[3]", "_3", "_", ..."""
    labels: Dict[int, List[str]] = {}

    def add(obj: Any, label: str) -> None:
        if obj is None or isinstance(obj, (str, int, float, bool)):
            return
        names = labels.setdefault(id(obj), [])
        if label not in names:
            names.append(label)

    oh = _output_hist(shell) or {}
    for key, value in sorted(oh.items(), key=lambda kv: kv[0] if isinstance(kv[0], int) else -1):
        add(value, f"Out[{key}]")
    for ns in (getattr(shell, "user_ns", None) or {}, getattr(shell, "user_ns_hidden", None) or {}):
        for key, value in list(ns.items()):
            if isinstance(key, str) and _OUTPUT_NAME.match(key):
                add(value, key)
    displayhook = getattr(shell, "displayhook", None)
    user_ns = getattr(shell, "user_ns", None) or {}
    for attr in ("_", "__", "___"):
        value = getattr(displayhook, attr, None)
        if value is None:
            value = user_ns.get(attr)
        add(value, attr)
    return labels


def last_exceptions(shell: Any) -> List[BaseException]:
    """The last error and its chain: sys.last_exc/last_value and the last execution result's."""
    out: List[BaseException] = []
    last = getattr(shell, "last_execution_result", None)
    for exc in (getattr(sys, "last_exc", None), getattr(sys, "last_value", None),
                getattr(last, "error_in_exec", None)):
        for e in holders.exception_chain(exc):
            if not any(e is o for o in out):
                out.append(e)
    return out


def _tracebacks(excs: List[BaseException], shell: Any) -> List[Any]:
    tbs = [getattr(sys, "last_traceback", None)]
    tbs.extend(getattr(e, "__traceback__", None) for e in excs)
    tbs.append(getattr(getattr(shell, "InteractiveTB", None), "tb", None))
    out: List[Any] = []
    for tb in tbs:
        if isinstance(tb, types.TracebackType) and not any(tb is o for o in out):
            out.append(tb)
    return out


def _hidden(holder: str, label: str, found: Found, named: set, summary: str, warning: Optional[str]) -> Dict[str, Any]:
    by_device = bytes_by_device(found.storages)
    total = sum(by_device.values())
    also = sum(n for k, n in found.storages.items() if k in named)
    if also:
        summary += f" ({_size(also)} of it also held by named variables)"
    return {
        "holder": holder,
        "label": label,
        "bytes_by_device": by_device,
        "total_bytes": total,
        "summary": summary,
        "warning": warning,
    }


# --- describing what still holds an object ----------------------------------------


def describe_referrers(obj: Any, shell: Any) -> str:
    """A short phrase naming who still refers to ``obj`` (bounded; no promise of completeness)."""
    user_ns = getattr(shell, "user_ns", None)
    kinds: List[str] = []
    me = sys._getframe()
    try:
        referrers = gc.get_referrers(obj)
    except Exception:
        referrers = []
    try:
        for ref in referrers[:50]:
            if ref is me or (isinstance(ref, types.FrameType) and ref.f_code.co_filename == __file__):
                continue
            kind = _referrer_kind(ref, obj, user_ns)
            if kind and kind not in kinds:
                kinds.append(kind)
            if len(kinds) >= MAX_REFERRER_KINDS:
                break
    finally:
        del referrers, me
    if not kinds:
        return "still referenced from outside Python's object graph (a view of it, the autograd graph or a C extension)"
    return "still referenced by " + ", ".join(kinds)


def _referrer_kind(ref: Any, obj: Any, user_ns: Any) -> Optional[str]:
    if isinstance(ref, dict):
        keys = [k for k, v in list(ref.items())[:100_000] if v is obj][:3]
        shown = ", ".join(repr(k) if not isinstance(k, str) else k for k in keys)
        if ref is user_ns:
            return f"the user namespace (as {shown})"
        owner = _dict_owner(ref)
        if owner is not None:
            return f"a dict (attribute {shown} of {owner})"
        return f"a dict (key {shown})" if shown else "a dict"
    if isinstance(ref, list):
        return "a list"
    if isinstance(ref, tuple):
        return "a tuple"
    if isinstance(ref, (set, frozenset)):
        return "a set"
    if isinstance(ref, types.FrameType):
        return f"a frame ({ref.f_code.co_name})"
    if isinstance(ref, types.CellType):
        return "a closure"
    attrs = holders._instance_dict(ref)  # 3.11+: an inline __dict__ is reported as its object
    if attrs is not None:
        keys = [k for k, v in list(attrs.items())[:10_000] if v is obj][:3]
        if keys:
            return f"the attribute {', '.join(str(k) for k in keys)} of {type(ref).__name__}"
    return f"a {type(ref).__name__}"


def _dict_owner(d: dict) -> Optional[str]:
    try:
        for ref in gc.get_referrers(d)[:20]:
            if isinstance(ref, types.ModuleType) and getattr(ref, "__dict__", None) is d:
                return f"module {ref.__name__}"
            if getattr(ref, "__dict__", None) is d:
                return type(ref).__name__
    except Exception:
        pass
    return None


# --- CUDA ---------------------------------------------------------------------------


def empty_cuda_cache() -> str:
    """``torch.cuda.empty_cache()`` on every device whose allocator reserves memory.

    Never initialises CUDA; a device without reserved memory is skipped (switching
    to it could create a context there, and it has nothing to return).
    """
    torch = torch_cuda.loaded_torch()
    if torch is None:
        return "skipped_torch_not_imported"
    if not torch_cuda.cuda_initialized(torch):
        return "skipped_cuda_not_initialized"
    for index in range(torch_cuda.initialized_device_count(torch)):
        counters = torch_cuda.allocator_counters(torch, index)
        if counters is None or not counters.reserved:
            continue
        with torch.cuda.device(index):
            torch.cuda.empty_cache()
    return "done"


# --- small helpers -----------------------------------------------------------------


def _type_name(obj: Any) -> str:
    t = type(obj)
    module = getattr(t, "__module__", "") or ""
    name = getattr(t, "__qualname__", t.__name__)
    return name if module in ("builtins", "__main__") else f"{module}.{name}"


def _summary(obj: Any, kind: str, found: Found) -> str:
    try:
        if kind == "tensor":
            return holders.tensor_summary(obj)
        if kind == "ndarray":
            return holders.array_summary(obj)
        if kind == "module":
            return holders.module_summary(obj, found)
        if kind == "optimizer":
            return holders.optimizer_summary(obj, found)
        if kind == "container":
            return f"{type(obj).__name__} of {holders.contents_summary(found)}"
        if kind == "object":
            return f"{type(obj).__name__} holding {holders.contents_summary(found)}"
    except Exception:
        pass
    return type(obj).__name__


def _head(exc: BaseException, limit: int = 80) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    text = text.splitlines()[0] if text else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
