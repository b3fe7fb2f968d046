"""Wire types of the jupyterlab-vram comm, as docs/protocol.md specifies them (version 1).

This module must change together with the frontend's readers in src/protocol/.
It validates requests and builds messages, but sends nothing. The shapes of the
messages, as TypedDicts, are in protocol_types.py, which only type checkers
read, and it is never loaded at run time.

Incoming data is untrusted JSON, so everything here checks types explicitly,
and turns a bad message into a :class:`RequestError` carrying the protocol
error ``code`` and a message that names the problem.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

# The message shapes are needed for annotations only (see protocol_types.py).
if TYPE_CHECKING:
    from .protocol_types import CellMemoryRecord, CellsMessage, ErrorMessage, ReplyMessage

from . import PROTOCOL_VERSION
from . import __version__ as HELPER_VERSION

COMM_TARGET = "jupyterlab-vram"

ErrorCode = Literal[
    "malformed", "unknown_type", "invalid_config", "internal", "refused", "stale_listing", "interrupted"
]
RequestType = Literal[
    "configure",
    "snapshot",
    "ping",
    "history",
    "free_memory",
    "inspect",
    "delete",
    "notebook_names",
    "record_allocations",
    "allocation_sites",
    "allocation_snapshot",
    "stop_process",
    "release_engine",
    "estimate_memory",
    "cluster_action",
]
SampleReason = Literal["initial", "change", "heartbeat", "snapshot"]

REQUEST_TYPES: tuple = (
    "allocation_sites",
    "allocation_snapshot",
    "cluster_action",
    "configure",
    "delete",
    "estimate_memory",
    "free_memory",
    "history",
    "inspect",
    "notebook_names",
    "ping",
    "record_allocations",
    "release_engine",
    "snapshot",
    "stop_process",
)

# These are the limits of the cleanup requests. Each three-number tuple here
# and below holds the minimum, the maximum and the default.
FREE_ACTIONS: tuple = ("gc", "empty_cache")
HIDDEN_HOLDER_KINDS: tuple = ("output_cache", "last_traceback", "last_execution_result")
INSPECT_MAX_ENTRIES = (1, 5000, 200)
INSPECT_CONTAINER_DEPTH = (0, 5, 2)
MAX_DELETE_NAMES = 10_000
MAX_NAME_LENGTH = 1024
MAX_LISTING_ID_LENGTH = 256

# These are the limits of allocation recording (allocation_sites.py), each as
# (minimum, maximum, default). HOST_FRAMES is tracemalloc's frame depth,
# GPU_MAX_ENTRIES the size of PyTorch's allocator history ring buffer, and
# ALLOCATION_MAX_SITES the number of sites listed per device.
HOST_FRAMES = (1, 64, 16)
GPU_MAX_ENTRIES = (1_000, 10_000_000, 100_000)
ALLOCATION_MAX_SITES = (1, 5000, 200)

# stop_process: the seconds to wait after each signal (min, max, default), and the largest
# pid Linux gives.
STOP_TIMEOUT_S = (0.1, 60.0, 5.0)
MAX_PID = 4_194_304

# release_engine: its modes, the seconds to wait for the released processes (min, max,
# default), and the longest kind and name taken.
RELEASE_MODES: tuple = ("list", "release")
RELEASE_TIMEOUT_S = (0.1, 60.0, 10.0)
MAX_RELEASE_KIND_LENGTH = 64

# estimate_memory: how many batch sizes may be asked for and the largest of them, the
# margin's (min, max, default), and the largest CUDA device index.
ESTIMATE_MAX_SIZES = 16
ESTIMATE_MAX_BATCH_SIZE = 1_048_576
ESTIMATE_MARGIN = (0.0, 0.5, 0.1)
ESTIMATE_MAX_DEVICE = 1024
# A planned card's memory (card_bytes): from 1 GiB to 16 TiB.
ESTIMATE_CARD_BYTES = (1 << 30, 1 << 44)

# cluster_action: the actions, the seconds to wait for the workers (min, max, default), and
# the longest engine and cluster names (ClusterState's limits).
CLUSTER_ACTIONS: tuple = ("gc", "empty_cache", "restart", "read_allocators")
CLUSTER_TIMEOUT_S = (1.0, 120.0, 30.0)
MAX_CLUSTER_ENGINE_LENGTH = 64
MAX_CLUSTER_NAME_LENGTH = 1024

# request_id is echoed back in every answer, so it is bounded, so that a
# hostile or buggy frontend cannot make the helper echo megabytes.
MAX_REQUEST_ID_LENGTH = 256


CellStatus = Literal["ok", "error", "interrupted"]


# --- frontend -> kernel ----------------------------------------------------


class RequestError(Exception):
    """A message that the helper cannot act on. It becomes an ``error`` message."""

    def __init__(self, code: ErrorCode, message: str, request_id: str | None = None):
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.request_id = request_id

    def to_message(self) -> ErrorMessage:
        return error_message(self.code, self.message, self.request_id)


class RequestInterrupted(KeyboardInterrupt):
    """An interrupt that stopped a request which had changed something, with a
    message that says what was done.

    It is still a KeyboardInterrupt to anything but the channel, which answers
    it with an ``interrupted`` error.
    """


# This is a NamedTuple rather than a dataclass, for the reason that SamplerConfig
# gives (config.py).
class OpenRequest(NamedTuple):
    """The validated ``data`` of a comm_open."""

    protocol: int | None
    # A partial config, which config.py validates.
    config: Mapping[str, Any] | None


class Request(NamedTuple):
    """A validated request, which is a comm message."""

    type: RequestType
    request_id: str
    # The config is given only with "configure".
    config: Mapping[str, Any] | None = None
    # The validated fields of free_memory, inspect, delete and the other
    # requests that take arguments.
    args: Mapping[str, Any] | None = None


def describe(value: Any, limit: int = 40) -> str:
    """A short repr of an untrusted value for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def type_name(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _readable_request_id(data: Mapping[str, Any]) -> str | None:
    rid = data.get("request_id")
    if isinstance(rid, str) and len(rid) <= MAX_REQUEST_ID_LENGTH:
        return rid
    return None


def parse_request(data: Any) -> Request:
    """Validate a comm message's ``data``, and raise :class:`RequestError` if it is bad."""
    if not isinstance(data, dict):
        raise RequestError("malformed", f"a request must be a JSON object, got {type_name(data)}")
    request_id = _readable_request_id(data)
    if "type" not in data:
        raise RequestError("malformed", "missing field 'type'", request_id)
    kind = data["type"]
    if not isinstance(kind, str):
        raise RequestError("malformed", f"field 'type' must be a string, got {type_name(kind)}", request_id)
    if kind not in REQUEST_TYPES:
        raise RequestError(
            "unknown_type",
            f"unknown request type {describe(kind)} (expected one of {', '.join(REQUEST_TYPES)})",
            request_id,
        )
    if "request_id" not in data:
        raise RequestError("malformed", f"missing field 'request_id' in {kind!r} request")
    raw_id = data["request_id"]
    if not isinstance(raw_id, str):
        raise RequestError("malformed", f"field 'request_id' must be a string, got {type_name(raw_id)}")
    if request_id is None:
        raise RequestError("malformed", f"field 'request_id' is longer than {MAX_REQUEST_ID_LENGTH} characters")
    if kind == "configure":
        if "config" not in data:
            raise RequestError("malformed", "missing field 'config' in 'configure' request", request_id)
        config = data["config"]
        if not isinstance(config, dict):
            raise RequestError("invalid_config", f"config must be an object, got {type_name(config)}", request_id)
        return Request("configure", request_id, config)
    if kind == "free_memory":
        return Request(
            "free_memory", request_id, args={"actions": _actions(data, "actions", request_id, required=True)}
        )
    if kind == "inspect":
        return Request(
            "inspect",
            request_id,
            args={
                "max_entries": _bounded_int(data, "max_entries", INSPECT_MAX_ENTRIES, request_id),
                "container_depth": _bounded_int(data, "container_depth", INSPECT_CONTAINER_DEPTH, request_id),
            },
        )
    if kind == "delete":
        return Request("delete", request_id, args=_delete_args(data, request_id))
    if kind == "record_allocations":
        enabled = data.get("enabled")
        if not isinstance(enabled, bool):
            raise RequestError(
                "malformed",
                f"field 'enabled' of 'record_allocations' must be true or false, got {describe(enabled)}",
                request_id,
            )
        return Request(
            "record_allocations",
            request_id,
            args={
                "enabled": enabled,
                "host_frames": _bounded_int(data, "host_frames", HOST_FRAMES, request_id),
                "gpu_max_entries": _bounded_int(data, "gpu_max_entries", GPU_MAX_ENTRIES, request_id),
            },
        )
    if kind == "allocation_sites":
        return Request(
            "allocation_sites",
            request_id,
            args={
                "max_sites": _bounded_int(data, "max_sites", ALLOCATION_MAX_SITES, request_id),
            },
        )
    if kind == "stop_process":
        return Request("stop_process", request_id, args=_stop_args(data, request_id))
    if kind == "release_engine":
        return Request("release_engine", request_id, args=_release_args(data, request_id))
    if kind == "estimate_memory":
        return Request("estimate_memory", request_id, args=_estimate_args(data, request_id))
    if kind == "cluster_action":
        return Request("cluster_action", request_id, args=_cluster_action_args(data, request_id))
    # The kind was checked against REQUEST_TYPES, which mypy cannot see.
    return Request(kind, request_id)  # type: ignore[arg-type]


def _stop_args(data: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    """pid (1..MAX_PID), start_time (an integer >= 0, required: it names the process) and timeout_s."""
    for key in ("pid", "start_time"):
        if key not in data:
            raise RequestError("malformed", f"missing field {key!r} in 'stop_process' request", request_id)
    pid = _bounded_int(data, "pid", (1, MAX_PID, None), request_id)
    start_time = _bounded_int(data, "start_time", (0, 2**63 - 1, None), request_id)
    return {"pid": pid, "start_time": start_time, "timeout_s": _timeout_s(data, STOP_TIMEOUT_S, request_id)}


def _release_args(data: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    """mode (list or release), kind and name (required to release: the user confirmed that one) and timeout_s."""
    mode = data.get("mode")
    if mode not in RELEASE_MODES:
        raise RequestError("malformed", f"field 'mode' must be 'list' or 'release', got {describe(mode)}", request_id)
    args: dict[str, Any] = {"mode": mode, "kind": None, "name": None}
    for key, limit in (("kind", MAX_RELEASE_KIND_LENGTH), ("name", MAX_NAME_LENGTH)):
        value = data.get(key)
        if value is None and mode == "list":
            continue
        if not isinstance(value, str) or not value or len(value) > limit:
            raise RequestError(
                "malformed",
                f"field {key!r} of a release must be a string of 1 to {limit} characters, got {describe(value)}",
                request_id,
            )
        args[key] = value
    args["timeout_s"] = _timeout_s(data, RELEASE_TIMEOUT_S, request_id)
    return args


def _cluster_action_args(data: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    """engine and cluster (as a ClusterState names them), action and timeout_s of a cluster_action."""
    args: dict[str, Any] = {}
    for key, limit in (("engine", MAX_CLUSTER_ENGINE_LENGTH), ("cluster", MAX_CLUSTER_NAME_LENGTH)):
        value = data.get(key)
        if not isinstance(value, str) or not value or len(value) > limit:
            raise RequestError(
                "malformed",
                f"field {key!r} of 'cluster_action' must be a string of 1 to {limit} characters, got {describe(value)}",
                request_id,
            )
        args[key] = value
    action = data.get("action")
    if action not in CLUSTER_ACTIONS:
        raise RequestError(
            "malformed",
            f"field 'action' must be one of {', '.join(CLUSTER_ACTIONS)}, got {describe(action)}",
            request_id,
        )
    args["action"] = action
    args["timeout_s"] = _timeout_s(data, CLUSTER_TIMEOUT_S, request_id)
    return args


def _estimate_args(data: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    """The names (model and batch required), batch_sizes, margin, device, card_bytes and real_step of an estimate."""
    args: dict[str, Any] = {}
    for key in ("model", "batch", "optimizer", "loss"):
        value = data.get(key)
        if value is None and key in ("optimizer", "loss"):
            args[key] = None
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_LENGTH:
            raise RequestError(
                "malformed",
                f"field {key!r} of 'estimate_memory' must be a name of 1 to {MAX_NAME_LENGTH} characters, "
                f"got {describe(value)}",
                request_id,
            )
        args[key] = value.strip()
    args["batch_sizes"] = _batch_sizes(data, request_id)
    margin = data.get("margin", ESTIMATE_MARGIN[2])
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin <= ESTIMATE_MARGIN[1]:
        raise RequestError(
            "malformed",
            f"field 'margin' must be a number from 0 to {ESTIMATE_MARGIN[1]}, got {describe(margin)}",
            request_id,
        )
    args["margin"] = float(margin)
    args["device"] = (
        None if data.get("device") is None else _bounded_int(data, "device", (0, ESTIMATE_MAX_DEVICE, None), request_id)
    )
    args["card_bytes"] = (
        None
        if data.get("card_bytes") is None
        else _bounded_int(data, "card_bytes", (*ESTIMATE_CARD_BYTES, None), request_id)
    )
    real_step = data.get("real_step", False)
    if not isinstance(real_step, bool):
        raise RequestError(
            "malformed", f"field 'real_step' must be true or false, got {describe(real_step)}", request_id
        )
    args["real_step"] = real_step
    return args


def _batch_sizes(data: Mapping[str, Any], request_id: str) -> list[int] | None:
    """The request's batch_sizes: absent, or 1 to ESTIMATE_MAX_SIZES integers from 1 to ESTIMATE_MAX_BATCH_SIZE."""
    sizes = data.get("batch_sizes")
    if sizes is None:
        return None
    bad = (
        not isinstance(sizes, list)
        or not 1 <= len(sizes) <= ESTIMATE_MAX_SIZES
        or any(isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= ESTIMATE_MAX_BATCH_SIZE for s in sizes)
    )
    if bad:
        raise RequestError(
            "malformed",
            f"field 'batch_sizes' must be an array of 1 to {ESTIMATE_MAX_SIZES} integers from 1 to "
            f"{ESTIMATE_MAX_BATCH_SIZE}, got {describe(sizes)}",
            request_id,
        )
    return sorted(set(sizes))


def _timeout_s(data: Mapping[str, Any], limits: tuple[float, float, float], request_id: str) -> float:
    """The request's ``timeout_s``: a number within ``limits`` (min, max, default), the default when absent."""
    low, high, default = limits
    timeout = data.get("timeout_s", default)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not low <= timeout <= high:
        raise RequestError(
            "malformed",
            f"field 'timeout_s' must be a number from {low:g} to {high:g}, got {describe(timeout)}",
            request_id,
        )
    return float(timeout)


def _string_list(data: Mapping[str, Any], key: str, allowed: tuple, request_id: str, required: bool) -> list[str]:
    if key not in data:
        if required:
            raise RequestError("malformed", f"missing field {key!r} in {data['type']!r} request", request_id)
        return []
    value = data[key]
    if not isinstance(value, list):
        raise RequestError("malformed", f"field {key!r} must be an array, got {type_name(value)}", request_id)
    if len(value) > len(allowed) * 4:
        raise RequestError(
            "malformed", f"field {key!r} has {len(value)} items (expected some of {', '.join(allowed)})", request_id
        )
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or item not in allowed:
            raise RequestError(
                "malformed", f"field {key!r}: {describe(item)} is not one of {', '.join(allowed)}", request_id
            )
        if item not in out:
            out.append(item)
    return out


def _actions(data: Mapping[str, Any], key: str, request_id: str, required: bool) -> list[str]:
    actions = _string_list(data, key, FREE_ACTIONS, request_id, required)
    if required and not actions:
        raise RequestError(
            "malformed", f"field {key!r} must name at least one of {', '.join(FREE_ACTIONS)}", request_id
        )
    return actions


def _bounded_int(data: Mapping[str, Any], key: str, limits: tuple, request_id: str) -> int:
    low, high, default = limits
    if key not in data:
        return default
    value = data[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(
            "malformed", f"field {key!r} must be an integer from {low} to {high}, got {describe(value)}", request_id
        )
    return value


def _delete_args(data: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    if "listing_id" not in data:
        raise RequestError("malformed", "missing field 'listing_id' in 'delete' request", request_id)
    listing_id = data["listing_id"]
    if not isinstance(listing_id, str) or len(listing_id) > MAX_LISTING_ID_LENGTH:
        raise RequestError(
            "malformed",
            f"field 'listing_id' must be a string of at most {MAX_LISTING_ID_LENGTH} characters, got "
            f"{describe(listing_id)}",
            request_id,
        )
    if "names" not in data:
        raise RequestError("malformed", "missing field 'names' in 'delete' request", request_id)
    names = data["names"]
    if not isinstance(names, list):
        raise RequestError("malformed", f"field 'names' must be an array, got {type_name(names)}", request_id)
    hidden = _string_list(data, "hidden", HIDDEN_HOLDER_KINDS, request_id, required=False)
    free = _actions(data, "free", request_id, required=False)
    if len(names) > MAX_DELETE_NAMES:
        raise RequestError(
            "refused",
            f"{len(names)} names: at most {MAX_DELETE_NAMES} may be deleted at once; nothing was deleted",
            request_id,
        )
    for name in names:
        if not isinstance(name, str):
            raise RequestError(
                "refused",
                f"names must be strings, got {type_name(name)} {describe(name)}; nothing was deleted",
                request_id,
            )
        if len(name) > MAX_NAME_LENGTH:
            raise RequestError(
                "refused",
                f"a name of {len(name)} characters (at most {MAX_NAME_LENGTH}); nothing was deleted",
                request_id,
            )
    return {"listing_id": listing_id, "names": list(names), "hidden": hidden, "free": free}


def parse_open(data: Any) -> OpenRequest:
    """Validate a comm_open's ``data``, and raise :class:`RequestError` if it is bad.

    The comm stays usable either way (see channel.py): this only decides which
    ``error`` the frontend is told about.
    """
    if not isinstance(data, dict):
        raise RequestError("malformed", f"comm_open data must be a JSON object, got {type_name(data)}")
    if "type" not in data:
        raise RequestError("malformed", "missing field 'type' in comm_open data (expected 'open')")
    if data["type"] != "open":
        raise RequestError("malformed", f"comm_open data must have type 'open', got {describe(data['type'])}")
    protocol = data.get("protocol")
    if protocol is not None and (not isinstance(protocol, int) or isinstance(protocol, bool)):
        raise RequestError("malformed", f"field 'protocol' must be an integer, got {type_name(protocol)}")
    if protocol is not None and protocol != PROTOCOL_VERSION:
        raise RequestError(
            "malformed",
            f"this helper speaks protocol {PROTOCOL_VERSION}, the frontend asked for {protocol}",
        )
    config = data.get("config")
    if config is not None and not isinstance(config, dict):
        raise RequestError("invalid_config", f"config must be an object, got {type_name(config)}")
    return OpenRequest(protocol, config)


# A page opens one comm per notebook, and a reload or a reconnect replaces a
# few, so a longer list is refused.
MAX_REPLACED_COMMS = 64
MAX_COMM_ID_LENGTH = 256


def replaced_comm_ids(data: Any) -> list[str]:
    """The comm_open's ``replaces``, which lists the ids of comms that the same
    frontend opened before and no longer uses (after a page reloaded in the
    same tab, or a connection lost and made again). The kernel cannot tell
    those from live ones on its own.

    When the field is absent, the list is empty. It raises
    :class:`RequestError` if the field is bad.
    """
    if not isinstance(data, dict) or data.get("replaces") is None:
        return []
    ids = data["replaces"]
    if (
        not isinstance(ids, list)
        or len(ids) > MAX_REPLACED_COMMS
        or not all(isinstance(i, str) and len(i) <= MAX_COMM_ID_LENGTH for i in ids)
    ):
        raise RequestError(
            "malformed",
            f"field 'replaces' must be an array of at most {MAX_REPLACED_COMMS} comm ids "
            f"(strings of at most {MAX_COMM_ID_LENGTH} characters), got {describe(ids)}; no comm was closed",
        )
    return list(ids)


# --- message builders ------------------------------------------------------


def python_version() -> str:
    return "{}.{}.{}".format(*sys.version_info[:3])


def reply_message(request: Request, result: dict[str, Any]) -> ReplyMessage:
    return {
        "type": "reply",
        "request_id": request.request_id,
        "request_type": request.type,
        "result": result,
    }


def error_message(code: ErrorCode, message: str, request_id: str | None = None) -> ErrorMessage:
    return {"type": "error", "request_id": request_id, "code": code, "message": message}


def cells_message(records: list[CellMemoryRecord]) -> CellsMessage:
    return {"type": "cells", "records": records}


__all__ = [
    "COMM_TARGET",
    "HELPER_VERSION",
    "PROTOCOL_VERSION",
    "ErrorCode",
    "OpenRequest",
    "Request",
    "RequestError",
    "RequestInterrupted",
    "parse_open",
    "parse_request",
]
