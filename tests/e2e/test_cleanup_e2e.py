"""free_memory / inspect / delete end to end: a real ipykernel, real CPU torch."""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from kernel_harness import Kernel, attach_helper, live_helper_kernel

pytestmark = pytest.mark.kernel

FAST = {"interval_s": 0.5, "heartbeat_s": 2.0}
MB = 1 << 20
_ids = itertools.count()

# What the namespace is: every name and the id() of its value.
FINGERPRINT = "sorted((k, id(v)) for k, v in get_ipython().user_ns.items())"


class Session:
    def __init__(self, kernel: Kernel, comm_id: str):
        self.k = kernel
        self.comm_id = comm_id

    def run(self, code: str) -> dict[str, Any]:
        reply = self.k.execute(code)
        assert reply["status"] == "ok", reply
        return reply

    def request(self, data: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        data = dict(data)
        data.setdefault("request_id", f"c{next(_ids)}")
        return self.k.request(self.comm_id, data, timeout)

    def reply(self, data: dict[str, Any]) -> dict[str, Any]:
        answer = self.request(data)
        assert answer["type"] == "reply", answer
        assert answer["request_type"] == data["type"]
        return answer["result"]

    def inspect(self, **kw: Any) -> dict[str, Any]:
        return self.reply({"type": "inspect", **kw})

    def delete(
        self, listing_id: str, names: list[Any], hidden: Sequence[str] = (), free: Sequence[str] = ()
    ) -> dict[str, Any]:
        return self.request(
            {
                "type": "delete",
                "listing_id": listing_id,
                "names": list(names),
                "hidden": list(hidden),
                "free": list(free),
            }
        )

    def fingerprint(self) -> Any:
        return self.k.eval(FINGERPRINT)


@pytest.fixture(scope="module")
def session(bootstrap: str) -> Iterator[Session]:
    with live_helper_kernel(bootstrap, FAST) as (kernel, comm_id):
        s = Session(kernel, comm_id)
        s.run("import gc, os, sys, weakref, torch, numpy as np")
        yield s


def _entry(result: dict[str, Any], name: str) -> dict[str, Any]:
    matches = [e for e in result["entries"] if e["name"] == name]
    assert matches, [e["name"] for e in result["entries"]]
    return matches[0]


def _hidden(result: dict[str, Any], holder: str) -> dict[str, Any]:
    matches = [h for h in result["hidden"] if h["holder"] == holder]
    assert matches, result["hidden"]
    return matches[0]


def _rss(snapshot: dict[str, Any]) -> int:
    return snapshot["host"]["rss_bytes"]


def test_tensor_echoed_into_the_output_cache_is_deleted_with_its_copies(session: Session) -> None:
    reply = session.run("x = torch.ones(50_000_000); x")  # 200 MB, echoed into Out[n]
    n = reply["execution_count"]
    session.run("1")
    session.run("w = weakref.ref(x)")
    result = session.inspect()
    x = _entry(result, "x")
    assert x["kind"] == "tensor"
    assert x["summary"] == "float32[50000000] cpu"
    assert x["total_bytes"] == 200_000_000
    assert x["bytes_by_device"] == {"cpu": 200_000_000}
    assert x["deletable"] is True and x["refusal"] is None
    assert {f"Out[{n}]", f"_{n}", "__"} <= set(x["output_cache_refs"]), x["output_cache_refs"]
    cache = _hidden(result, "output_cache")
    assert cache["total_bytes"] >= 200_000_000
    assert "also held by named variables" in cache["summary"]
    assert cache["named_bytes_by_device"] == {"cpu": 200_000_000}  # x's: not the cache's to free
    assert result["entries"] == sorted(result["entries"], key=lambda e: -e["total_bytes"])

    answer = session.delete(result["listing_id"], ["x"], free=["gc"])
    assert answer["type"] == "reply", answer
    out = answer["result"]
    assert out["deleted"] == ["x"]
    assert out["refused"] == [] and out["still_alive"] == [] and out["cleared"] == []
    assert _rss(out["before"]) - _rss(out["after"]) > 150 * MB, (out["before"], out["after"])
    assert session.k.eval("w() is None") is True
    ns = "get_ipython().user_ns"
    assert session.k.eval(f"({n} in Out, '_{n}' in {ns}, '__' in {ns}, '__' in get_ipython().user_ns_hidden)") == (
        False,
        False,
        False,
        False,
    )
    session.run("2")  # the output cache still works
    assert session.k.eval("_") == 2
    assert session.k.eval("'x' in get_ipython().user_ns") is False


def test_a_tensor_alive_only_in_the_last_traceback(session: Session) -> None:
    session.run("def f():\n    t = torch.ones(50_000_000)\n    raise RuntimeError('boom')\n")
    reply = session.k.execute("f()")
    assert reply["status"] == "error"
    result = session.inspect()
    tb = _hidden(result, "last_traceback")
    assert 190_000_000 <= tb["total_bytes"] <= 210_000_000, tb
    assert "RuntimeError" in tb["label"]
    assert "f(): t" in tb["summary"]
    assert tb["warning"] and "%debug" in tb["warning"]
    answer = session.delete(result["listing_id"], [], hidden=["last_traceback"], free=["gc"])
    assert answer["type"] == "reply", answer
    out = answer["result"]
    assert out["cleared"] == ["last_traceback"]
    assert _rss(out["before"]) - _rss(out["after"]) > 150 * MB, (out["before"], out["after"])
    # Removed, not None: IPython's %debug tells "no traceback" by hasattr.
    assert session.k.eval("(hasattr(sys, 'last_value'), hasattr(sys, 'last_traceback'))") == (False, False)
    assert not [h for h in session.inspect()["hidden"] if h["holder"] == "last_traceback"]


def test_a_locals_dict_the_user_saved_survives_inspect_and_clearing_the_traceback(session: Session) -> None:
    """On Python <= 3.12 ``locals()`` gives the frame's own f_locals snapshot, which
    the listing reads and the clearing of the traceback empties where nobody else holds it."""
    session.run(
        "saved = []\ndef f():\n    x = torch.ones(1_000_000)\n    saved.append(locals())\n    raise ValueError()\n"
    )
    assert session.k.execute("f()")["status"] == "error"
    result = session.inspect()
    assert session.k.eval("list(saved[0])") == ["x"]  # was [] after the inspect
    answer = session.delete(result["listing_id"], [], hidden=["last_traceback"])
    assert answer["result"]["cleared"] == ["last_traceback"], answer
    assert session.k.eval("(list(saved[0]), saved[0]['x'].numel())") == (["x"], 1_000_000)
    session.run("del saved, f")


def test_the_last_errors_title_runs_no_str_of_the_users(session: Session) -> None:
    session.run(
        "class Loud(Exception):\n"
        "    def __str__(self):\n"
        "        print('EXC STR CALLED')\n"
        "        return 'loud'\n"
        "def g():\n"
        "    t = torch.ones(1_000_000)\n"
        "    raise Loud()\n"
    )
    assert session.k.execute("g()")["status"] == "error"
    start = len(session.k.output_messages())
    tb = _hidden(session.inspect(), "last_traceback")
    assert tb["label"] == "Traceback of the last error (Loud)"
    session.k.pump(0.3)
    printed = [m for m in session.k.output_messages()[start:] if m["msg_type"] == "stream"]
    assert printed == [], printed  # was: EXC STR CALLED, in the notebook
    session.delete(session.inspect()["listing_id"], [], hidden=["last_traceback"])
    session.run("del Loud, g")


def test_a_users_own_underscore_stays_when_the_output_cache_is_cleared(session: Session) -> None:
    session.run("_ = torch.ones(3_000_000)")  # the user's own _ (12 MB); IPython leaves it alone from now on
    session.run("torch.ones(1_000_000)")  # echoed into Out[n] (4 MB)
    assert session.k.eval("_.numel()") == 3_000_000
    cache = _hidden(session.inspect(), "output_cache")
    assert 4_000_000 <= cache["total_bytes"] < 12_000_000, cache  # was 16 MB: the user's _ counted as cache
    answer = session.delete(session.inspect()["listing_id"], [], hidden=["output_cache"])
    assert answer["result"]["cleared"] == ["output_cache"], answer
    assert session.k.eval("_.numel()") == 3_000_000  # was '': reset with IPython's own
    session.run("5")
    assert session.k.eval("(_.numel(), Out[max(Out)])") == (3_000_000, 5)  # IPython still leaves it alone
    session.run("del _")
    session.run("6")
    assert session.k.eval("_") == 6  # IPython's own again


def test_aliases_are_reported_and_not_promised(session: Session) -> None:
    session.run("a = torch.ones(10_000_000)\nb = a\nv = a[:10]\nwa = weakref.ref(a)")
    result = session.inspect()
    a, b, v = (_entry(result, n) for n in ("a", "b", "v"))
    assert set(a["shared_with"]) >= {"b", "v"}
    assert "a" in b["shared_with"] and "a" in v["shared_with"]
    assert a["total_bytes"] + b["total_bytes"] + v["total_bytes"] == 40_000_000  # counted once
    assert a["total_bytes"] == 40_000_000
    # The names listed with 0 say what they keep alive, and where it is counted.
    assert b["shared_bytes"] == v["shared_bytes"] == 40_000_000 and b["counted_under"] == v["counted_under"] == ["a"]
    assert a["shared_bytes"] == 0 and a["counted_under"] == []
    assert b["shared_bytes_by_device"] == v["shared_bytes_by_device"] == {"cpu": 40_000_000}
    fingerprint = dict(session.fingerprint())
    answer = session.delete(result["listing_id"], ["a"], free=["gc"])
    out = answer["result"]
    assert out["deleted"] == ["a"]
    [alive] = out["still_alive"]
    assert alive["name"] == "a"
    assert "b" in alive["reason"], alive
    assert abs(_rss(out["before"]) - _rss(out["after"])) < 30 * MB
    after = dict(session.fingerprint())
    assert "a" not in after and after["b"] == fingerprint["b"] and after["v"] == fingerprint["v"]
    assert session.k.eval("wa() is b") is True
    session.run("del b, v, wa")


def test_containers_modules_optimizers_and_arrays_are_listed(session: Session) -> None:
    session.run(
        "net = torch.nn.Linear(1000, 1000)\n"
        "net(torch.ones(2, 1000)).sum().backward()\n"
        "opt = torch.optim.Adam(net.parameters())\n"
        "opt.step()\n"
        "batch = {'x': torch.zeros(1000, 1000), 'ys': [torch.zeros(500, 1000)]}\n"
        "arr = np.zeros((1000, 1000))\n"
        "arr_view = arr[:10]\n"
    )
    result = session.inspect()
    net = _entry(result, "net")
    params = (1000 * 1000 + 1000) * 4
    assert net["kind"] == "module" and net["total_bytes"] == 2 * params  # params + grads
    assert net["summary"] == "Linear: 2 params, 0 buffers, 2 grads"
    opt = _entry(result, "opt")
    assert opt["kind"] == "optimizer" and opt["total_bytes"] >= 2 * params  # exp_avg + exp_avg_sq (+ steps)
    batch = _entry(result, "batch")
    assert batch["kind"] == "container" and batch["total_bytes"] == 6_000_000
    assert batch["summary"] == "dict of 2 tensors"
    assert _entry(result, "arr")["total_bytes"] == 8_000_000
    assert "arr" in _entry(result, "arr_view")["shared_with"]
    assert _entry(result, "arr_view")["shared_bytes"] == 8_000_000 and _entry(result, "arr_view")["counted_under"] == [
        "arr"
    ]
    shallow = session.inspect(container_depth=1)
    assert _entry(shallow, "batch")["total_bytes"] == 4_000_000  # the nested list is not opened
    answer = session.delete(result["listing_id"], ["net", "opt", "batch", "arr", "arr_view"], free=["gc"])
    assert answer["result"]["deleted"] == ["net", "opt", "batch", "arr", "arr_view"]
    assert answer["result"]["still_alive"] == [], answer["result"]["still_alive"]


def test_free_memory_reports_what_gc_collected(session: Session) -> None:
    session.run("class Node: pass\nn1 = Node(); n2 = Node(); n1.o = n2; n2.o = n1\ndel n1, n2")
    result = session.reply({"type": "free_memory", "actions": ["gc", "empty_cache"]})
    assert result["actions_run"] == ["gc", "empty_cache"]
    assert result["gc_collected"] >= 2
    assert result["empty_cache"] == "skipped_cuda_not_initialized"
    assert _rss(result["before"]) > 0 and _rss(result["after"]) > 0
    assert result["elapsed_ms"] >= 0
    only = session.reply({"type": "free_memory", "actions": ["empty_cache"]})
    assert only["actions_run"] == ["empty_cache"] and only["gc_collected"] is None
    assert session.k.eval("torch.cuda.is_initialized()") is False


def _assert_refused(session: Session, listing_id: str, names: list[Any], needle: str) -> None:
    before = session.fingerprint()
    answer = session.delete(listing_id, names)
    assert answer["type"] == "reply", answer
    out = answer["result"]
    assert out["deleted"] == [] and len(out["refused"]) == 1, out
    assert needle in out["refused"][0]["reason"], out
    assert session.fingerprint() == before


def _assert_error(session: Session, data: dict[str, Any], code: str, needle: str) -> None:
    before = session.fingerprint()
    answer = session.request(data)
    assert answer["type"] == "error" and answer["code"] == code, answer
    assert needle in answer["message"], answer
    assert session.fingerprint() == before


def test_refusals_leave_the_namespace_unchanged(session: Session) -> None:
    session.run("keep = torch.zeros(1000)")
    listing = session.inspect()["listing_id"]
    _assert_refused(session, listing, ["In"], "IPython internal")
    _assert_refused(session, listing, ["_"], "IPython internal")
    _assert_refused(session, listing, ["__builtins__"], "IPython internal")
    _assert_refused(session, listing, ["no_such_name"], "not in the listing")
    _assert_refused(session, listing, ["os"], "a module")
    session.run("keep = torch.zeros(1000)")  # rebound since the listing
    _assert_refused(session, listing, ["keep"], "rebound")
    _assert_error(session, {"type": "delete", "listing_id": listing, "names": [1]}, "refused", "must be strings")
    _assert_error(session, {"type": "delete", "listing_id": listing, "names": ["keep"] * 10_001}, "refused", "10000")
    _assert_error(
        session,
        {"type": "delete", "listing_id": "no-such-listing", "names": ["keep"]},
        "stale_listing",
        "inspect again",
    )
    for _ in range(5):
        session.inspect()
    _assert_error(session, {"type": "delete", "listing_id": listing, "names": ["keep"]}, "stale_listing", "not kept")
    _assert_error(session, {"type": "delete", "names": ["keep"]}, "malformed", "listing_id")
    _assert_error(session, {"type": "free_memory", "actions": ["format_disk"]}, "malformed", "format_disk")
    _assert_error(session, {"type": "inspect", "max_entries": 0}, "malformed", "max_entries")
    assert session.k.eval("keep.shape == (1000,)") is True


# --- fuzz ------------------------------------------------------------------------


def _garbage(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(12 if depth < 3 else 8)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 1, 2**31, -(2**63), 10**30, 5000, 5001])
    if choice == 3:
        return rng.choice([0.5, -0.0, 1e308, 2.0, 3.7])
    if choice == 4:
        return rng.choice(
            [
                "",
                "In",
                "Out",
                "_",
                "__builtins__",
                "os",
                "gc",
                "x" * 300,
                "gc",
                "empty_cache",
                "output_cache",
                "last_traceback",
                "exec('import os')",
                "__import__('os').system('true')",
            ]
        )
    if choice == 5:
        return "".join(rng.choice("ab_\u00e9\u2603\x00\"'\\") for _ in range(rng.randrange(40)))
    if choice == 6:
        return "z" * rng.choice([1000, 1025, 100_000])
    if choice == 7:
        return rng.choice([[], {}, ["gc"], ["gc", "gc"], ["empty_cache", "gc"], ["not_listed"], ["os"]])
    if choice in (8, 9):
        return [_garbage(rng, depth + 1) for _ in range(rng.randrange(6))]
    return {str(_garbage(rng, depth + 1))[:20]: _garbage(rng, depth + 1) for _ in range(rng.randrange(5))}


def _fuzz_request(rng: random.Random, i: int, listing: str) -> Any:
    kind = rng.choice(["delete", "delete", "delete", "inspect", "free_memory", "ping", _garbage(rng)])
    data: dict[str, Any] = {"type": kind, "request_id": f"f{i}"}
    for field in ("listing_id", "names", "hidden", "free", "actions", "max_entries", "container_depth"):
        if rng.random() < 0.6:
            data[field] = _garbage(rng)
    if kind == "delete" and rng.random() < 0.3:
        data["listing_id"] = listing
    if kind == "delete" and rng.random() < 0.3:
        data["names"] = [_garbage(rng) for _ in range(rng.randrange(4))]
    if kind == "free_memory" and "actions" in data and rng.random() < 0.5:
        data.pop("actions")
    if rng.random() < 0.05:
        data["request_id"] = _garbage(rng)  # answered with request_id null, or echoed if a short string
    if rng.random() < 0.03:
        return _garbage(rng)  # not even an object
    return data


def test_fuzz_malformed_requests(session: Session) -> None:
    session.run("keep = torch.zeros(1000)\nimport json")
    listing = session.inspect()["listing_id"]
    before = session.fingerprint()
    rng = random.Random(4)
    start = len(session.k.comm_data(session.comm_id))
    expected_ids = set()
    unnamed = 0
    for i in range(1000):
        data = _fuzz_request(rng, i, listing)
        rid = data.get("request_id") if isinstance(data, dict) else None
        if isinstance(rid, str) and len(rid) <= 256:
            expected_ids.add(rid)
        else:
            unnamed += 1
        session.k.send_comm(session.comm_id, data)
    deadline = time.monotonic() + 240
    while True:
        answers = [d for d in session.k.comm_data(session.comm_id)[start:] if d.get("type") in ("reply", "error")]
        if len(answers) >= 1000 or time.monotonic() > deadline:
            break
        session.k.pump(0.2)
    assert len(answers) == 1000, len(answers)
    answered = [a["request_id"] for a in answers]
    assert expected_ids <= set(answered)
    assert answered.count(None) >= unnamed - sum(1 for r in expected_ids if not r.startswith("f"))
    internal = [a for a in answers if a.get("code") == "internal"]
    assert not internal, internal[:3]
    deleted = [a for a in answers if a["type"] == "reply" and a["result"].get("deleted")]
    assert not deleted, deleted[:3]
    assert session.k.eval("1+1") == 2
    assert session.fingerprint() == before


def _stream_text(session: Session, msg_id: str) -> str:
    return "".join(
        m["content"].get("text", "")
        for m in session.k.output_messages()
        if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
    )


def test_a_run_scripts_other_names_stay_when_one_is_deleted(session: Session, tmp_path: Any) -> None:
    """%run keeps the script's module for its functions: their globals are the user's too."""
    script = tmp_path / "train_script.py"
    script.write_text(
        "import numpy as np\nmodel = np.zeros(2_000_000)\nbackbone = model\n"
        "def train():\n    return float(backbone.sum())\n"
    )
    session.run(f"%run {script}")
    result = session.inspect()
    answer = session.delete(result["listing_id"], ["model"], free=["gc"])
    assert answer["type"] == "reply", answer
    out = answer["result"]
    assert out["deleted"] == ["model"]
    [alive] = out["still_alive"]
    assert "backbone" in alive["reason"], alive
    assert session.k.eval("train()") == 0.0  # backbone, which nobody confirmed, is still there
    session.run("del backbone, train")


def test_debug_after_the_traceback_is_cleared_says_there_is_none(session: Session) -> None:
    reply = session.k.execute("def fail():\n    big = np.zeros(1_000_000)\n    raise ValueError('boom')\nfail()")
    assert reply["status"] == "error"
    result = session.inspect()
    answer = session.delete(result["listing_id"], [], hidden=["last_traceback"])
    assert answer["result"]["cleared"] == ["last_traceback"], answer
    reply = session.k.execute("%debug")
    assert reply["status"] == "ok", reply  # IPython's own answer, not an error inside %debug
    assert "No traceback has been produced" in _stream_text(session, reply["_msg_id"])


def test_an_object_that_raises_when_asked_its_class_does_not_fail_a_delete(session: Session) -> None:
    session.run(
        "class LazyProxy:\n"
        "    __slots__ = ('target', '__weakref__')\n"
        "    def __init__(self, target): self.target = target\n"
        "    def __getattribute__(self, name):\n"
        "        if name == '__class__': raise RuntimeError('not loaded yet')\n"
        "        return object.__getattribute__(self, name)\n"
        "big = np.zeros(1_000_000)\nholder = LazyProxy(big)"
    )
    result = session.inspect()
    answer = session.delete(result["listing_id"], ["big"])
    assert answer["type"] == "reply", answer  # was: an internal error, after big was deleted
    assert answer["result"]["deleted"] == ["big"]
    assert answer["result"]["still_alive"][0]["name"] == "big"
    session.run("del holder, LazyProxy")


def test_a_users_own_numbered_underscores_stay(session: Session) -> None:
    """``_5 = x`` is the user's name, as ``_ = x`` is: neither a delete nor clearing the cache removes it."""
    n = session.run("x = torch.ones(1_000_000); 5")["execution_count"]  # IPython's _n is 5
    m = session.run("x")["execution_count"]  # IPython's _m, Out[m]
    session.run(f"_{n} = x; _99999 = x; w = weakref.ref(x)")  # the user's own, over IPython's and beside it
    result = session.inspect()
    refs = _entry(result, "x")["output_cache_refs"]
    assert f"Out[{m}]" in refs and f"_{n}" not in refs and "_99999" not in refs, refs  # were the cache's
    answer = session.delete(result["listing_id"], ["x"], free=["gc"])
    out = answer["result"]
    assert out["deleted"] == ["x"], answer
    assert session.k.eval(f"(_{n} is w(), _99999 is w(), {m} in Out, '_{m}' in dir())") == (True, True, False, False)
    assert out["still_alive"] and out["still_alive"][0]["name"] == "x", out
    session.run("torch.ones(10)")  # echoed: the output cache holds something to clear
    answer = session.delete(session.inspect()["listing_id"], [], hidden=["output_cache"])
    assert answer["result"]["cleared"] == ["output_cache"], answer
    assert session.k.eval(f"(_{n} is w(), _99999 is w(), len(Out))") == (True, True, 0)  # were deleted
    m = session.run("7")["execution_count"]
    assert session.k.eval(f"(_, Out[{m}], _{m})") == (7, 7, 7)  # the output cache works on
    session.run(f"del _{n}, _99999, w")


def test_with_output_caching_off_every_numbered_underscore_is_the_users(bootstrap: str, tmp_path: Any) -> None:
    """``InteractiveShell.cache_size = 0``: IPython keeps no Out and no _N; a _5 is the user's."""
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text("c.InteractiveShell.cache_size = 0\n")
    kernel = Kernel(env={"IPYTHONDIR": str(tmp_path / "ipython")})
    try:
        s = Session(kernel, attach_helper(kernel, bootstrap, FAST))
        s.run("import weakref, torch")
        assert s.k.eval("get_ipython().displayhook.cache_size") == 0
        s.run("x = torch.ones(1_000_000); x")
        s.run("_5 = x; _7 = torch.ones(1_000_000); w = weakref.ref(x)")
        result = s.inspect()
        assert _entry(result, "x")["output_cache_refs"] == [], _entry(result, "x")
        assert [h for h in result["hidden"] if h["holder"] == "output_cache"] == [], result["hidden"]
        answer = s.delete(result["listing_id"], ["x"], hidden=["output_cache"], free=["gc"])
        out = answer["result"]
        assert out["deleted"] == ["x"] and out["cleared"] == ["output_cache"], answer
        assert s.k.eval("(_5 is w(), '_7' in get_ipython().user_ns)") == (True, True)  # were deleted
        assert out["still_alive"] and out["still_alive"][0]["name"] == "x", out
    finally:
        kernel.shutdown()


def test_the_helper_never_prints(session: Session) -> None:
    """No output of any kind while answering comm requests (last: after everything above ran)."""
    outputs = [m for m in session.k.output_messages() if m["parent_header"].get("msg_type") == "comm_msg"]
    assert outputs == [], outputs[:3]
