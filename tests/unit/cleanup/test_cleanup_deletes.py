"""Cleanup's deletes against a fake IPython shell: a name and its output-cache copies removed,
other names that hold the same memory said, lists made again or changed since the listing left
alone, reserved names and other refusals."""

from __future__ import annotations

import sys
import weakref
from typing import Any

import pytest
from cleanup_harness import FakeShell

from jupyterlab_vram_helper.cleanup.cleanup import Cleanup
from jupyterlab_vram_helper.cleanup.listings import reserved_name_reason

real_torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch", "sys_last_restored")


def test_deleting_raw_bytes_frees_them(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["raw"] = bytearray(2 * 2**20)
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["raw"], [], [])
    assert out["deleted"] == ["raw"] and out["refused"] == [] and "raw" not in shell.user_ns


def test_delete_removes_the_name_and_its_output_cache_copies(cleanup: Cleanup, shell: FakeShell) -> None:
    t = real_torch.zeros(1000)
    shell.user_ns["t"] = t
    shell.displayhook.show(2, t)
    shell.displayhook.show(3, "other")
    shell.last_execution_result.result = t
    w = weakref.ref(t)
    del t
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["t"], [], [])
    assert out["deleted"] == ["t"] and out["still_alive"] == [] and out["refused"] == []
    assert w() is None
    assert "_2" not in shell.user_ns and "_2" not in shell.user_ns_hidden and 2 not in shell.user_ns["_oh"]
    assert "__" not in shell.user_ns and shell.displayhook.__ is None
    assert shell.last_execution_result.result is None
    assert shell.user_ns["_3"] == "other"


def test_delete_keeps_other_user_names_and_says_so(cleanup: Cleanup, shell: FakeShell) -> None:
    t = real_torch.zeros(1000)
    shell.user_ns.update({"a": t, "b": t})
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["a"], [], ["gc"])
    assert out["deleted"] == ["a"] and "b" in shell.user_ns
    [alive] = out["still_alive"]
    assert (
        alive["name"] == "a" and "the user namespace (as b)" in alive["reason"] and "shared with b" in alive["reason"]
    )


def test_delete_names_what_else_holds_a_tensor(cleanup: Cleanup, shell: FakeShell) -> None:
    class Keeper:
        t: Any  # set on the instance below

    keeper = Keeper()
    t = real_torch.zeros(1000)
    keeper.t = t
    shell.user_ns["t"] = t
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["t"], [], ["gc"])
    [alive] = out["still_alive"]
    assert "attribute t of Keeper" in alive["reason"], alive


def test_a_list_made_again_at_the_listed_address_is_not_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    # Lists take no weakref, and CPython hands a freed list's address to the
    # next one: a cell run again often rebinds ``batch`` to a new list at the
    # same id(). Made here until the address matches (it does within a few tries).
    shell.user_ns["batch"] = [real_torch.zeros(100)]
    listing = cleanup.inspect()["listing_id"]
    listed_id = id(shell.user_ns["batch"])
    for _ in range(1000):
        shell.user_ns["batch"] = None
        shell.user_ns["batch"] = [real_torch.ones(100)]
        if id(shell.user_ns["batch"]) == listed_id:
            break
    else:
        pytest.skip("CPython did not reuse the list's address here")
    out = cleanup.delete(listing, ["batch"], [], [])
    assert out["deleted"] == [] and out["refused"] == [{"name": "batch", "reason": "rebound since the listing"}]
    assert "batch" in shell.user_ns


def test_a_listed_list_still_holding_what_it_held_is_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    kept = real_torch.zeros(100)
    shell.user_ns["batch"] = [kept]
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["batch"], [], [])
    assert out["deleted"] == ["batch"] and "batch" not in shell.user_ns


def test_a_listed_list_given_other_tensors_since_is_not_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["batch"] = [real_torch.zeros(100)]
    listing = cleanup.inspect()["listing_id"]
    shell.user_ns["batch"].append(real_torch.ones(100))  # the same list, holding more than the listing saw
    out = cleanup.delete(listing, ["batch"], [], [])
    assert out["deleted"] == [] and out["refused"][0]["reason"] == "rebound since the listing"


def test_deleting_a_list_watches_its_tensors(cleanup: Cleanup, shell: FakeShell) -> None:
    inner = real_torch.zeros(100)
    shell.user_ns["box"] = [inner]
    keep = [inner]  # noqa: F841  (holds the tensor)
    del inner
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["box"], [], ["gc"])
    assert out["deleted"] == ["box"] and out["still_alive"] and "a list" in out["still_alive"][0]["reason"]


@pytest.mark.parametrize(
    "name",
    [
        "In",
        "Out",
        "get_ipython",
        "exit",
        "quit",
        "_ih",
        "_oh",
        "_dh",
        "_i",
        "_i7",
        "_ii",
        "_iii",
        "_",
        "__",
        "___",
        "_12",
        "__builtins__",
        "__name__",
    ],
)
def test_reserved_names(name: str) -> None:
    assert reserved_name_reason(name) is not None


def test_user_names_are_not_reserved() -> None:
    # _images, _ids: a user's, though they start as IPython's input history names do
    for name in ("x", "_x", "model_", "i_", "__x", "_1a", "_images", "_ids", "_iiii", "_i7a"):
        assert reserved_name_reason(name) is None, name


def test_refusals(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns.update({"t": real_torch.zeros(10), "gone": real_torch.zeros(10), "mod": sys})
    listing = cleanup.inspect()["listing_id"]
    shell.user_ns["t"] = real_torch.zeros(10)  # rebound
    del shell.user_ns["gone"]
    before = dict(shell.user_ns)
    out = cleanup.delete(listing, ["t", "gone", "mod", "In", "nope", "t"], [], [])
    assert out["deleted"] == []
    reasons = {r["name"]: r["reason"] for r in out["refused"]}
    assert reasons == {
        "t": "rebound since the listing",
        "gone": "no longer defined",
        "mod": "refused: a module",
        "In": "refused: an IPython internal name",
        "nope": "not in the listing",
    }
    assert shell.user_ns == before and all(shell.user_ns[k] is v for k, v in before.items())
