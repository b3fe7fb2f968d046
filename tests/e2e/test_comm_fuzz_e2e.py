"""A real kernel's helper under a stream of random and mutated comm messages:
the kernel stays up, nothing reaches the user's output, the namespace is
untouched, and the helper still answers. (benchmarks/comm_fuzz.py sends
10,000 and prints the figures.)"""

from __future__ import annotations

import time

import pytest
from comm_fuzz import FINGERPRINT, NAMESPACE_SETUP, ascii_json_packer, fuzz_messages
from kernel_harness import live_helper_kernel, snapshot_sample

pytestmark = pytest.mark.kernel


def test_the_helper_survives_fuzzed_messages(bootstrap: str) -> None:
    with live_helper_kernel(bootstrap, {"interval_s": 1.0}) as (kernel, comm_id):
        assert kernel.execute(NAMESPACE_SETUP)["status"] == "ok"
        before = kernel.eval(FINGERPRINT)
        kernel.kc.session.pack = ascii_json_packer  # lone surrogates travel as JSON escapes
        sent = 0
        for data in fuzz_messages(600, seed=7):
            kernel.send_comm(comm_id, data)
            sent += 1
        # Every message gets exactly one answer: a reply, or an error saying why.
        deadline = time.monotonic() + 120
        while len(_answers(kernel, comm_id)) < sent and time.monotonic() < deadline:
            kernel.pump(0.2)
        answers = _answers(kernel, comm_id)
        assert len(answers) == sent
        assert [d for d in answers if d.get("code") == "internal"] == []
        assert {d["type"] for d in answers} == {"reply", "error"}
        assert kernel.kc.is_alive()
        assert kernel.eval(FINGERPRINT) == before
        assert kernel.output_messages() == []
        assert snapshot_sample(kernel, comm_id, "after-fuzz", timeout=60)["type"] == "sample"


def _answers(kernel, comm_id: str) -> list:
    return [d for d in kernel.comm_data(comm_id) if d.get("type") in ("reply", "error")]
