"""The cluster_action request is checked in protocol.py like the other requests: bad input is named."""

import pytest

from jupyterlab_vram_helper.protocol import RequestError, parse_request


def request(**fields):
    return {
        "type": "cluster_action",
        "request_id": "r1",
        "engine": "dask",
        "cluster": "tcp://h:1",
        "action": "gc",
        **fields,
    }


def test_a_good_request_gets_the_default_timeout() -> None:
    parsed = parse_request(request())
    assert parsed.type == "cluster_action"
    assert parsed.args == {"engine": "dask", "cluster": "tcp://h:1", "action": "gc", "timeout_s": 30.0}
    restart = parse_request(request(action="restart", timeout_s=120)).args
    assert restart is not None and restart["timeout_s"] == 120.0


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"action": "defrag"}, "field 'action' must be one of gc, empty_cache, restart, read_allocators, got 'defrag'"),
        ({"action": None}, "field 'action' must be one of"),
        ({"action": ["gc"]}, "field 'action' must be one of"),
        ({"engine": ""}, "field 'engine' of 'cluster_action' must be a string of 1 to 64 characters"),
        ({"engine": "x" * 65}, "field 'engine' of 'cluster_action' must be a string of 1 to 64 characters"),
        ({"cluster": 3}, "field 'cluster' of 'cluster_action' must be a string of 1 to 1024 characters, got 3"),
        ({"cluster": "c" * 1025}, "field 'cluster' of 'cluster_action' must be a string of 1 to 1024 characters"),
        ({"timeout_s": 0.5}, "field 'timeout_s' must be a number from 1 to 120, got 0.5"),
        ({"timeout_s": True}, "field 'timeout_s' must be a number from 1 to 120, got True"),
    ],
)
def test_bad_fields_are_named(fields, words) -> None:
    with pytest.raises(RequestError) as info:
        parse_request(request(**fields))
    assert info.value.code == "malformed"
    assert words in str(info.value)
    assert info.value.request_id == "r1"


def test_a_missing_cluster_is_named() -> None:
    data = request()
    del data["cluster"]
    with pytest.raises(RequestError, match="field 'cluster' of 'cluster_action' must be a string"):
        parse_request(data)
