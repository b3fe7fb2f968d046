"""The clean-up requests (free_memory, inspect, delete): defaults, and malformed or refused fields."""

from __future__ import annotations

from typing import Any

import pytest

from jupyterlab_vram_helper.protocol import RequestError, parse_request


def test_parse_cleanup_requests() -> None:
    r = parse_request({"type": "free_memory", "request_id": "r", "actions": ["empty_cache", "gc", "gc"]})
    assert r.args == {"actions": ["empty_cache", "gc"]}
    r = parse_request({"type": "inspect", "request_id": "r"})
    assert r.args == {"max_entries": 200, "container_depth": 2}
    r = parse_request({"type": "inspect", "request_id": "r", "max_entries": 5000.0, "container_depth": 0})
    assert r.args == {"max_entries": 5000, "container_depth": 0}
    r = parse_request({"type": "delete", "request_id": "r", "listing_id": "L", "names": ["a"]})
    assert r.args == {"listing_id": "L", "names": ["a"], "hidden": [], "free": []}


@pytest.mark.parametrize(
    "data,code,needle",
    [
        ({"type": "free_memory"}, "malformed", "actions"),
        ({"type": "free_memory", "actions": []}, "malformed", "at least one"),
        ({"type": "free_memory", "actions": "gc"}, "malformed", "must be an array"),
        ({"type": "free_memory", "actions": ["gc", 1]}, "malformed", "not one of"),
        ({"type": "inspect", "max_entries": 0}, "malformed", "max_entries"),
        ({"type": "inspect", "max_entries": True}, "malformed", "max_entries"),
        ({"type": "inspect", "container_depth": 6}, "malformed", "container_depth"),
        ({"type": "delete", "names": []}, "malformed", "listing_id"),
        ({"type": "delete", "listing_id": 3, "names": []}, "malformed", "listing_id"),
        ({"type": "delete", "listing_id": "L"}, "malformed", "names"),
        ({"type": "delete", "listing_id": "L", "names": {}}, "malformed", "names"),
        ({"type": "delete", "listing_id": "L", "names": [], "hidden": ["everything"]}, "malformed", "hidden"),
        ({"type": "delete", "listing_id": "L", "names": [], "free": ["reboot"]}, "malformed", "free"),
        ({"type": "delete", "listing_id": "L", "names": [None]}, "refused", "strings"),
        ({"type": "delete", "listing_id": "L", "names": ["a"] * 10_001}, "refused", "10000"),
        ({"type": "delete", "listing_id": "L", "names": ["a" * 1025]}, "refused", "1025"),
    ],
)
def test_bad_cleanup_requests(data: dict[str, Any], code: str, needle: str) -> None:
    with pytest.raises(RequestError) as err:
        parse_request({**data, "request_id": "r"})
    assert err.value.code == code and needle in err.value.message and err.value.request_id == "r"
