"""Random and mutated comm messages for the helper, and the check that a kernel
survived them. tests/e2e/test_comm_fuzz_e2e.py and benchmarks/comm_fuzz.py
share this module.

The messages come from a seeded generator, so that a failure can be replayed.
They are random JSON values, and valid requests of every type with one field
somewhere replaced, removed or added. None carries a real listing id, so no mutation
of a delete request can delete anything (a delete needs a listing the
frontend asked for).

Some strings hold lone surrogates, which a browser's JSON can carry (as
``\\ud800`` escapes) but the kernel's packer cannot encode: send the messages
with :func:`ascii_json_packer` as the session's packer.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

from jupyter_client.jsonutil import json_default

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    -(2**70),
    1e308,
    -0.0,
    0.05,
    61,
    "",
    "x",
    "snapshot",
    "inspect",
    "delete",
    "<img src=x onerror=alert(1)>",
    "\u0000",
    "\ud7ff",
    "a" * 5000,
    [],
    [1, "2", None],
    {},
    {"type": "ping"},
    {"request_id": "r"},
    # These are lone surrogates: a high one, a low one, one in surrogateescape's
    # range, and a pair split by a character.
    "\ud800",
    "\udfff",
    "a\udc80b",
    "\ud83dx\ude00",
]

# These are valid requests of every type (docs/protocol.md). Their listing ids
# are made up, so that no mutated delete can delete anything.
TEMPLATES: list[dict[str, Any]] = [
    {"type": "ping", "request_id": "f"},
    {"type": "snapshot", "request_id": "f"},
    {"type": "history", "request_id": "f"},
    {"type": "notebook_names", "request_id": "f"},
    {"type": "configure", "request_id": "f", "config": {"interval_s": 0.5, "heartbeat_s": 5.0}},
    {"type": "free_memory", "request_id": "f", "actions": ["gc", "empty_cache"]},
    {"type": "inspect", "request_id": "f", "max_entries": 50, "container_depth": 1},
    {
        "type": "delete",
        "request_id": "f",
        "listing_id": "0-fuzz",
        "names": ["keep_me"],
        "hidden": ["output_cache"],
        "free": ["gc"],
    },
    {
        "type": "delete",
        "request_id": "\udfff",
        "listing_id": "0-fuzz\ud800",
        "names": ["\ud800", "keep_me"],
        "hidden": [],
        "free": [],
    },
    {"type": "ping", "request_id": "\ud800"},
    {"type": "record_allocations", "request_id": "f", "enabled": False, "host_frames": 16, "gpu_max_entries": 100_000},
    {"type": "record_allocations", "request_id": "f", "enabled": True, "host_frames": 1, "gpu_max_entries": 1_000},
    {"type": "allocation_sites", "request_id": "f", "max_sites": 20},
    {"type": "allocation_snapshot", "request_id": "f"},
]

# This is what the fuzzed kernel holds, and the check is that none of it changed.
NAMESPACE_SETUP = "keep_me = list(range(1000)); also_kept = {'a': 1}; import os"
FINGERPRINT = "sorted((k, id(v)) for k, v in get_ipython().user_ns.items() if not k.startswith('_'))"


def ascii_json_packer(obj: Any) -> bytes:
    """A session packer that sends non-ASCII characters as JSON escapes, as a
    browser's ``JSON.stringify`` does a lone surrogate (jupyter_client's own
    packer raises on one)."""
    return json.dumps(obj, default=json_default, ensure_ascii=True, allow_nan=False).encode("ascii")


def _any_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.6:
        return copy.deepcopy(rng.choice(ODD_VALUES))
    if roll < 0.8:
        return [_any_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = [
        "type",
        "request_id",
        "config",
        "actions",
        "names",
        "listing_id",
        "max_entries",
        "enabled",
        "max_sites",
        "x",
        "\ud800",
    ]
    return {rng.choice(keys): _any_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def _mutated(rng: random.Random, template: dict[str, Any]) -> Any:
    message = copy.deepcopy(template)
    target: Any = message
    for _ in range(rng.randrange(3)):
        inner = [k for k, v in target.items() if isinstance(v, dict)] if isinstance(target, dict) else []
        if not inner:
            break
        target = target[rng.choice(inner)]
    key = rng.choice(list(target)) if target else "extra"
    roll = rng.random()
    if roll < 0.5:
        target[key] = _any_value(rng)
    elif roll < 0.75:
        target.pop(key, None)
    else:
        target[f"{key}_{rng.randrange(10)}"] = _any_value(rng)
    return message


def fuzz_messages(count: int, seed: int = 20261123) -> Iterator[Any]:
    rng = random.Random(seed)
    for _ in range(count):
        yield _any_value(rng) if rng.random() < 0.3 else _mutated(rng, rng.choice(TEMPLATES))
