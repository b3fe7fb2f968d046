"""The record_allocations and allocation_sites requests: malformed fields and defaults."""

from __future__ import annotations

from typing import Any

import pytest

from jupyterlab_vram_helper.protocol import RequestError, parse_request


@pytest.mark.parametrize(
    "data",
    [
        {"type": "record_allocations", "request_id": "r", "enabled": "yes"},
        {"type": "record_allocations", "request_id": "r", "enabled": True, "host_frames": 65},
        {"type": "record_allocations", "request_id": "r", "enabled": True, "gpu_max_entries": 999},
        {"type": "allocation_sites", "request_id": "r", "max_sites": 0},
    ],
)
def test_bad_fields_are_malformed(data: dict[str, Any]) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request(data)
    assert caught.value.code == "malformed" and caught.value.request_id == "r"


def test_defaults() -> None:
    request = parse_request({"type": "record_allocations", "request_id": "r", "enabled": True})
    assert request.args == {"enabled": True, "host_frames": 16, "gpu_max_entries": 100_000}
    assert parse_request({"type": "allocation_sites", "request_id": "r"}).args == {"max_sites": 200}
