import pytest

from jupyterlab_vram_helper import PROTOCOL_VERSION, __version__
from jupyterlab_vram_helper.protocol import REQUEST_TYPES, RequestError, parse_open, parse_request


def test_version_constants() -> None:
    assert PROTOCOL_VERSION == 1
    assert __version__ == "0.1.0"


@pytest.mark.parametrize(
    "data,code,needle,rid",
    [
        (None, "malformed", "got null", None),
        ("x", "malformed", "got string", None),
        ([], "malformed", "got array", None),
        ({}, "malformed", "missing field 'type'", None),
        ({"type": None, "request_id": "a"}, "malformed", "'type' must be a string, got null", "a"),
        ({"type": "nope", "request_id": "a"}, "unknown_type", "unknown request type 'nope'", "a"),
        (
            {"type": "nope"},
            "unknown_type",
            "expected one of allocation_sites, allocation_snapshot, cluster_action, configure, delete, "
            "estimate_memory, free_memory, history, inspect, notebook_names, ping, record_allocations, "
            "release_engine, snapshot",
            None,
        ),
        ({"type": "ping"}, "malformed", "missing field 'request_id'", None),
        ({"type": "ping", "request_id": ["a"]}, "malformed", "got array", None),
        ({"type": "ping", "request_id": "x" * 300}, "malformed", "longer than 256", None),
        ({"type": "configure", "request_id": "a"}, "malformed", "missing field 'config'", "a"),
        ({"type": "configure", "request_id": "a", "config": 3}, "invalid_config", "got number", "a"),
    ],
)
def test_bad_requests(data, code, needle, rid) -> None:
    with pytest.raises(RequestError) as info:
        parse_request(data)
    err = info.value.to_message()
    assert err["type"] == "error"
    assert err["code"] == code
    assert needle in err["message"]
    assert err["request_id"] == rid


def test_good_requests() -> None:
    assert parse_request({"type": "ping", "request_id": "1", "extra": 1}).type == "ping"
    r = parse_request({"type": "configure", "request_id": "2", "config": {"interval_s": 2}})
    assert (r.type, r.request_id, r.config) == ("configure", "2", {"interval_s": 2})


def test_long_unknown_type_is_truncated_in_the_message() -> None:
    with pytest.raises(RequestError) as info:
        parse_request({"type": "y" * 10_000, "request_id": "a"})
    # the type is cut short; the list of known types is the rest of the message
    assert len(info.value.message) < 100 + len(", ".join(REQUEST_TYPES))


@pytest.mark.parametrize(
    "data,code",
    [
        (1, "malformed"),
        ({}, "malformed"),
        ({"type": "x"}, "malformed"),
        ({"type": "open", "protocol": 2}, "malformed"),
        ({"type": "open", "protocol": "1"}, "malformed"),
        ({"type": "open", "config": []}, "invalid_config"),
    ],
)
def test_bad_open(data, code) -> None:
    with pytest.raises(RequestError) as info:
        parse_open(data)
    assert info.value.code == code


def test_open_without_protocol_or_config() -> None:
    r = parse_open({"type": "open"})
    assert (r.protocol, r.config) == (None, None)
