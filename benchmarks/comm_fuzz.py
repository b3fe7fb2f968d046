"""10,000 random and mutated comm messages to a real kernel's helper: does
the kernel survive, does the user namespace stay as it was, does every
message get its one answer, and how fast.

Prints figures; it is not a test (tests/e2e/test_comm_fuzz_e2e.py sends 600
on every run). The messages come from tests/comm_fuzz.py (seeded).

    .venv/bin/python benchmarks/comm_fuzz.py [--messages 10000] [--seed 20261123]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python_helper"))

from comm_fuzz import FINGERPRINT, NAMESPACE_SETUP, ascii_json_packer, fuzz_messages  # noqa: E402
from kernel_harness import bootstrap_code, live_helper_kernel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    with live_helper_kernel(bootstrap_code(), {"interval_s": 1.0}) as (kernel, comm_id):
        assert kernel.execute(NAMESPACE_SETUP)["status"] == "ok"
        before = kernel.eval(FINGERPRINT)
        kernel.kc.session.pack = ascii_json_packer  # lone surrogates travel as JSON escapes
        started = time.perf_counter()
        for data in fuzz_messages(args.messages, args.seed):
            kernel.send_comm(comm_id, data)
        answers = []
        deadline = time.monotonic() + 600
        while len(answers) < args.messages and time.monotonic() < deadline:
            kernel.pump(0.2)
            answers = [d for d in kernel.comm_data(comm_id) if d.get("type") in ("reply", "error")]
        elapsed = time.perf_counter() - started
        alive = kernel.kc.is_alive()
        unchanged = alive and kernel.eval(FINGERPRINT) == before
        outputs = len(kernel.output_messages())
    kinds = collections.Counter(f"{d['type']} {d.get('code') or d.get('request_type')}" for d in answers)
    print(
        f"messages sent: {args.messages} (seed {args.seed}); answered: {len(answers)} in {elapsed:.1f} s "
        f"({len(answers) / elapsed:.0f} per second)"
    )
    print(
        f"kernel alive afterwards: {alive}; user namespace unchanged: {unchanged}; "
        f"output messages in the user's output: {outputs}; internal errors: {kinds.get('error internal', 0)}"
    )
    for kind, count in kinds.most_common():
        print(f"  {count:6d}  {kind}")


if __name__ == "__main__":
    main()
